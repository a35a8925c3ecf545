import Foundation

/// One value of a stored row still in its encoded bytes (its tag, then its payload), as
/// `EncodedRow.read(columns:into:)` finds it: for a scan that sums, compares or groups the values of
/// many rows and would rather not make a `Value` (and, for a string, a `String`) of each.
///
/// Equal values have equal encodings (the row encoding has one form per value), so grouping by the
/// bytes groups by the values. Valid only while the row it was read from is: inside the closure a scan
/// hands the row to.
public struct EncodedValue {
    /// The tag and payload; empty for a column the row does not hold, which reads as null.
    let bytes: UnsafeRawBufferPointer

    init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// The value of a column past the end of a row (written before its table gained the column).
    public static var absent: EncodedValue { EncodedValue(bytes: UnsafeRawBufferPointer(start: nil, count: 0)) }

    private var tag: UInt8 { bytes.isEmpty ? RowCodec.Tag.null.rawValue : bytes[0] }

    /// Whether the value is null (or absent).
    public var isNull: Bool { tag == RowCodec.Tag.null.rawValue }

    /// The integer, when the value is one; read without decoding anything else.
    public var integer: Int64? {
        guard tag == RowCodec.Tag.int.rawValue, let base = bytes.baseAddress else { return nil }
        // The extent was checked when the row was read: the varint ends within it.
        var i = 1
        guard let u = EncodedRow.varint(base, &i, bytes.count) else { return nil }
        return Int64(bitPattern: (u >> 1) ^ (0 &- (u & 1)))
    }

    /// The double, when the value is one.
    public var double: Double? {
        guard tag == RowCodec.Tag.double.rawValue, bytes.count == 9 else { return nil }
        return Double(bitPattern: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 1, as: UInt64.self)))
    }

    /// The value, decoded.
    public var value: Value {
        guard !bytes.isEmpty else { return .null }
        var reader = ByteReader(bytes, context: "value")
        // `read(columns:into:)` found the value's extent with the checks decoding makes, so this cannot
        // fail; null stands in should it ever.
        return (try? RowCodec.decodeValue(from: &reader)) ?? .null
    }

    /// The one value with two encodings: a double -0.0, equal to 0.0, which is what hashing and
    /// comparing bytes take it as.
    private var isNegativeZero: Bool {
        tag == RowCodec.Tag.double.rawValue && bytes.count == 9
            && bytes.loadUnaligned(fromByteOffset: 1, as: UInt64.self) == (-0.0 as Double).bitPattern.littleEndian
    }

    /// The encoding of 0.0, for -0.0.
    private static let zero: [UInt8] = {
        var writer = ByteWriter(capacity: 9)
        RowCodec.encode(.double(0), into: &writer)
        return writer.bytes
    }()

    /// A hash of the encoding, mixed into `seed`: cheap (eight bytes a step), the same in every process,
    /// and not hardened against chosen inputs, so for the short-lived tables of one scan (groups).
    public func hashed(into seed: UInt64) -> UInt64 {
        guard !bytes.isEmpty else { return Self.mix(seed ^ UInt64(RowCodec.Tag.null.rawValue) ^ 0x100) }
        if isNegativeZero { return Self.zero.withUnsafeBytes { EncodedValue(bytes: $0).hashed(into: seed) } }
        var h = seed ^ (UInt64(bytes.count) &* 0x9E37_79B9_7F4A_7C15)
        var i = 0
        while i + 8 <= bytes.count {
            h = Self.mix(h ^ UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)))
            i += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while i < bytes.count {
            tail |= UInt64(bytes[i]) << shift
            shift += 8
            i += 1
        }
        return Self.mix(h ^ tail ^ 0x100)
    }

    private static func mix(_ x: UInt64) -> UInt64 {
        var z = x &* 0xBF58_476D_1CE4_E5B9
        z ^= z >> 31
        z = z &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 29)
    }

    /// Appends the encoding (a null's for an absent value) to `buffer`, to keep a copy that outlives the
    /// row.
    public func append(to buffer: inout [UInt8]) {
        if bytes.isEmpty {
            buffer.append(RowCodec.Tag.null.rawValue)
        } else if isNegativeZero {
            buffer.append(contentsOf: Self.zero)
        } else {
            buffer.append(contentsOf: bytes)
        }
    }

    /// How many bytes `append(to:)` appends.
    public var encodedCount: Int { bytes.isEmpty ? 1 : bytes.count }

    /// Whether `buffer` holds this value's encoding at `offset` (as `append(to:)` would have put it).
    public func isEncoded(in buffer: [UInt8], at offset: Int) -> Bool {
        guard !bytes.isEmpty else { return offset < buffer.count && buffer[offset] == RowCodec.Tag.null.rawValue }
        guard offset + bytes.count <= buffer.count else { return false }
        if isNegativeZero { return buffer[offset..<offset + bytes.count].elementsEqual(Self.zero) }
        return buffer.withUnsafeBytes { stored in memcmp(stored.baseAddress! + offset, bytes.baseAddress!, bytes.count) == 0 }
    }
}

extension EncodedRow {
    /// Finds the values of some columns, stepping over the others without decoding them (a string
    /// passed is never made): `values[i]` gets column `columns[i]`'s, `.absent` when the row ends
    /// before it. `columns` must be ascending; `values` must hold as many elements.
    ///
    /// What an aggregate's scan reads each row with: one call per row, no value made.
    /// - Throws: `StorageError.corruption` naming the table and key if the bytes are not a valid row (up
    ///   to the last column read).
    public func read(columns: [Int], into values: inout [EncodedValue]) throws {
        if Self.quickRead(bytes, columns, &values) { return }
        // Damaged bytes (or a row the quick read does not follow): read again with every check, which
        // says what is wrong and where.
        try located {
            var reader = ByteReader(bytes, context: "row")
            let count = try reader.readVarint()
            // Every value takes at least one byte, which bounds a damaged count.
            guard count <= UInt64(reader.remaining) else { throw reader.corruption("column count \(count) exceeds row size") }
            var column = 0
            for (i, wanted) in columns.enumerated() {
                guard wanted < Int(count) else {
                    for j in i..<columns.count { values[j] = .absent }
                    return
                }
                while column < wanted {
                    try RowCodec.skipValue(from: &reader)
                    column += 1
                }
                let start = reader.offset
                try RowCodec.skipValue(from: &reader)
                values[i] = EncodedValue(bytes: UnsafeRawBufferPointer(rebasing: bytes[start..<reader.offset]))
                column += 1
            }
        }
    }

    /// `read(columns:into:)` on a pointer, bounds checked once per step rather than through `ByteReader`
    /// per byte: the scan of every row of a table spent most of its time in those checks. False, with
    /// `values` unfinished, for anything it does not expect (a length past the end, an unknown tag), for
    /// the checked read to report.
    private static func quickRead(_ bytes: UnsafeRawBufferPointer, _ columns: [Int], _ values: inout [EncodedValue]) -> Bool {
        guard let base = bytes.baseAddress, values.count >= columns.count else { return false }
        // Written through a buffer: the array's uniqueness check once, not per value.
        return values.withUnsafeMutableBufferPointer { values in quickRead(base, bytes.count, columns, values) }
    }

    private static func quickRead(_ base: UnsafeRawPointer, _ end: Int, _ columns: [Int], _ values: UnsafeMutableBufferPointer<EncodedValue>) -> Bool {
        var i = 0
        guard let count = varint(base, &i, end), count <= UInt64(end - i) else { return false }
        var column = 0
        for (k, wanted) in columns.enumerated() {
            guard wanted < Int(count) else {
                for j in k..<columns.count { values[j] = .absent }
                return true
            }
            while column < wanted {
                guard skip(base, &i, end) else { return false }
                column += 1
            }
            let start = i
            guard skip(base, &i, end) else { return false }
            values[k] = EncodedValue(bytes: UnsafeRawBufferPointer(start: base + start, count: i - start))
            column += 1
        }
        return true
    }

    /// A varint at `i`, moving `i` past it; nil when it runs past `end` or past 64 bits.
    @inline(__always)
    static func varint(_ base: UnsafeRawPointer, _ i: inout Int, _ end: Int) -> UInt64? {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while i < end {
            let b = base.load(fromByteOffset: i, as: UInt8.self)
            i += 1
            if shift == 63 && b > 1 { return nil }
            result |= UInt64(b & 0x7f) << shift
            if b & 0x80 == 0 { return result }
            shift += 7
            if shift > 63 { return nil }
        }
        return nil
    }

    /// Moves `i` past a reference's table and key; false when they do not fit or the table is out of
    /// range (which decoding refuses).
    @inline(__always)
    private static func reference(_ base: UnsafeRawPointer, _ i: inout Int, _ end: Int) -> Bool {
        guard let table = varint(base, &i, end), table <= UInt64(UInt32.max) else { return false }
        return varint(base, &i, end) != nil
    }

    /// Moves `i` past the value at it (as `RowCodec.skipValue` does); false when it does not fit.
    @inline(__always)
    private static func skip(_ base: UnsafeRawPointer, _ i: inout Int, _ end: Int) -> Bool {
        guard i < end else { return false }
        let tag = base.load(fromByteOffset: i, as: UInt8.self)
        i += 1
        var payload: Int
        switch tag {
        case RowCodec.Tag.null.rawValue, RowCodec.Tag.boolFalse.rawValue, RowCodec.Tag.boolTrue.rawValue:
            return true
        case RowCodec.Tag.int.rawValue:
            return varint(base, &i, end) != nil
        case RowCodec.Tag.double.rawValue, RowCodec.Tag.date.rawValue:
            payload = 8
        case RowCodec.Tag.string.rawValue, RowCodec.Tag.bytes.rawValue:
            guard let n = varint(base, &i, end), n <= UInt64(end - i) else { return false }
            payload = Int(n)
        case RowCodec.Tag.uuid.rawValue:
            payload = 16
        case RowCodec.Tag.reference.rawValue:
            return reference(base, &i, end)
        case RowCodec.Tag.references.rawValue:
            guard let n = varint(base, &i, end), n <= UInt64(end - i) else { return false }
            for _ in 0..<n where !reference(base, &i, end) { return false }
            return true
        default:
            return false
        }
        guard payload <= end - i else { return false }
        i += payload
        return true
    }
}
