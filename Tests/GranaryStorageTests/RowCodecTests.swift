import Foundation
import Testing
@testable import GranaryStorage

@Suite struct RowCodecTests {
    @Test func everyValueTypeRoundTrips() throws {
        let row: Row = [
            .null, .bool(true), .bool(false), .int(-1), .int(.max), .int(.min), .double(-0.5),
            .string("héllo"), .bytes([0, 255, 7]), .date(Date(timeIntervalSinceReferenceDate: 12.25)),
            .uuid(UUID()), .reference(RowReference(table: TableID(rawValue: 3), key: -9)),
            .references([RowReference(table: TableID(rawValue: 1), key: 1), RowReference(table: TableID(rawValue: 2), key: 1 << 40)]),
        ]
        let bytes = RowCodec.encode(row)
        #expect(try RowCodec.decode(bytes) == row)
    }

    @Test func truncatedRowThrowsCorruption() throws {
        let bytes = RowCodec.encode(["a long enough string", .int(12345)])
        for cut in 0..<bytes.count {
            #expect(throws: StorageError.self) { try RowCodec.decode(Array(bytes[0..<cut])) }
        }
    }

    /// A row read value by value, and into a reused row, gives what decoding it whole gives; damaged
    /// bytes are corruption naming the table and key either way, never a partial row.
    @Test func anEncodedRowReadsAlikeEveryWayAndNamesItsRowWhenDamaged() throws {
        let row: Row = [.int(2), .int(7), .string("Ada"), .null, .references([RowReference(table: TableID(rawValue: 1), key: 4)])]
        let bytes = RowCodec.encode(row)
        var reused: Row = [.string("left over"), .int(1), .int(2), .int(3), .int(4), .int(5), .int(6)]
        try bytes.withUnsafeBytes { raw in
            let encoded = EncodedRow(bytes: raw, table: "Employee", key: 42)
            var seen: [Value] = []
            var values = try encoded.values()
            #expect(values.count == row.count)
            while let value = try values.next() {
                #expect(values.column == seen.count + 1)
                seen.append(value)
            }
            #expect(Row(seen) == row)
            try encoded.decode(into: &reused)
            #expect(reused == row)
            #expect(try encoded.decode() == row)
        }
        for cut in 0..<bytes.count {
            Array(bytes[0..<cut]).withUnsafeBytes { raw in
                let encoded = EncodedRow(bytes: raw, table: "Employee", key: 42)
                let readValues = {
                    var values = try encoded.values()
                    while try values.next() != nil {}
                }
                for read in [readValues, { _ = try encoded.decode() }] {
                    #expect {
                        try read()
                    } throws: { error in
                        guard case StorageError.corruption(let file, _, _) = error else { return false }
                        return file == "table 'Employee' row 42"
                    }
                }
            }
        }
    }

    /// Skipping a value steps over exactly what reading it would, for every type, so that an aggregate
    /// reading some columns and skipping the others gets the same values; a skip into damaged bytes is
    /// corruption naming the row, and past the last value it says so.
    @Test func skippingAValueLandsWhereReadingItWould() throws {
        let row: Row = [
            .null, .bool(true), .bool(false), .int(-1), .int(.max), .double(-0.5), .string("héllo"), .bytes([0, 255, 7]),
            .date(Date(timeIntervalSinceReferenceDate: 12.25)), .uuid(UUID()), .reference(RowReference(table: TableID(rawValue: 3), key: -9)),
            .references([RowReference(table: TableID(rawValue: 1), key: 1), RowReference(table: TableID(rawValue: 2), key: 1 << 40)]),
            .int(77),
        ]
        let bytes = RowCodec.encode(row)
        try bytes.withUnsafeBytes { raw in
            let encoded = EncodedRow(bytes: raw, table: "Employee", key: 42)
            // Read column `kept`, skip the others.
            for kept in row.indices {
                var values = try encoded.values()
                for column in row.indices {
                    if column == kept {
                        #expect(try values.next() == row[column])
                    } else {
                        #expect(try values.skip())
                    }
                }
                #expect(try values.skip() == false)
            }
        }
        for cut in 1..<bytes.count {
            Array(bytes[0..<cut]).withUnsafeBytes { raw in
                let encoded = EncodedRow(bytes: raw, table: "Employee", key: 42)
                #expect {
                    var values = try encoded.values()
                    while try values.skip() {}
                } throws: { error in
                    guard case StorageError.corruption(let file, _, _) = error else { return false }
                    return file == "table 'Employee' row 42"
                }
            }
        }
    }

    /// Reading chosen columns finds each value's bytes, which give the value, its integer or double in
    /// place, and a hash and encoding that tell equal values (-0.0 and 0.0 included) from unequal ones;
    /// columns past the end of the row are absent, and read as null.
    @Test func chosenColumnsAreFoundInTheirBytes() throws {
        let row: Row = [.int(7), .string("skipped"), .double(-0.0), .string("kept"), .int(-300), .double(2.5)]
        let bytes = RowCodec.encode(row)
        let zero = RowCodec.encode([.double(0)])
        try bytes.withUnsafeBytes { raw in
            let encoded = EncodedRow(bytes: raw, table: "T", key: 1)
            var values = [EncodedValue](repeating: .absent, count: 5)
            try encoded.read(columns: [2, 3, 4, 5, 9], into: &values)
            #expect(values.map(\.value) == [.double(-0.0), .string("kept"), .int(-300), .double(2.5), .null])
            #expect(values[2].integer == -300 && values[2].double == nil)
            #expect(values[3].double == 2.5 && values[3].integer == nil)
            #expect(values[4].isNull && !values[1].isNull)
            var copy: [UInt8] = []
            for value in values { value.append(to: &copy) }
            var offset = 0
            for value in values {
                #expect(value.isEncoded(in: copy, at: offset))
                offset += value.encodedCount
            }
            #expect(offset == copy.count)
            #expect(!values[2].isEncoded(in: copy, at: values[0].encodedCount))
            try zero.withUnsafeBytes { zeroRaw in
                var positive = [EncodedValue.absent]
                try EncodedRow(bytes: zeroRaw, table: "T", key: 2).read(columns: [0], into: &positive)
                #expect(positive[0].hashed(into: 1) == values[0].hashed(into: 1))
                var stored: [UInt8] = []
                positive[0].append(to: &stored)
                #expect(values[0].isEncoded(in: stored, at: 0))
            }
            #expect(values[1].hashed(into: 1) != values[3].hashed(into: 1))
            #expect(EncodedValue.absent.hashed(into: 5) == values[4].hashed(into: 5))
        }
    }

    /// Damaged rows read by chosen columns: every truncation is corruption naming the row, and after any
    /// damage the values found are those reading the row value by value finds, or both refuse it.
    @Test func chosenColumnsOfDamagedRowsReadAsValueByValueDoes() throws {
        let row: Row = [.int(3), .int(1), .string("a longer string"), .references([RowReference(table: TableID(rawValue: 2), key: 9)]),
                        .reference(RowReference(table: TableID(rawValue: 1), key: 5)), .double(1.5), .uuid(UUID()), .int(-70_000)]
        let bytes = RowCodec.encode(row)
        let columns = Array(row.indices)
        for cut in 0..<bytes.count {
            Array(bytes[0..<cut]).withUnsafeBytes { raw in
                var values = [EncodedValue](repeating: .absent, count: columns.count)
                #expect {
                    try EncodedRow(bytes: raw, table: "T", key: 8).read(columns: columns, into: &values)
                } throws: { error in
                    guard case StorageError.corruption(let file, _, _) = error else { return false }
                    return file == "table 'T' row 8"
                }
            }
        }
        var state: UInt64 = 0x5EED
        for _ in 0..<3_000 {
            var damaged = bytes
            for _ in 0..<1 + Int(state % 3) {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                damaged[Int(state >> 33) % damaged.count] = UInt8(truncatingIfNeeded: state >> 17)
            }
            damaged.withUnsafeBytes { raw in
                let encoded = EncodedRow(bytes: raw, table: "T", key: 8)
                var values = [EncodedValue](repeating: .absent, count: columns.count)
                let read = Result { try encoded.read(columns: columns, into: &values) }
                var oneByOne: [Value] = []
                let walked = Result {
                    var iterator = try encoded.values()
                    // Only the values read: neither checks what follows the last one.
                    while oneByOne.count < min(columns.count, iterator.count), let value = try iterator.next() { oneByOne.append(value) }
                }
                switch (read, walked) {
                case (.success, .success):
                    let found = values.map(\.value)
                    #expect(Array(found.prefix(oneByOne.count)) == oneByOne)
                    #expect(found.dropFirst(oneByOne.count).allSatisfy { $0 == .null })
                case (.failure, .failure):
                    break
                default:
                    Issue.record("read(columns:) \(read), value by value \(walked) for \(damaged)")
                }
            }
        }
    }

    @Test func missingTrailingColumnsReadAsNull() {
        let row: Row = [.int(1)]
        #expect(row[5] == .null)
    }
}
