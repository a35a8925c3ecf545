import Testing
@testable import Granary

/// FIPS 180-4 / NIST CSRC example vectors for SHA-256.
@Suite struct ModelSHA256Tests {
    @Test func emptyMessage() {
        #expect(SHA256.hexDigest("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test func oneBlockMessageAbc() {
        #expect(SHA256.hexDigest("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func twoBlockMessage448Bits() {
        #expect(
            SHA256.hexDigest("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test func twoBlockMessage896Bits() {
        let message = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"
        #expect(SHA256.hexDigest(message) == "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1")
    }

    @Test func oneMillionTimesA() {
        let digest = SHA256.digest([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))
        #expect(SHA256.hex(digest) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func digestIsThirtyTwoBytes() {
        #expect(SHA256.digest("x".utf8).count == 32)
    }

    /// Lengths around the 55/56/64-byte padding boundaries, fed in uneven pieces, match a one-shot digest
    /// of the same bytes; a padding bug shows up as a mismatch between the two paths or against a vector.
    @Test func incrementalUpdatesMatchOneShotAtPaddingBoundaries() {
        for length in [0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 128, 200] {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            var hasher = SHA256()
            var start = 0
            var piece = 1
            while start < bytes.count {
                let end = min(bytes.count, start + piece)
                hasher.update(bytes[start..<end])
                start = end
                piece = piece * 2 + 1
            }
            #expect(hasher.finalize() == SHA256.digest(bytes), "length \(length)")
        }
        // 56 'a's: the padding spills into a second block.
        #expect(
            SHA256.hexDigest(String(repeating: "a", count: 56))
                == "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a")
    }
}
