import Foundation

/// An object of a binary property list (`bplist00`), the container format of keyed archives.
///
/// Granary reads and writes the format itself rather than through `PropertyListSerialization`: on Linux,
/// Foundation's reader crashes on some damaged files, and a stored value must never be able to crash the
/// process that reads it. Only what keyed archives use is modelled; sets and non-string keys are refused.
indirect enum BinaryPropertyList: Equatable, Sendable {
    case bool(Bool)
    case int(Int64)
    case real(Double)
    case date(Double)
    case data([UInt8])
    case string(String)
    /// A reference into a keyed archive's `$objects`.
    case uid(UInt64)
    case array([BinaryPropertyList])
    case dictionary([String: BinaryPropertyList])

    /// Why bytes are not a binary property list Granary reads.
    struct FormatError: Error, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }

    // MARK: Reading

    /// The top object of `bytes`.
    /// - Throws: `FormatError` for anything that is not a well-formed binary property list of the
    ///   supported object kinds: bad header or trailer, offsets or references out of range, cycles.
    static func read(_ bytes: [UInt8]) throws(FormatError) -> BinaryPropertyList {
        var reader = try Reader(bytes)
        return try reader.object(at: reader.topObject, depth: 0)
    }

    private struct Reader {
        let bytes: [UInt8]
        let offsetSize: Int
        let referenceSize: Int
        let objectCount: Int
        let topObject: Int
        let offsetTable: Int
        /// Objects already read, so a shared object is read once and a chain of shared objects cannot
        /// make reading exponential.
        var parsed: [Int: BinaryPropertyList] = [:]
        var inProgress: Set<Int> = []

        /// A keyed archive nests four levels (top, `$objects`, an object, its members' references); the
        /// bound keeps a hostile file from exhausting the stack.
        static let maxDepth = 32

        init(_ bytes: [UInt8]) throws(FormatError) {
            guard bytes.count >= 8 + 32, bytes.starts(with: Array("bplist00".utf8)) else {
                throw FormatError(reason: "not a binary property list")
            }
            self.bytes = bytes
            let trailer = bytes.count - 32
            offsetSize = Int(bytes[trailer + 6])
            referenceSize = Int(bytes[trailer + 7])
            guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else {
                throw FormatError(reason: "invalid integer sizes in the trailer")
            }
            let count = Self.unsigned(bytes, at: trailer + 8, size: 8)
            let top = Self.unsigned(bytes, at: trailer + 16, size: 8)
            let table = Self.unsigned(bytes, at: trailer + 24, size: 8)
            // Every object takes at least one byte before the offset table, and the table fits before the trailer.
            guard count > 0, count < UInt64(bytes.count), top < count, table >= 8,
                table <= UInt64(trailer), (UInt64(trailer) - table) / UInt64(offsetSize) >= count else {
                throw FormatError(reason: "the trailer's object count, top object or offset table is out of range")
            }
            objectCount = Int(count)
            topObject = Int(top)
            offsetTable = Int(table)
        }

        static func unsigned(_ bytes: [UInt8], at offset: Int, size: Int) -> UInt64 {
            var value: UInt64 = 0
            for i in 0..<size { value = value << 8 | UInt64(bytes[offset + i]) }
            return value
        }

        /// `size` bytes at `offset`, checked to lie before the offset table.
        func slice(_ offset: Int, _ size: Int) throws(FormatError) -> ArraySlice<UInt8> {
            guard offset >= 8, size >= 0, offset <= offsetTable, size <= offsetTable - offset else {
                throw FormatError(reason: "an object runs past the end of the object data")
            }
            return bytes[offset..<offset + size]
        }

        mutating func object(at index: Int, depth: Int) throws(FormatError) -> BinaryPropertyList {
            if let done = parsed[index] { return done }
            guard index >= 0, index < objectCount else { throw FormatError(reason: "reference \(index) is out of range") }
            guard depth < Self.maxDepth else { throw FormatError(reason: "objects nest deeper than \(Self.maxDepth) levels") }
            guard inProgress.insert(index).inserted else { throw FormatError(reason: "object \(index) contains itself") }
            defer { inProgress.remove(index) }
            // Truncated, not converted: a huge offset must fail the range check, not trap.
            let offset = Int(truncatingIfNeeded: Self.unsigned(bytes, at: offsetTable + index * offsetSize, size: offsetSize))
            let result = try decode(at: offset, depth: depth)
            parsed[index] = result
            return result
        }

        private mutating func decode(at offset: Int, depth: Int) throws(FormatError) -> BinaryPropertyList {
            let marker = try slice(offset, 1).first ?? 0
            let info = Int(marker & 0x0F)
            switch marker >> 4 {
            case 0x0:
                switch marker {
                case 0x08: return .bool(false)
                case 0x09: return .bool(true)
                default: throw FormatError(reason: "unsupported object marker 0x\(String(marker, radix: 16))")
                }
            case 0x1:
                return .int(try integer(at: offset + 1, sizeExponent: info))
            case 0x2:
                guard info == 2 || info == 3 else { throw FormatError(reason: "a real of 2^\(info) bytes") }
                return .real(try real(at: offset + 1, size: 1 << info))
            case 0x3:
                guard marker == 0x33 else { throw FormatError(reason: "a date that is not 8 bytes") }
                return .date(try real(at: offset + 1, size: 8))
            case 0x4:
                let (count, start) = try length(info, at: offset)
                return .data(Array(try slice(start, count)))
            case 0x5:
                let (count, start) = try length(info, at: offset)
                let ascii = try slice(start, count)
                guard ascii.allSatisfy({ $0 < 0x80 }) else { throw FormatError(reason: "an ASCII string with a non-ASCII byte") }
                return .string(String(decoding: ascii, as: UTF8.self))
            case 0x6:
                let (count, start) = try length(info, at: offset)
                guard count <= Int.max / 2 else { throw FormatError(reason: "a string too long to read") }
                let raw = try slice(start, count * 2)
                var units: [UInt16] = []
                units.reserveCapacity(count)
                var i = raw.startIndex
                while i < raw.endIndex {
                    units.append(UInt16(raw[i]) << 8 | UInt16(raw[i + 1]))
                    i += 2
                }
                return .string(String(decoding: units, as: UTF16.self))
            case 0x8:
                guard info < 8 else { throw FormatError(reason: "a UID wider than 8 bytes") }
                return .uid(Self.unsigned(Array(try slice(offset + 1, info + 1)), at: 0, size: info + 1))
            case 0xA:
                let (count, start) = try length(info, at: offset)
                let references = try references(count, at: start)
                var items: [BinaryPropertyList] = []
                items.reserveCapacity(count)
                for reference in references { items.append(try object(at: reference, depth: depth + 1)) }
                return .array(items)
            case 0xD:
                let (count, start) = try length(info, at: offset)
                guard count <= Int.max / 2 else { throw FormatError(reason: "a dictionary too large to read") }
                let references = try references(count * 2, at: start)
                var entries: [String: BinaryPropertyList] = [:]
                for i in 0..<count {
                    guard case .string(let key) = try object(at: references[i], depth: depth + 1) else {
                        throw FormatError(reason: "a dictionary key that is not a string")
                    }
                    entries[key] = try object(at: references[count + i], depth: depth + 1)
                }
                return .dictionary(entries)
            default:
                throw FormatError(reason: "unsupported object marker 0x\(String(marker, radix: 16))")
            }
        }

        /// A count held in the marker's low nibble, or in the integer object after it when the nibble is 0xF.
        private func length(_ info: Int, at offset: Int) throws(FormatError) -> (count: Int, start: Int) {
            if info != 0x0F { return (info, offset + 1) }
            let marker = try slice(offset + 1, 1).first ?? 0
            guard marker >> 4 == 0x1 else { throw FormatError(reason: "a count that is not an integer") }
            let exponent = Int(marker & 0x0F)
            let count = try integer(at: offset + 2, sizeExponent: exponent)
            guard count >= 0, count < Int64(bytes.count) else { throw FormatError(reason: "a count of \(count) is out of range") }
            return (Int(count), offset + 2 + (1 << exponent))
        }

        private func integer(at offset: Int, sizeExponent: Int) throws(FormatError) -> Int64 {
            switch sizeExponent {
            case 0, 1, 2:
                // 1, 2 and 4 byte integers are unsigned.
                let size = 1 << sizeExponent
                return Int64(Self.unsigned(Array(try slice(offset, size)), at: 0, size: size))
            case 3:
                return Int64(bitPattern: Self.unsigned(Array(try slice(offset, 8)), at: 0, size: 8))
            case 4:
                // 16 bytes: written for values above Int64.max; only those that fit are read.
                let raw = Array(try slice(offset, 16))
                let high = Self.unsigned(raw, at: 0, size: 8), low = Int64(bitPattern: Self.unsigned(raw, at: 8, size: 8))
                guard (high == 0 && low >= 0) || (high == UInt64.max && low < 0) else {
                    throw FormatError(reason: "an integer beyond 64 bits")
                }
                return low
            default:
                throw FormatError(reason: "an integer of 2^\(sizeExponent) bytes")
            }
        }

        private func real(at offset: Int, size: Int) throws(FormatError) -> Double {
            let bits = Self.unsigned(Array(try slice(offset, size)), at: 0, size: size)
            return size == 4 ? Double(Float(bitPattern: UInt32(bits))) : Double(bitPattern: bits)
        }

        private func references(_ count: Int, at offset: Int) throws(FormatError) -> [Int] {
            guard count <= Int.max / referenceSize else { throw FormatError(reason: "too many references") }
            let raw = Array(try slice(offset, count * referenceSize))
            return (0..<count).map { Int(truncatingIfNeeded: Self.unsigned(raw, at: $0 * referenceSize, size: referenceSize)) }
        }
    }

    // MARK: Writing

    /// The bytes of a binary property list whose top object is `self`. Dictionary keys are written in
    /// sorted order, so equal lists give equal bytes.
    func bytes() -> [UInt8] {
        var objects: [[UInt8]] = []
        var pending: [(Int, Container)] = []
        // References are filled in after every object has a number: encode children first, then the parent.
        func add(_ object: BinaryPropertyList) -> Int {
            switch object {
            case .array(let items):
                let children = items.map(add)
                objects.append([])
                let index = objects.count - 1
                pending.append((index, .array(children)))
                return index
            case .dictionary(let entries):
                let sorted = entries.sorted { $0.key < $1.key }
                let keyRefs = sorted.map { add(.string($0.key)) }
                let valueRefs = sorted.map { add($0.value) }
                objects.append([])
                let index = objects.count - 1
                pending.append((index, .dictionary(keyRefs, valueRefs)))
                return index
            default:
                objects.append(Self.scalarBytes(object))
                return objects.count - 1
            }
        }
        let top = add(self)
        let referenceSize = Self.byteWidth(UInt64(objects.count))
        for (index, container) in pending {
            switch container {
            case .array(let refs):
                objects[index] = Self.header(0xA, refs.count) + refs.flatMap { Self.bigEndian(UInt64($0), referenceSize) }
            case .dictionary(let keys, let values):
                objects[index] = Self.header(0xD, keys.count) + (keys + values).flatMap { Self.bigEndian(UInt64($0), referenceSize) }
            }
        }
        var out = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(out.count)
            out += object
        }
        let tableOffset = out.count
        let offsetSize = Self.byteWidth(UInt64(tableOffset))
        for offset in offsets { out += Self.bigEndian(UInt64(offset), offsetSize) }
        out += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)]
        out += Self.bigEndian(UInt64(objects.count), 8) + Self.bigEndian(UInt64(top), 8) + Self.bigEndian(UInt64(tableOffset), 8)
        return out
    }

    private enum Container {
        case array([Int])
        case dictionary([Int], [Int])
    }

    private static func scalarBytes(_ object: BinaryPropertyList) -> [UInt8] {
        switch object {
        case .bool(let b): return [b ? 0x09 : 0x08]
        case .int(let i): return integerBytes(i)
        case .real(let d): return [0x23] + bigEndian(d.bitPattern, 8)
        case .date(let d): return [0x33] + bigEndian(d.bitPattern, 8)
        case .data(let bytes): return header(0x4, bytes.count) + bytes
        case .string(let s):
            if s.utf8.allSatisfy({ $0 < 0x80 }) { return header(0x5, s.utf8.count) + Array(s.utf8) }
            let units = Array(s.utf16)
            return header(0x6, units.count) + units.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        case .uid(let u):
            let width = byteWidth(u)
            return [0x80 | UInt8(width - 1)] + bigEndian(u, width)
        case .array, .dictionary:
            return []
        }
    }

    private static func integerBytes(_ value: Int64) -> [UInt8] {
        // Negative integers take 8 bytes: shorter forms are unsigned.
        if value < 0 { return [0x13] + bigEndian(UInt64(bitPattern: value), 8) }
        switch byteWidth(UInt64(value)) {
        case 1: return [0x10] + bigEndian(UInt64(value), 1)
        case 2: return [0x11] + bigEndian(UInt64(value), 2)
        case 3, 4: return [0x12] + bigEndian(UInt64(value), 4)
        default: return [0x13] + bigEndian(UInt64(value), 8)
        }
    }

    private static func header(_ kind: UInt8, _ count: Int) -> [UInt8] {
        if count < 15 { return [kind << 4 | UInt8(count)] }
        return [kind << 4 | 0x0F] + integerBytes(Int64(count))
    }

    /// The fewest bytes (1, 2, 4 or 8 for sizes; any up to 8 for UIDs) that hold `value`.
    private static func byteWidth(_ value: UInt64) -> Int {
        if value <= 0xFF { return 1 }
        if value <= 0xFFFF { return 2 }
        if value <= 0xFFFF_FFFF { return 4 }
        return 8
    }

    private static func bigEndian(_ value: UInt64, _ size: Int) -> [UInt8] {
        (0..<size).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64(size - 1 - $0))) }
    }
}
