/// What one transaction remembers between its statements (`Transaction.memo`, on both backends):
/// a table keeps there what it read or wrote ahead, under a type of its own, for the rest of the
/// transaction. It matters most where each statement is a round trip (PostgreSQL); on SQLite it
/// saves a cached statement's run.
final class TransactionMemo {
    private var values: [ObjectIdentifier: Any] = [:]

    /// What is kept under `Value`, the type a table declares for it.
    subscript<Value>(_ type: Value.Type) -> Value? {
        get { values[ObjectIdentifier(type)] as? Value }
        set { values[ObjectIdentifier(type)] = newValue }
    }

    /// What is kept under `Value`, else `defaultValue`: for changing it in place.
    subscript<Value>(_ type: Value.Type, default defaultValue: @autoclosure () -> Value) -> Value {
        get { self[type] ?? defaultValue() }
        set { self[type] = newValue }
    }
}
