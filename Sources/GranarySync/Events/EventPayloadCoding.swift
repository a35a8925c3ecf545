import Foundation

/// The JSON of event, baseline and registration payloads, and of values the event store keeps: one
/// codec for both, so that a value reads the same from a file and from the local ledger.
///
/// Keys are sorted and there is no whitespace, so encoding is deterministic: an event's bytes depend
/// only on the event, and the checksum of a re-encoded event matches the one already uploaded.
enum EventPayloadCoding {
    /// The canonical JSON of `value`.
    /// - Throws: `EventFileError.unencodable` when the value has no JSON form (a non-finite `Double`
    ///   stored as a number instead of as a `SyncValue`).
    static func encode(_ value: some Encodable) throws(EventFileError) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return try encoder.encode(value)
        } catch {
            throw .unencodable(reason: Self.describe(error))
        }
    }

    /// The value of type `type` in `data`, the payload of the file `name` (for errors only).
    /// - Throws: `EventFileError.malformedPayload` naming the file, the coding path and what was wrong.
    static func decode<T: Decodable>(_ type: T.Type, from data: Data, name: String) throws(EventFileError) -> T {
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch let error as DecodingError {
            let (path, reason) = Self.locate(error)
            throw .malformedPayload(name: name, path: path, reason: reason)
        } catch {
            throw .malformedPayload(name: name, path: "", reason: Self.describe(error))
        }
    }

    /// A file of `kind` whose payload is the JSON of `value`, framed.
    /// - Throws: `EventFileError.unencodable`, as `encode(_:)`.
    static func file(_ kind: EventFile.Kind, of value: some Encodable) throws(EventFileError) -> Data {
        EventFile(kind: kind, payload: try encode(value)).encoded()
    }

    /// The value of type `type` in the framed file `bytes` named `name`, which must be of `kind`.
    /// - Throws: what `EventFile(decoding:name:)` throws, `EventFileError.corrupt` for a file of
    ///   another kind, `.malformedPayload` as `decode(_:from:name:)`.
    static func value<T: Decodable>(_ type: T.Type, ofKind kind: EventFile.Kind, inFile bytes: Data,
                                    name: String) throws(EventFileError) -> T {
        let file = try EventFile(decoding: bytes, name: name)
        guard file.kind == kind else {
            throw .corrupt(name: name, offset: 6, reason: "a file of kind \(file.kind) where \(kind) was expected")
        }
        return try decode(type, from: file.payload, name: name)
    }

    private static func locate(_ error: DecodingError) -> (path: String, reason: String) {
        func path(_ keys: [any CodingKey]) -> String {
            keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        }
        switch error {
        case let .dataCorrupted(context): return (path(context.codingPath), context.debugDescription)
        case let .keyNotFound(key, context): return (path(context.codingPath + [key]), "missing")
        case let .typeMismatch(type, context): return (path(context.codingPath), "not a \(type)")
        case let .valueNotFound(type, context): return (path(context.codingPath), "null where a \(type) is needed")
        @unknown default: return ("", describe(error))
        }
    }

    private static func describe(_ error: any Error) -> String {
        String(String(describing: error).prefix(300))
    }
}
