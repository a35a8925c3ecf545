import Foundation
import GranaryStorage

/// Reads the typed columns of one event store row, turning anything unexpected into
/// `EventStoreError.damaged` naming the table, key and column.
struct EventStoreRowReader {
    let row: Row
    let table: String
    let key: Int64
    let path: String

    func damaged(_ reason: String) -> EventStoreError {
        .damaged(path: path, table: table, key: key, reason: reason)
    }

    private func value(_ column: Int) -> Value { column < row.count ? row[column] : .null }

    func int(_ column: Int, _ name: String) throws(EventStoreError) -> Int64 {
        guard case let .int(value) = value(column) else { throw damaged("\(name) is \(value(column)), not an integer") }
        return value
    }

    func bool(_ column: Int, _ name: String) throws(EventStoreError) -> Bool {
        guard case let .bool(value) = value(column) else { throw damaged("\(name) is \(value(column)), not a boolean") }
        return value
    }

    func double(_ column: Int, _ name: String) throws(EventStoreError) -> Double {
        guard case let .double(value) = value(column) else { throw damaged("\(name) is \(value(column)), not a double") }
        return value
    }

    func string(_ column: Int, _ name: String) throws(EventStoreError) -> String {
        guard let value = try optionalString(column, name) else { throw damaged("\(name) is null") }
        return value
    }

    func optionalString(_ column: Int, _ name: String) throws(EventStoreError) -> String? {
        switch value(column) {
        case .null: return nil
        case let .string(value): return value
        case let other: throw damaged("\(name) is \(other), not a string")
        }
    }

    func optionalInt(_ column: Int, _ name: String) throws(EventStoreError) -> Int64? {
        if case .null = value(column) { return nil }
        return try int(column, name)
    }

    func bytes(_ column: Int, _ name: String) throws(EventStoreError) -> Data {
        guard let value = try optionalBytes(column, name) else { throw damaged("\(name) is null") }
        return value
    }

    func optionalBytes(_ column: Int, _ name: String) throws(EventStoreError) -> Data? {
        switch value(column) {
        case .null: return nil
        case let .bytes(value): return Data(value)
        case let other: throw damaged("\(name) is \(other), not bytes")
        }
    }

    /// The JSON in column `column` decoded as `type`.
    func json<T: Decodable>(_ type: T.Type, _ column: Int, _ name: String) throws(EventStoreError) -> T {
        let data = try bytes(column, name)
        do {
            return try EventPayloadCoding.decode(type, from: data, name: "\(table) row \(key) \(name)")
        } catch {
            throw damaged("\(name) does not decode: \(error)")
        }
    }

    /// The ledger value in column `column`: its binary form (`LedgerBinaryCoding`), or the JSON that
    /// rows written by earlier versions hold.
    func ledgerValue<T: Decodable>(_ type: T.Type, _ column: Int, _ name: String,
                                   binary: ([UInt8]) throws(LedgerBinaryCoding.Failure) -> T) throws(EventStoreError) -> T {
        guard case let .bytes(raw) = value(column) else { throw damaged("\(name) is \(value(column)), not bytes") }
        guard LedgerBinaryCoding.isBinary(raw) else { return try json(type, column, name) }
        do {
            return try binary(raw)
        } catch {
            throw damaged("\(name) does not decode \(error)")
        }
    }
}
