import Foundation
import Granary

/// A large value's bytes under the name of the data file it travels as (M15).
struct DataFileRecord: Hashable, Sendable {
    /// A `CloudFileName.data`: the SHA-256 of `bytes` and the store that wrote it.
    var name: CloudFileName
    var bytes: Data
}

/// The rule of M15 for `Data` values (binaryData, and transformable attributes, which travel as the
/// bytes the store holds): up to `SyncConstants.inlineDataLimit` bytes inline, larger ones as a data
/// file named by its content and writer, `<sha256>_<store>.gsdata`.
///
/// Naming by content makes a data file self-checking (a damaged or truncated copy does not hash to its
/// name) and lets a device compare a value it reads from the store with a reference without loading the
/// referenced bytes. The writer in the name keeps each device's files its own to write and remove.
enum LargeValues {
    /// Whether `data` travels as a data file rather than inline.
    static func isLarge(_ data: Data) -> Bool { data.count > SyncConstants.inlineDataLimit }

    /// The SHA-256 of `data` as 64 lowercase hex digits.
    static func sha256(_ data: Data) -> String { SHA256.hex(SHA256.digest(data)) }

    /// The data file `writer` stores `data` as.
    static func record(of data: Data, writer: StoreID) -> DataFileRecord {
        DataFileRecord(name: .data(sha256: sha256(data), store: writer), bytes: data)
    }

    /// The bytes of the cloud file of `file`: the value as the payload of a data-kind `EventFile`, so
    /// that a data file is framed, checksummed and compressed as every other file is.
    static func fileBytes(of file: DataFileRecord) -> Data {
        EventFile(kind: .data, payload: file.bytes).encoded()
    }

    /// The value the cloud file `bytes` of `name` holds, checked: the frame and checksum, the kind, and
    /// that the value hashes to the name.
    /// - Throws: `EventFileError` naming the file for anything else (a damaged copy, not yet arrived).
    static func value(inFile bytes: Data, name: CloudFileName) throws(EventFileError) -> Data {
        let file = try EventFile(decoding: bytes, name: name.fileName)
        guard file.kind == .data else {
            throw .corrupt(name: name.fileName, offset: 6, reason: "a \(file.kind) file, not a data file")
        }
        guard case let .data(hash, _) = name, sha256(file.payload) == hash else {
            throw .corrupt(name: name.fileName, offset: EventFile.headerSize, reason: "the value does not hash to the file's name")
        }
        return file.payload
    }

    /// `changes` with every large `.data` value replaced by a reference to its data file, and those files.
    static func extract(_ changes: [ObjectChange], writer: StoreID) -> (changes: [ObjectChange], files: [DataFileRecord]) {
        var files: [CloudFileName: DataFileRecord] = [:]
        var result = changes
        for index in result.indices {
            for (name, value) in result[index].attributes {
                guard case let .data(bytes)? = value, isLarge(bytes) else { continue }
                let record = record(of: bytes, writer: writer)
                files[record.name] = record
                result[index].attributes[name] = .some(.dataFile(record.name))
            }
        }
        return (result, files.values.sorted { $0.name.fileName < $1.name.fileName })
    }

    /// The data files `changes` refer to.
    static func references(in changes: [ObjectChange]) -> Set<CloudFileName> {
        var names = Set<CloudFileName>()
        for change in changes {
            for case let .dataFile(name)? in change.attributes.values { names.insert(name) }
        }
        return names
    }

    /// The data files any candidate of any register of `object` refers to (a concurrent write that
    /// loses today may win once another event arrives, so every candidate's file is kept).
    static func references(in object: LedgerObject) -> Set<CloudFileName> {
        var names = Set<CloudFileName>()
        for register in object.attributes.values {
            for candidate in register.candidates {
                if case let .dataFile(name)? = candidate.value { names.insert(name) }
            }
        }
        return names
    }

    /// Whether `stored`, a value read from the app's store (large data inline), is the value `known`
    /// (which may refer to a data file): a reference is compared by content hash, so that a file of
    /// another writer holding the same bytes counts as the same value.
    static func isSameValue(_ known: SyncValue?, _ stored: SyncValue?) -> Bool {
        switch (known, stored) {
        case let (.dataFile(name)?, .data(bytes)?), let (.data(bytes)?, .dataFile(name)?):
            guard case let .data(hash, _) = name, isLarge(bytes) else { return false }
            return sha256(bytes) == hash
        case let (.dataFile(a)?, .dataFile(b)?):
            guard case let .data(hashA, _) = a, case let .data(hashB, _) = b else { return false }
            return hashA == hashB
        default:
            return known == stored
        }
    }
}
