import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Swaps two directories in one step, so readers see the old tree or the new one, never a gap.
enum AtomicRename {
    /// Exchanges the entries at `first` and `second`.
    ///
    /// Linux's `renameat2(RENAME_EXCHANGE)` is not exported by the Glibc module, so it is looked
    /// up at run time; where it is missing or the file system refuses it, the old tree is moved
    /// aside and the new one renamed in, which leaves only a moment with no tree at all.
    static func exchange(_ first: URL, _ second: URL) throws {
        #if os(Linux)
            typealias RenameAt2 =
                @convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32
            let renameExchange: UInt32 = 1 << 1
            if let symbol = dlsym(nil, "renameat2") {
                let renameat2 = unsafeBitCast(symbol, to: RenameAt2.self)
                if renameat2(AT_FDCWD, first.path, AT_FDCWD, second.path, renameExchange) == 0 { return }
            }
        #endif
        let aside = second.deletingLastPathComponent().appendingPathComponent(
            ".\(second.lastPathComponent).old-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.moveItem(at: second, to: aside)
        do {
            try FileManager.default.moveItem(at: first, to: second)
        } catch {
            try? FileManager.default.moveItem(at: aside, to: second)
            throw error
        }
        try FileManager.default.moveItem(at: aside, to: first)
    }
}
