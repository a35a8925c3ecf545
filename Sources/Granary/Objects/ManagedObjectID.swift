import Foundation
import Synchronization

/// The identity of one managed object: its entity and, once saved, the store and row it lives in.
///
/// IDs are values: `Sendable` and `Hashable`, so they cross threads and tasks where objects cannot.
/// Pass IDs between contexts and look objects up with `object(with:)`. An object inserted and not yet
/// saved has a temporary ID; saving (or `obtainPermanentIDs(for:)`) gives it a permanent one, whose
/// `uriRepresentation` survives restarts and can be stored elsewhere.
public struct ManagedObjectID: Sendable, Hashable, CustomStringConvertible {
    public let entityName: String
    let storage: Storage

    enum Storage: Sendable, Hashable {
        case permanent(store: UUID, key: Int64)
        /// A number unique within this process; URIs prefix it with the process's own UUID.
        case temporary(UInt64)
    }

    /// Temporary IDs are numbered: every object gets one at creation, and a `UUID()` per object (which
    /// reads /dev/urandom on Linux) cost more than the rest of materializing a fetched object.
    private static let temporaryCounter = Atomic<UInt64>(0)
    static let processIdentifier = UUID()

    init(entityName: String, store: UUID, key: Int64) {
        self.entityName = entityName
        self.storage = .permanent(store: store, key: key)
    }

    private init(entityName: String, storage: Storage) {
        self.entityName = entityName
        self.storage = storage
    }

    init(temporaryFor entityName: String) {
        self.entityName = entityName
        self.storage = .temporary(Self.temporaryCounter.wrappingAdd(1, ordering: .relaxed).newValue)
    }

    /// Whether the object has never been saved (Core Data's `isTemporaryID`).
    public var isTemporaryID: Bool {
        if case .temporary = storage { return true }
        return false
    }

    /// The UUID of the store holding the object, or `nil` for a temporary ID.
    public var persistentStoreIdentifier: UUID? {
        if case .permanent(let store, _) = storage { return store }
        return nil
    }

    /// The row's primary key in its store, or `nil` for a temporary ID.
    public var primaryKey: Int64? {
        if case .permanent(_, let key) = storage { return key }
        return nil
    }

    public static let uriScheme = "x-granary"

    /// `x-granary://<store UUID>/<Entity>/p<key>` for permanent IDs,
    /// `x-granary:///<Entity>/t<process UUID>-<n>` for temporary ones (which mean nothing in another process).
    public var uriRepresentation: URL {
        switch storage {
        case .permanent(let store, let key):
            return URL(string: "\(Self.uriScheme)://\(store.uuidString)/\(Self.escape(entityName))/p\(key)")!
        case .temporary(let number):
            return URL(string: "\(Self.uriScheme):///\(Self.escape(entityName))/t\(Self.processIdentifier.uuidString)-\(number)")!
        }
    }

    /// Parses a URI made by `uriRepresentation`.
    /// - Throws: `ObjectIDError.malformedURI` naming what is wrong.
    public init(uriRepresentation uri: URL) throws {
        guard uri.scheme == Self.uriScheme else {
            throw ObjectIDError.malformedURI(uri, reason: "the scheme is not \(Self.uriScheme)")
        }
        let parts = uri.path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard parts.count == 2, let entity = parts[0].removingPercentEncoding, let tag = parts[1].first else {
            throw ObjectIDError.malformedURI(uri, reason: "expected /<Entity>/p<key> or /<Entity>/t<UUID>")
        }
        let rest = String(parts[1].dropFirst())
        switch tag {
        case "p":
            guard let host = uri.host, let store = UUID(uuidString: host) else {
                throw ObjectIDError.malformedURI(uri, reason: "a permanent ID needs the store UUID as its host")
            }
            guard let key = Int64(rest) else { throw ObjectIDError.malformedURI(uri, reason: "'\(rest)' is not a row key") }
            self.init(entityName: entity, store: store, key: key)
        case "t":
            let pieces = rest.split(separator: "-")
            guard pieces.count == 6, let number = UInt64(pieces[5]),
                UUID(uuidString: pieces.prefix(5).joined(separator: "-")) == Self.processIdentifier
            else {
                throw ObjectIDError.malformedURI(uri, reason: "'\(rest)' is not a temporary ID of this process (temporary IDs do not outlive it)")
            }
            self.init(entityName: entity, storage: .temporary(number))
        default:
            throw ObjectIDError.malformedURI(uri, reason: "unknown ID kind '\(tag)'")
        }
    }

    private static func escape(_ s: String) -> String {
        s.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? s
    }

    public var description: String { uriRepresentation.absoluteString }

    /// Hashes the key (or temporary number) alone: hashing the entity name's characters, or the store's
    /// UUID, on every registry lookup cost more than the rare collision they would avoid (the same key
    /// in two tables or two stores), and `==` still tells such IDs apart.
    public func hash(into hasher: inout Hasher) {
        switch storage {
        case .permanent(_, let key): hasher.combine(key)
        case .temporary(let serial): hasher.combine(~serial)
        }
    }

    public static func == (a: ManagedObjectID, b: ManagedObjectID) -> Bool {
        a.storage == b.storage && a.entityName == b.entityName
    }
}

/// Errors about object IDs and their URIs.
public enum ObjectIDError: Error, Sendable, Equatable, CustomStringConvertible {
    case malformedURI(URL, reason: String)

    public var description: String {
        switch self {
        case .malformedURI(let uri, let reason): return "'\(uri.absoluteString)' is not a Granary object URI: \(reason)"
        }
    }
}
