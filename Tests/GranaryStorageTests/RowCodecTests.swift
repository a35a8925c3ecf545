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

    @Test func missingTrailingColumnsReadAsNull() {
        let row: Row = [.int(1)]
        #expect(row[5] == .null)
    }
}
