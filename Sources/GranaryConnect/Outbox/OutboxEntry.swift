import Foundation
import Granary

/// One local change waiting to reach the server: an insert, an update or a delete of one object of a
/// managed entity, in the order the saves made them.
public struct OutboxEntry: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable, Codable {
        case insert, update, delete
    }

    /// Stable across retries and restarts (`<store UUID>-<transaction>-<change>`): the server applies an
    /// entry once however often it arrives, which is what makes delivery exactly once.
    public let idempotencyKey: String
    public let entityName: String
    public let kind: Kind
    /// The key attributes' values (from the object, or from its tombstone for a delete).
    public let key: [String: Value]
    /// The object's attributes as they are when the entry is sent (empty for a delete): a later edit
    /// of the same object is sent as its own entry after this one.
    public let values: [String: Value]
    /// The properties the save changed (every attribute for an insert).
    public let changedProperties: Set<String>
    /// The save that made the change.
    public let token: PersistentHistoryToken
    /// The change's place in that save's transaction.
    public let changeIndex: Int
    public let timestamp: Date

    public var description: String {
        "\(kind) \(entityName) \(key.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")) [\(idempotencyKey)]"
    }

    /// The entry as a JSON object (`JSONSerialization` can write it): `idempotencyKey`, `entity`,
    /// `kind`, `key` and `values`, with dates as ISO 8601 text, UUIDs as strings and data as base64.
    public var jsonObject: [String: Any] {
        [
            "idempotencyKey": idempotencyKey, "entity": entityName, "kind": kind.rawValue,
            "key": key.mapValues(Self.json), "values": values.mapValues(Self.json),
        ]
    }

    static func json(_ value: Value) -> Any {
        switch value {
        case .null: NSNull()
        case .bool(let b): b
        case .int(let i): i
        case .double(let d): d
        case .string(let s): s
        case .bytes(let b): Data(b).base64EncodedString()
        case .date(let d): ISO8601DateFormatter().string(from: d)
        case .uuid(let u): u.uuidString
        default: "\(value)"
        }
    }
}

/// Sends outbox entries to the server: the app's web-service call, one entry at a time in order.
/// Return when the server has the entry; throw to leave it (and every later one) for the next attempt.
public protocol OutboxTransport: Sendable {
    func send(_ entry: OutboxEntry) async throws
}

/// When a failed send is tried again: after `initialDelay`, then each delay `multiplier` times the last,
/// at most `maximumDelay`.
public struct OutboxRetryPolicy: Sendable, Hashable {
    public var initialDelay: Duration
    public var multiplier: Double
    public var maximumDelay: Duration

    public init(initialDelay: Duration = .seconds(1), multiplier: Double = 2, maximumDelay: Duration = .seconds(300)) {
        self.initialDelay = initialDelay
        self.multiplier = max(1, multiplier)
        self.maximumDelay = maximumDelay
    }

    /// The delay before attempt `failures + 1` after `failures` failures in a row (at least one).
    public func delay(afterFailures failures: Int) -> Duration {
        var delay = initialDelay
        for _ in 1..<max(1, failures) {
            delay = delay * multiplier
            if delay >= maximumDelay { return maximumDelay }
        }
        return min(delay, maximumDelay)
    }
}
