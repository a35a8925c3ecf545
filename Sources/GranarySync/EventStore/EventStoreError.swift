import Foundation

/// Why the event store refused an operation; each case names the store directory and what was involved.
enum EventStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The engine failed (a lock held by another process, an I/O error, damage found at open);
    /// `reason` is the engine's own message, which names the file and offset.
    case storage(path: String, operation: String, reason: String)
    /// The store was written by a newer library: schema `found`, while this one knows up to `supported`.
    case newerVersion(path: String, found: Int, supported: Int)
    /// The directory holds an engine store that is not an event store (or whose version text is unreadable).
    case notAnEventStore(path: String, found: String?)
    /// A row's contents are impossible: a missing state row, an unknown status, undecodable JSON.
    case damaged(path: String, table: String, key: Int64, reason: String)
    /// No event of this ID is in the store.
    case unknownEvent(path: String, id: EventID)
    /// An event is not in the status the operation moves it from.
    case wrongStatus(path: String, id: EventID, found: EventStatus, expected: EventStatus)
    /// A local event was made from counters another commit has since moved: its revision is not the next.
    case staleLocalEvent(path: String, id: EventID, nextRevision: Int64)
    /// A value could not be encoded for a row.
    case unencodable(path: String, what: String, reason: String)

    var description: String {
        switch self {
        case let .storage(path, operation, reason):
            "event store \(path): \(operation) failed: \(reason)"
        case let .newerVersion(path, found, supported):
            "event store \(path) has schema version \(found); this library reads up to version \(supported) — update it"
        case let .notAnEventStore(path, found):
            "\(path) is not a GranarySync event store (schema version text \(found.map { "'\($0.prefix(100))'" } ?? "absent"))"
        case let .damaged(path, table, key, reason):
            "event store \(path) is damaged: \(table) row \(key): \(reason)"
        case let .unknownEvent(path, id):
            "event store \(path) has no event \(id)"
        case let .wrongStatus(path, id, found, expected):
            "event store \(path): event \(id) is \(found), not \(expected)"
        case let .staleLocalEvent(path, id, nextRevision):
            "event store \(path): local event \(id) was made from old counters; the next revision is \(nextRevision)"
        case let .unencodable(path, what, reason):
            "event store \(path): cannot encode \(what): \(reason)"
        }
    }
}
