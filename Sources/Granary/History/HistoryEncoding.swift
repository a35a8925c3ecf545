import Foundation

/// The binary form of a transaction's changes in the history table: compact (a batch of 100,000 rows
/// records 100,000 entries) and exact (every value bit for bit, NaN and infinities included, which JSON
/// cannot hold).
///
/// ```
/// changes   := format:u8 (1)  count:varint entity-name*  count:varint change*
/// change    := entity:varint  key:zigzag  kind:u8 (0 insert, 1 update, 2 delete)
///              update: count:varint name*    delete: has-tombstone:u8 [count:varint (name value)*]
/// value     := tag:u8 payload: 0 bool u8 · 1 int zigzag · 2 double 8 bytes · 3 string · 4 bytes
///              (count:varint raw) · 5 date (seconds since 2001 as double) · 6 uuid 16 bytes · 7 nil
/// string    := count:varint UTF-8
/// ```
/// Integers are little-endian; varints are LEB128; zigzag maps signed to unsigned varints.
enum HistoryEncoding {
    static let format: UInt8 = 1

    /// Why stored changes could not be read.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func encode(_ changes: HistoryTable.StoredChanges) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(16 + changes.changes.count * 8)
        out.append(format)
        writeVarint(UInt64(changes.entities.count), to: &out)
        for name in changes.entities { writeString(name, to: &out) }
        writeVarint(UInt64(changes.changes.count), to: &out)
        for change in changes.changes {
            writeVarint(UInt64(change.entity), to: &out)
            writeSigned(change.key, to: &out)
            out.append(UInt8(change.kind.rawValue))
            switch change.kind {
            case .insert: break
            case .update:
                let names = change.updated ?? []
                writeVarint(UInt64(names.count), to: &out)
                for name in names { writeString(name, to: &out) }
            case .delete:
                guard let tombstone = change.tombstone else {
                    out.append(0)
                    continue
                }
                out.append(1)
                writeVarint(UInt64(tombstone.count), to: &out)
                for name in tombstone.keys.sorted() {
                    writeString(name, to: &out)
                    write(tombstone[name]!, to: &out)
                }
            }
        }
        return out
    }

    /// - Throws: `Failure` naming what is wrong and at which byte.
    static func decode(_ bytes: [UInt8]) throws(Failure) -> HistoryTable.StoredChanges {
        var reader = Reader(bytes: bytes)
        let version = try reader.byte()
        guard version == format else {
            throw Failure(description: "the changes are in format \(version); this version of Granary reads format \(format)")
        }
        var stored = HistoryTable.StoredChanges()
        for _ in 0..<(try reader.count()) { stored.entities.append(try reader.string()) }
        let count = try reader.count()
        stored.changes.reserveCapacity(count)
        for position in 0..<count {
            // An index, not a count: it is bounded by the entity names read, not by the bytes left (the last
            // change of a transaction over many entities names an index above the few bytes that follow it).
            let index = try reader.varint()
            guard index < UInt64(stored.entities.count) else {
                throw Failure(description: "change \(position) names entity \(index) of \(stored.entities.count)")
            }
            let entity = Int(index)
            let key = try reader.signed()
            let rawKind = try reader.byte()
            guard let kind = PersistentHistoryChange.ChangeType(rawValue: Int(rawKind)) else {
                throw reader.failure("change \(position) has kind \(rawKind)")
            }
            var change = HistoryTable.StoredChange(entity: entity, key: key, kind: kind)
            switch kind {
            case .insert: break
            case .update:
                var names: [String] = []
                for _ in 0..<(try reader.count()) { names.append(try reader.string()) }
                change.updated = names
            case .delete:
                if try reader.byte() != 0 {
                    var tombstone: [String: Value] = [:]
                    for _ in 0..<(try reader.count()) {
                        let name = try reader.string()
                        tombstone[name] = try reader.value()
                    }
                    change.tombstone = tombstone
                }
            }
            stored.changes.append(change)
        }
        guard reader.offset == bytes.count else { throw reader.failure("\(bytes.count - reader.offset) bytes follow the last change") }
        return stored
    }

    // MARK: Writing

    private static func writeVarint(_ value: UInt64, to out: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    private static func writeSigned(_ value: Int64, to out: inout [UInt8]) {
        writeVarint(UInt64(bitPattern: (value << 1) ^ (value >> 63)), to: &out)
    }

    private static func writeString(_ string: String, to out: inout [UInt8]) {
        let utf8 = string.utf8
        writeVarint(UInt64(utf8.count), to: &out)
        out.append(contentsOf: utf8)
    }

    private static func writeFixed(_ value: UInt64, to out: inout [UInt8]) {
        for shift in stride(from: 0, to: 64, by: 8) { out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    private static func write(_ value: Value, to out: inout [UInt8]) {
        switch value {
        case .bool(let b): out += [0, b ? 1 : 0]
        case .int(let i):
            out.append(1)
            writeSigned(i, to: &out)
        case .double(let d):
            out.append(2)
            writeFixed(d.bitPattern, to: &out)
        case .string(let s):
            out.append(3)
            writeString(s, to: &out)
        case .bytes(let b):
            out.append(4)
            writeVarint(UInt64(b.count), to: &out)
            out += b
        case .date(let d):
            out.append(5)
            writeFixed(d.timeIntervalSinceReferenceDate.bitPattern, to: &out)
        case .uuid(let u):
            out.append(6)
            withUnsafeBytes(of: u.uuid) { out += $0 }
        case .null, .reference, .references:
            // Tombstones hold attribute values only and leave nil ones out; anything else reads as nil.
            out.append(7)
        }
    }

    // MARK: Reading

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        func failure(_ reason: String) -> Failure { Failure(description: "\(reason) (at byte \(offset))") }

        mutating func byte() throws(Failure) -> UInt8 {
            guard offset < bytes.count else { throw failure("the changes end early") }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func varint() throws(Failure) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let b = try byte()
                guard shift < 64 else { throw failure("a varint runs past 64 bits") }
                value |= UInt64(b & 0x7F) << shift
                if b < 0x80 { return value }
                shift += 7
            }
        }

        /// A count or index, which cannot exceed the bytes left (every counted item takes a byte).
        mutating func count() throws(Failure) -> Int {
            let v = try varint()
            guard v <= UInt64(bytes.count - offset) else { throw failure("a count of \(v) exceeds the \(bytes.count - offset) bytes left") }
            return Int(v)
        }

        mutating func signed() throws(Failure) -> Int64 {
            let v = try varint()
            return Int64(bitPattern: v >> 1) ^ -Int64(bitPattern: v & 1)
        }

        mutating func raw(_ n: Int) throws(Failure) -> ArraySlice<UInt8> {
            guard n <= bytes.count - offset else { throw failure("\(n) bytes wanted, \(bytes.count - offset) left") }
            defer { offset += n }
            return bytes[offset..<offset + n]
        }

        mutating func string() throws(Failure) -> String {
            let n = try count()
            return String(decoding: try raw(n), as: UTF8.self)
        }

        mutating func fixed() throws(Failure) -> UInt64 {
            var value: UInt64 = 0
            for (i, b) in try raw(8).enumerated() { value |= UInt64(b) << UInt64(i * 8) }
            return value
        }

        mutating func value() throws(Failure) -> Value {
            let tag = try byte()
            switch tag {
            case 0: return .bool(try byte() != 0)
            case 1: return .int(try signed())
            case 2: return .double(Double(bitPattern: try fixed()))
            case 3: return .string(try string())
            case 4: return .bytes(Array(try raw(try count())))
            case 5: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try fixed())))
            case 6:
                let b = Array(try raw(16))
                return .uuid(UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])))
            case 7: return .null
            default: throw failure("unknown value tag \(tag)")
            }
        }
    }
}
