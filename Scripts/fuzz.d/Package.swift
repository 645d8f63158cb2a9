// swift-tools-version:6.1
// The libFuzzer harnesses of Scripts/fuzz. A package of its own, depending on the main one by
// path, so that `swift build` and `swift test` of the main package never build it (it needs
// `-sanitize=fuzzer`, which links libFuzzer's own `main`).
import Foundation
import PackageDescription

// A path dependency's identity is its folder's name, whatever the clone is called.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
let flagpole = root.lastPathComponent.lowercased()

let package = Package(
    name: "flagpole-fuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: root.path),
    ],
    targets: [
        // Parse, validate, render and re-parse any bytes; crashes on a broken DecodeProperties.
        .executableTarget(
            name: "FuzzDecode",
            dependencies: [.product(name: "FlagpoleTestSupport", package: flagpole)]
        ),
    ],
    swiftLanguageModes: [.v6]
)
