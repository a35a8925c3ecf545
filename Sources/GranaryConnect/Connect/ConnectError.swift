import Foundation

/// What the connect refuses, each case naming what was wrong.
public enum ConnectError: Error, Sendable, Hashable, CustomStringConvertible {
    /// An entity action (or a feed merge) for an entity the connect does not manage: abstract, or
    /// without uniqueness attributes, or whose `uniquenessAttributes` setting names an attribute it
    /// does not have (`reason` says which).
    case unmanagedEntity(String, reason: String)
    /// An entity action's class is not the class of any entity of the model.
    case unknownEntityClass(String)
    /// The store is needed and `start()` has not run (or `stop()` ran).
    case notStarted
    /// A feed record lacks a value for a key attribute, or has one of the wrong type.
    case invalidFeedRecord(entity: String, index: Int, reason: String)
    /// The outbox needs the store opened with persistent history and the entity's key attributes kept
    /// on deletion; `reason` says what is missing.
    case outboxUnavailable(String)

    public var description: String {
        switch self {
        case let .unmanagedEntity(name, reason): "Entity '\(name)' not managed by Connect: \(reason)"
        case let .unknownEntityClass(name): "no entity of the model has class \(name)"
        case .notStarted: "the connect has not been started (call start())"
        case let .invalidFeedRecord(entity, index, reason): "feed record \(index) for \(entity): \(reason)"
        case let .outboxUnavailable(reason): "the outbox cannot run: \(reason)"
        }
    }
}
