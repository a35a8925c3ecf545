import Foundation
import Synchronization

/// The identity of one managed object: its entity and, once saved, the store and row it lives in.
///
/// IDs are values: `Sendable` and `Hashable`, so they cross threads and tasks where objects cannot.
/// Pass IDs between contexts and look objects up with `object(with:)`. An object inserted and not yet
/// saved has a temporary ID; saving (or `obtainPermanentIDs(for:)`) gives it a permanent one, whose
/// `uriRepresentation` survives restarts and can be stored elsewhere.
public struct ManagedObjectID: Sendable, Hashable, CustomStringConvertible {
    /// The entity and store, interned: an ID is this reference and a number, 16 bytes with no reference
    /// counting. Sixteen bytes fit inline in an `Any` (a to-one relationship's value), where the 41 of
    /// a name, a UUID and a key needed a heap box per object; and equality compares two pointers.
    /// Scopes are never freed, so the reference can be unowned(unsafe).
    unowned(unsafe) let scope: Scope
    /// The row's key, or the temporary ID's serial number.
    let number: Int64

    /// One entity in one store (or, with no store, the entity's temporary IDs). Interned by
    /// `Scope.of(entityName:store:)`, so that identity is equality; kept for the life of the process
    /// (one per entity and store opened, a few dozen bytes each).
    final class Scope: Sendable {
        let entityName: String
        let store: UUID?

        private init(entityName: String, store: UUID?) {
            self.entityName = entityName
            self.store = store
        }

        private struct Key: Hashable {
            let entityName: String
            let store: UUID?
        }

        private static let interned = Mutex<[Key: Scope]>([:])

        /// The one scope of this entity and store. Takes a global lock: hot paths keep the scope they
        /// need (a layout its temporary scope, a fetch the scopes of its tables).
        static func of(entityName: String, store: UUID?) -> Scope {
            let key = Key(entityName: entityName, store: store)
            return interned.withLock { table in
                if let scope = table[key] { return scope }
                let scope = Scope(entityName: entityName, store: store)
                table[key] = scope
                return scope
            }
        }
    }

    /// Temporary IDs are numbered: every object gets one at creation, and a `UUID()` per object (which
    /// reads /dev/urandom on Linux) cost more than the rest of materializing a fetched object.
    private static let temporaryCounter = Atomic<Int64>(0)
    static let processIdentifier = UUID()

    init(scope: Scope, key: Int64) {
        self.scope = scope
        self.number = key
    }

    init(entityName: String, store: UUID, key: Int64) {
        self.init(scope: .of(entityName: entityName, store: store), key: key)
    }

    /// A new temporary ID in `scope`, which must be a temporary scope (no store).
    init(temporaryIn scope: Scope) {
        self.init(scope: scope, key: Self.temporaryCounter.wrappingAdd(1, ordering: .relaxed).newValue)
    }

    /// The name of the object's entity.
    public var entityName: String { scope.entityName }

    /// Whether the object has never been saved (Core Data's `isTemporaryID`).
    public var isTemporaryID: Bool { scope.store == nil }

    /// The UUID of the store holding the object, or `nil` for a temporary ID.
    public var persistentStoreIdentifier: UUID? { scope.store }

    /// The row's primary key in its store, or `nil` for a temporary ID.
    public var primaryKey: Int64? { scope.store == nil ? nil : number }

    public static let uriScheme = "x-granary"

    /// `x-granary://<store UUID>/<Entity>/p<key>` for permanent IDs,
    /// `x-granary:///<Entity>/t<process UUID>-<n>` for temporary ones (which mean nothing in another process).
    public var uriRepresentation: URL {
        if let store = scope.store {
            return URL(string: "\(Self.uriScheme)://\(store.uuidString)/\(Self.escape(entityName))/p\(number)")!
        }
        return URL(string: "\(Self.uriScheme):///\(Self.escape(entityName))/t\(Self.processIdentifier.uuidString)-\(UInt64(bitPattern: number))")!
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
            self.init(scope: .of(entityName: entity, store: nil), key: Int64(bitPattern: number))
        default:
            throw ObjectIDError.malformedURI(uri, reason: "unknown ID kind '\(tag)'")
        }
    }

    private static func escape(_ s: String) -> String {
        s.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? s
    }

    public var description: String { uriRepresentation.absoluteString }

    /// Hashes the number alone: hashing the entity name's characters, or the store's UUID, on every
    /// registry lookup cost more than the rare collision they would avoid (the same key in two tables
    /// or two stores), and `==` still tells such IDs apart.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(number)
    }

    public static func == (a: ManagedObjectID, b: ManagedObjectID) -> Bool {
        a.number == b.number && a.scope === b.scope
    }
}

/// Errors about object IDs and their URIs.
public enum ObjectIDError: Error, Sendable, Equatable, CustomStringConvertible {
    case malformedURI(URL, reason: String)

    public var description: String {
        switch self {
        case .malformedURI(let uri, let reason): return "'\(SafeDescription.of(uri.absoluteString))' is not a Granary object URI: \(reason)"
        }
    }
}

/// An ID is encoded as its URI, which is what outlives the process (`uriRepresentation`): `Codable` so
/// that a `#Predicate` can capture an ID (it captures only `Codable` values, which objects are not) and
/// so that apps can keep IDs in their own documents.
extension ManagedObjectID: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let uri = try container.decode(URL.self)
        do { try self.init(uriRepresentation: uri) } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "\(error)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(uriRepresentation)
    }
}
