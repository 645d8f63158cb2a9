import FlagpoleTestSupport

/// libFuzzer's callback: decodes one input and checks the properties every input must have.
///
/// The property is `DecodeProperties` of Tests/Support, which MutationFuzzTests also checks in a
/// short seeded run inside `swift test`; a broken one stops the fuzzer with the message and
/// libFuzzer saves the input under Scripts/fuzz.d/out/.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))
    let problems = DecodeProperties.problems(of: bytes)
    if !problems.isEmpty { fatalError(problems.joined(separator: "; ")) }
    return 0
}
