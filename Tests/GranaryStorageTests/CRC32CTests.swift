import Testing
@testable import GranaryStorage

@Suite struct CRC32CTests {
    /// Bit-at-a-time reference, to check the sliced tables against.
    static func reference(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = ~0
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        }
        return ~crc
    }

    @Test func publishedTestVectors() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
        #expect(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
        #expect(CRC32C.checksum((0..<32).map { UInt8($0) }) == 0x46DD_794E)
        #expect(CRC32C.checksum([]) == 0)
    }

    @Test func matchesBitwiseReferenceForEveryLengthAndAlignment() {
        var rng = SeededGenerator(seed: 1)
        let data = rng.bytes(300)
        for start in 0..<9 {
            for length in 0...(data.count - start) where length < 40 || length % 17 == 0 {
                let slice = Array(data[start..<start + length])
                #expect(CRC32C.checksum(slice) == Self.reference(slice), "start \(start) length \(length)")
            }
        }
    }

    @Test func extendingInPiecesEqualsOneShot() {
        var rng = SeededGenerator(seed: 2)
        let data = rng.bytes(1000)
        let whole = CRC32C.checksum(data)
        for split in [0, 1, 3, 7, 8, 9, 64, 500, 999, 1000] {
            let first = CRC32C.checksum(Array(data[..<split]))
            #expect(CRC32C.checksum(Array(data[split...]), extending: first) == whole, "split at \(split)")
        }
        var crc: UInt32 = 0
        for byte in data { crc = CRC32C.checksum([byte], extending: crc) }
        #expect(crc == whole)
    }

    @Test func maskIsReversibleAndChangesTheValue() {
        var rng = SeededGenerator(seed: 3)
        for crc in [0, 1, 0xFFFF_FFFF, 0xA282_EAD8] + (0..<100).map({ _ in UInt32.random(in: .min ... .max, using: &rng) }) {
            #expect(CRC32C.unmask(CRC32C.mask(crc)) == crc)
            #expect(CRC32C.mask(crc) != crc)
        }
    }
}
