import FlagpoleCore
import Foundation
import Testing

/// `Hex`: the one lowercase hex encoder of SHA-256 sums, ETags, API keys, salts and tokens.
@Suite struct HexTests {
    @Test(
        arguments: [
            ([], ""),
            ([0x00], "00"),
            ([0x0F, 0xA0], "0fa0"),
            ([0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF], "0123456789abcdef"),
            ([0xFF, 0x10, 0x09, 0x7F, 0x80], "ff10097f80"),
        ] as [([UInt8], String)])
    func goldenValues(_ bytes: [UInt8], _ hex: String) {
        #expect(bytes.hexEncoded == hex)
        #expect(Hex.encode(bytes) == hex)
        #expect(bytes.withUnsafeBytes { Hex.encode($0) } == hex)
    }

    /// SHA-256 of "abc" (FIPS 180-2, appendix B.1), as the delivery's ETags and manifests write it.
    @Test func aDigest() {
        let digest: [UInt8] = [
            0xBA, 0x78, 0x16, 0xBF, 0x8F, 0x01, 0xCF, 0xEA, 0x41, 0x41, 0x40, 0xDE, 0x5D, 0xAE, 0x22, 0x23,
            0xB0, 0x03, 0x61, 0xA3, 0x96, 0x17, 0x7A, 0x9C, 0xB4, 0x10, 0xFF, 0x61, 0xF2, 0x00, 0x15, 0xAD,
        ]
        #expect(digest.hexEncoded == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    /// Every byte, through the contiguous path and a sequence without contiguous storage.
    @Test func everyByteAlikeOnBothPaths() {
        let bytes = (0...255).map(UInt8.init)
        let expected = bytes.map { String(format: "%02x", $0) }.joined()
        #expect(bytes.hexEncoded == expected)
        #expect(bytes.lazy.map { $0 }.hexEncoded == expected)
        #expect(AnySequence(bytes).hexEncoded == expected)
        #expect(Data(bytes).hexEncoded == expected)
    }
}
