// TEMPORARY stand-in for the real IndexKey (being written on branch `tree`); removed at merge.
import Foundation
enum IndexKey {
    static func primaryKey(_ k: Int64) -> [UInt8] {
        withUnsafeBytes(of: (UInt64(bitPattern: k) ^ (1 << 63)).bigEndian) { Array($0) }
    }
    static func primaryKey(from b: UnsafeRawBufferPointer) -> Int64 {
        var v: UInt64 = 0
        for i in (b.count - 8)..<b.count { v = (v << 8) | UInt64(b[i]) }
        return Int64(bitPattern: v ^ (1 << 63))
    }
    static func append(_ value: Value, descending: Bool, to out: inout [UInt8]) throws {
        var e: [UInt8] = []
        switch value {
        case .null: e = [0x05]
        case .bool(let b): e = [b ? 0x11 : 0x10]
        case .int(let i): e = [0x20] + primaryKey(i)
        case .double(let d):
            var bits = (d == 0 ? 0.0 : d).bitPattern
            bits = bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
            e = [0x30] + withUnsafeBytes(of: bits.bigEndian) { Array($0) }
        case .date(let d): try append(.double(d.timeIntervalSinceReferenceDate), descending: false, to: &e); e[0] = 0x40
        case .string(let s): e = [0x50]; for b in s.utf8 { e.append(b); if b == 0 { e.append(0xFF) } }; e += [0, 0]
        case .bytes(let bs): e = [0x60]; for b in bs { e.append(b); if b == 0 { e.append(0xFF) } }; e += [0, 0]
        case .uuid(let u): e = [0x70] + withUnsafeBytes(of: u.uuid) { Array($0) }
        case .reference(let r): e = [0x80] + withUnsafeBytes(of: r.table.rawValue.bigEndian) { Array($0) } + primaryKey(r.key)
        case .references: throw StorageError.invalidArgument("to-many reference columns cannot be indexed")
        }
        out += descending ? e.map { ~$0 } : e
    }
    static func stringPrefix(_ prefix: String, descending: Bool) -> [UInt8] {
        var e: [UInt8] = [0x50]; for b in prefix.utf8 { e.append(b); if b == 0 { e.append(0xFF) } }
        return descending ? e.map { ~$0 } : e
    }
}
