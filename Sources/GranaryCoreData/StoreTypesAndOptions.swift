import Granary
import GranaryStack

// Core Data's store-type strings and option keys. The SQLite type means Granary's durable store (its own
// log-and-snapshot files, not SQLite); the binary and XML types, which Core Data keeps as single files,
// have no Granary counterpart and are refused by `addPersistentStore(ofType:configurationName:at:options:)`.

/// Core Data's SQLite store type: Granary's durable store (`PersistentStore.StoreType.durable`).
public let NSSQLiteStoreType = "SQLite"
/// Core Data's in-memory store type (`PersistentStore.StoreType.inMemory`).
public let NSInMemoryStoreType = "InMemory"
/// Core Data's binary store type, which Granary does not have.
public let NSBinaryStoreType = "Binary"

/// Migrates a store written by an earlier model version when it is opened.
public let NSMigratePersistentStoresAutomaticallyOption = PersistentStoreDescription.OptionKey.migrateStoreAutomatically
/// Infers the mapping of such a migration from the two models.
public let NSInferMappingModelAutomaticallyOption = PersistentStoreDescription.OptionKey.inferMappingModelAutomatically
/// Opens the store read-only.
public let NSReadOnlyPersistentStoreOption = PersistentStoreDescription.OptionKey.readOnly
/// Persistent history tracking: the store records every save (`PersistentStore.Options.persistentHistoryTracking`;
/// read it with Granary's `PersistentHistoryChangeRequest`).
public let NSPersistentHistoryTrackingKey = PersistentStoreDescription.OptionKey.historyTracking
/// Remote-change notifications, which Granary does not post: asking for them makes loading fail with
/// `StackError.unsupportedOption`, rather than working without them.
public let NSPersistentStoreRemoteChangeNotificationPostOptionKey = PersistentStoreDescription.OptionKey.remoteChangeNotificationPost
/// How long opening waits for a locked store.
public let NSPersistentStoreTimeoutOption = PersistentStoreDescription.OptionKey.timeout

extension PersistentStore.StoreType {
    /// The store type a Core Data type string names (`NSSQLiteStoreType`, `NSInMemoryStoreType`), or
    /// nil for one Granary does not have.
    public init?(coreDataType: String) {
        switch coreDataType {
        case NSSQLiteStoreType: self = .durable
        case NSInMemoryStoreType: self = .inMemory
        default: return nil
        }
    }

    /// Core Data's type string for this type.
    public var coreDataType: String { self == .durable ? NSSQLiteStoreType : NSInMemoryStoreType }
}

extension PersistentStore {
    /// The store's Core Data type string: `NSSQLiteStoreType` for a durable store.
    public var coreDataType: String { type.coreDataType }
}

extension PersistentStoreCoordinator {
    /// Attaches a store named by a Core Data type string with Core Data's options dictionary: Core Data's
    /// `addPersistentStore(ofType:configurationName:at:options:)`.
    /// - Parameters:
    ///   - storeType: `NSSQLiteStoreType` (a durable store at `url`) or `NSInMemoryStoreType`.
    ///   - configuration: The model configuration whose entities the store holds; nil for all.
    ///   - storeURL: The store's directory (by convention `<name>.granary`).
    ///   - options: Core Data's keys: `NSMigratePersistentStoresAutomaticallyOption`,
    ///     `NSInferMappingModelAutomaticallyOption`, `NSReadOnlyPersistentStoreOption`,
    ///     `NSPersistentHistoryTrackingKey`.
    /// - Throws: `ContextError.invalidRequest` for a store type Granary does not have or an option it
    ///   does not support (remote-change notifications); otherwise as
    ///   `addPersistentStore(type:configuration:at:options:)`.
    @discardableResult
    public func addPersistentStore(ofType storeType: String, configurationName configuration: String?, at storeURL: URL?,
                                   options: [AnyHashable: Any]? = nil) throws -> PersistentStore {
        guard let type = PersistentStore.StoreType(coreDataType: storeType) else {
            throw ContextError.invalidRequest(entity: configuration ?? "default configuration",
                                              reason: "store type '\(storeType)' is not one Granary has (use NSSQLiteStoreType or NSInMemoryStoreType)")
        }
        let description = try PersistentStoreDescription(coreDataOptions: options ?? [:], configuration: configuration)
        return try addPersistentStore(type: type, configuration: configuration, at: storeURL, options: description.storeOptions)
    }

    /// The metadata of the store at `url`, read without opening it: Core Data's
    /// `metadataForPersistentStore(ofType:at:options:)`.
    /// - Throws: `ContextError.invalidRequest` for a type other than `NSSQLiteStoreType`;
    ///   `ContextError.storeDoesNotExist` when nothing is there.
    public static func metadataForPersistentStore(ofType storeType: String, at url: URL,
                                                  options: [AnyHashable: Any]? = nil) throws -> [String: any Sendable] {
        guard PersistentStore.StoreType(coreDataType: storeType) == .durable else {
            throw ContextError.invalidRequest(entity: url.path, reason: "only NSSQLiteStoreType stores have metadata on disk")
        }
        return try metadataForPersistentStore(type: .durable, at: url)
    }
}

extension PersistentStoreDescription {
    /// A description holding Core Data's options, for reading them as Granary's.
    /// - Throws: `ContextError.invalidRequest` for remote-change notifications.
    convenience init(coreDataOptions options: [AnyHashable: Any], configuration: String?) throws {
        self.init()
        for (key, value) in options {
            guard let key = key as? String else { continue }
            if key == NSPersistentStoreRemoteChangeNotificationPostOptionKey,
               (value as? Bool) == true || (value as? NSNumber)?.boolValue == true {
                throw ContextError.invalidRequest(entity: configuration ?? "default configuration",
                                                  reason: "option \(key) is not supported by Granary")
            }
            switch value {
            case let flag as Bool: setOption(flag, forKey: key)
            case let seconds as Double: setOption(seconds, forKey: key)
            case let number as Int: setOption(number, forKey: key)
            case let number as NSNumber:
                setOption(key == NSPersistentStoreTimeoutOption ? number.doubleValue as any Sendable : number.boolValue, forKey: key)
            case let text as String: setOption(text, forKey: key)
            default: break
            }
        }
    }

    /// The store type as Core Data's string (`NSSQLiteStoreType`, `NSInMemoryStoreType`), as in Core
    /// Data; setting a string Granary does not have leaves the type as it was. It hides GranaryStack's
    /// enum-typed `type` from code that imports this module: that one is `storeType` here.
    public var type: String {
        get { storeType.coreDataType }
        set { if let type = PersistentStore.StoreType(coreDataType: newValue) { storeType = type } }
    }
}

extension PersistentContainer {
    /// Runs `block` on a new background context, on that context's queue, and returns at once: Core
    /// Data's callback form of `performBackgroundTask(_:)`.
    public func performBackgroundTask(_ block: @escaping @Sendable (ManagedObjectContext) -> Void) {
        let context = newBackgroundContext()
        context.schedule { block(context) }
    }
}

/// The store's UUID in its metadata.
public let NSStoreUUIDKey = PersistentStore.MetadataKey.storeUUID
/// The store's type in its metadata.
public let NSStoreTypeKey = PersistentStore.MetadataKey.storeType
/// The version hashes of the model that wrote the store, in its metadata.
public let NSStoreModelVersionHashesKey = PersistentStore.MetadataKey.modelVersionHashes
/// The version identifiers of the model that wrote the store, in its metadata.
public let NSStoreModelVersionIdentifiersKey = PersistentStore.MetadataKey.modelVersionIdentifiers
