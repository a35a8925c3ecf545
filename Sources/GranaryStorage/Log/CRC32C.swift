/// CRC32C (Castagnoli), the checksum of every log frame, snapshot block and file header.
/// `package`, not internal: GranarySync frames its cloud files with the same checksum.
///
/// Pure Swift, slicing-by-8: eight 256-entry tables let the loop consume eight bytes per step with
/// independent lookups, which is several times faster than the byte-at-a-time table.
package enum CRC32C {
    /// The reflected Castagnoli polynomial.
    package static let polynomial: UInt32 = 0x82F6_3B78

    /// The CRC32C of `bytes`; pass the previous result as `crc` to checksum data that arrives in pieces.
    package static func checksum(_ bytes: UnsafeRawBufferPointer, extending crc: UInt32 = 0) -> UInt32 {
        guard var p = bytes.baseAddress else { return crc }
        var n = bytes.count
        var c = ~crc
        crc32cTables.withUnsafeBufferPointer { t in
            while n >= 8 {
                let word = UInt64(littleEndian: p.loadUnaligned(as: UInt64.self))
                let lo = UInt32(truncatingIfNeeded: word) ^ c
                let hi = UInt32(truncatingIfNeeded: word &>> 32)
                c = t[0x700 | Int(lo & 0xFF)] ^ t[0x600 | Int((lo &>> 8) & 0xFF)]
                    ^ t[0x500 | Int((lo &>> 16) & 0xFF)] ^ t[0x400 | Int(lo &>> 24)]
                    ^ t[0x300 | Int(hi & 0xFF)] ^ t[0x200 | Int((hi &>> 8) & 0xFF)]
                    ^ t[0x100 | Int((hi &>> 16) & 0xFF)] ^ t[Int(hi &>> 24)]
                p += 8
                n -= 8
            }
            while n > 0 {
                c = t[Int((c ^ UInt32(p.load(as: UInt8.self))) & 0xFF)] ^ (c &>> 8)
                p += 1
                n -= 1
            }
        }
        return ~c
    }

    /// The CRC32C of `bytes`; pass the previous result as `crc` to checksum data that arrives in pieces.
    package static func checksum(_ bytes: [UInt8], extending crc: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0, extending: crc) }
    }

    /// LevelDB's masking of a stored CRC: the CRC of data that itself contains CRCs is weak, so stored
    /// checksums are rotated and offset before they are written.
    package static func mask(_ crc: UInt32) -> UInt32 {
        ((crc &>> 15) | (crc &<< 17)) &+ 0xA282_EAD8
    }

    /// Reverses `mask`.
    package static func unmask(_ masked: UInt32) -> UInt32 {
        let rotated = masked &- 0xA282_EAD8
        return (rotated &>> 17) | (rotated &<< 15)
    }
}

/// Table k maps a byte to its CRC contribution when followed by k zero bytes; table 0 is the classic table.
private let crc32cTables: [UInt32] = {
    var t = [UInt32](repeating: 0, count: 8 * 256)
    for i in 0..<256 {
        var c = UInt32(i)
        for _ in 0..<8 { c = c & 1 == 1 ? (c &>> 1) ^ CRC32C.polynomial : c &>> 1 }
        t[i] = c
    }
    for k in 1..<8 {
        for i in 0..<256 {
            let previous = t[(k - 1) * 256 + i]
            t[k * 256 + i] = (previous &>> 8) ^ t[Int(previous & 0xFF)]
        }
    }
    return t
}()
