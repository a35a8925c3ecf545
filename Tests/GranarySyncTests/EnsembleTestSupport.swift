import Foundation
import Granary
@testable import GranarySync
import Testing

// A notes app, as in the seed: notes in folders, tagged, every object with a `uniqueIdentifier` that
// makes objects created on two devices one object.
final class SyncNote: ManagedObject {
    @Managed var uniqueIdentifier: String
    @Managed var text: String
    @Managed var stars: Int
    @Managed var folder: SyncFolder?
    @Managed var tags: Set<SyncTag>
}
final class SyncFolder: ManagedObject {
    @Managed var uniqueIdentifier: String
    @Managed var name: String
    @Managed var notes: Set<SyncNote>
}
final class SyncTag: ManagedObject {
    @Managed var uniqueIdentifier: String
    @Managed var name: String
    @Managed var notes: Set<SyncNote>
}

/// The notes model; with `attachments`, notes also have an optional binaryData `attachment` (set through
/// `setValue(_:forKey:)`), for histories with large values (M15).
func syncNotesModel(attachments: Bool = false) throws -> ManagedObjectModel {
    try ManagedObjectModel(version: "1") {
        Entity("Note", as: SyncNote.self) {
            Attribute("uniqueIdentifier", .string)
            Attribute("text", .string, defaultValue: "")
            Attribute("stars", .integer64, defaultValue: 0)
            if attachments { Attribute("attachment", .binaryData, optional: true) }
            Relationship("folder", to: "Folder", inverse: "notes", deleteRule: .nullify)
            Relationship("tags", toMany: "Tag", inverse: "notes", deleteRule: .nullify)
        }
        Entity("Folder", as: SyncFolder.self) {
            Attribute("uniqueIdentifier", .string)
            Attribute("name", .string, defaultValue: "")
            Relationship("notes", toMany: "Note", inverse: "folder", deleteRule: .cascade)
        }
        Entity("Tag", as: SyncTag.self) {
            Attribute("uniqueIdentifier", .string)
            Attribute("name", .string, defaultValue: "")
            Relationship("notes", toMany: "Note", inverse: "tags", deleteRule: .nullify)
        }
    }
}

/// One device: a durable store with history in a directory of its own, the app's coordinator and a
/// context on it, and the store's ensemble on a shared cloud.
final class SyncTestDevice {
    let name: String
    let directory: URL
    let model: ManagedObjectModel
    let cloud: any CloudFileSystem
    private(set) var coordinator: PersistentStoreCoordinator
    private(set) var store: PersistentStore
    private(set) var context: ManagedObjectContext
    private(set) var ensemble: PersistentStoreEnsemble
    let recorder = MergeRecorder()

    var storeURL: URL { directory.appendingPathComponent("\(name).granary", isDirectory: true) }

    init(_ name: String, in root: URL, model: ManagedObjectModel, cloud: any CloudFileSystem,
         configuration: EnsembleConfiguration = EnsembleConfiguration(globalIdentifierAttribute: "uniqueIdentifier")) throws {
        self.name = name
        directory = root.appendingPathComponent(name, isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.model = model
        self.cloud = cloud
        (coordinator, store, context, ensemble) = try Self.open(at: directory.appendingPathComponent("\(name).granary", isDirectory: true),
                                                                 model: model, cloud: cloud, configuration: configuration)
        ensemble.delegate = recorder
    }

    private static func open(at url: URL, model: ManagedObjectModel, cloud: any CloudFileSystem, configuration: EnsembleConfiguration) throws
        -> (PersistentStoreCoordinator, PersistentStore, ManagedObjectContext, PersistentStoreEnsemble) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .durable, at: url, options: .init(persistentHistoryTracking: true))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let ensemble = try PersistentStoreEnsemble(ensembleIdentifier: "Notes", persistentStore: store, managedObjectModel: model,
                                                   cloudFileSystem: cloud, configuration: configuration)
        return (coordinator, store, context, ensemble)
    }

    /// Closes everything and opens the same store again (a relaunch).
    func relaunch(configuration: EnsembleConfiguration = EnsembleConfiguration(globalIdentifierAttribute: "uniqueIdentifier")) throws {
        ensemble.dismantle()
        try coordinator.remove(store)
        (coordinator, store, context, ensemble) = try Self.open(at: storeURL, model: model, cloud: cloud, configuration: configuration)
        ensemble.delegate = recorder
    }

    /// Deletes the store and its sync data and creates it again empty (the seed's "delete the local store").
    func deleteStoreAndRecreate() throws {
        ensemble.dismantle()
        try coordinator.remove(store)
        try FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        (coordinator, store, context, ensemble) = try Self.open(at: storeURL, model: model, cloud: cloud,
                                                                 configuration: EnsembleConfiguration(globalIdentifierAttribute: "uniqueIdentifier"))
        ensemble.delegate = recorder
    }

    func perform<T>(_ body: (ManagedObjectContext) throws -> T) throws -> T {
        try context.performAndWait { try body(context) }
    }

    @discardableResult
    func addNote(_ text: String, id: String = UUID().uuidString, folder: String? = nil, tags: [String] = []) throws -> String {
        try perform { context in
            let note = SyncNote(context: context)
            note.uniqueIdentifier = id
            note.text = text
            if let folder { note.folder = try self.folder(folder, in: context) }
            for tag in tags { note.tags.insert(try self.tag(tag, in: context)) }
            try context.save()
        }
        return id
    }

    /// The folder with this unique identifier (its name), created when missing.
    func folder(_ id: String, in context: ManagedObjectContext) throws -> SyncFolder {
        let request = FetchRequest<SyncFolder>(entityName: "Folder")
        if let found = try context.fetch(request).first(where: { $0.uniqueIdentifier == id }) { return found }
        let folder = SyncFolder(context: context)
        folder.uniqueIdentifier = id
        folder.name = id
        return folder
    }

    func tag(_ id: String, in context: ManagedObjectContext) throws -> SyncTag {
        let request = FetchRequest<SyncTag>(entityName: "Tag")
        if let found = try context.fetch(request).first(where: { $0.uniqueIdentifier == id }) { return found }
        let tag = SyncTag(context: context)
        tag.uniqueIdentifier = id
        tag.name = id
        return tag
    }

    func note(_ id: String, in context: ManagedObjectContext) throws -> SyncNote? {
        try context.fetch(FetchRequest<SyncNote>(entityName: "Note")).first { $0.uniqueIdentifier == id }
    }

    func edit(_ id: String, _ body: (SyncNote) throws -> Void) throws {
        try perform { context in
            guard let note = try note(id, in: context) else { throw SyncTestFailure("no note \(id) on \(name)") }
            try body(note)
            try context.save()
        }
    }

    /// The store's graph by global identifier, read from a fresh context so nothing cached hides a change.
    func graph() throws -> SyncGraph {
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        return try context.performAndWait { try SyncGraph(context: context, model: model) }
    }
}

struct SyncTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Records what the ensemble tells its delegate.
final class MergeRecorder: PersistentStoreEnsembleDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var _changes: [ContextChanges] = []
    private var _deleeches: [SyncError] = []
    private var _automaticFailures: [SyncError] = []
    var changes: [ContextChanges] { lock.withLock { _changes } }
    var deleeches: [SyncError] { lock.withLock { _deleeches } }
    var automaticFailures: [SyncError] { lock.withLock { _automaticFailures } }
    func persistentStoreEnsemble(_ ensemble: PersistentStoreEnsemble, didFailToMergeAutomaticallyWith error: SyncError) {
        lock.withLock { _automaticFailures.append(error) }
    }
    func persistentStoreEnsemble(_ ensemble: PersistentStoreEnsemble, didSaveMergeChangesWith changes: ContextChanges) {
        lock.withLock { _changes.append(changes) }
    }
    func persistentStoreEnsemble(_ ensemble: PersistentStoreEnsemble, didDeleechWithError error: SyncError) {
        lock.withLock { _deleeches.append(error) }
    }
}

/// A store's objects compared by (entity, uniqueIdentifier): attributes, and both ends of every
/// relationship as sorted lists of identifiers, so two devices' graphs compare equal exactly when they
/// hold the same data, whatever their primary keys.
struct SyncGraph: Equatable, CustomStringConvertible {
    struct Node: Equatable {
        var attributes: [String: String] = [:]
        var relationships: [String: [String]] = [:]
    }
    var nodes: [String: Node] = [:]
    /// Global identifiers that appear on more than one object of an entity (a failed dedupe).
    var duplicates: [String] = []

    init(context: ManagedObjectContext, model: ManagedObjectModel) throws {
        for entity in model.entities.sorted(by: { $0.name < $1.name }) {
            let objects = try context.fetch(FetchRequest<ManagedObject>(entityName: entity.name))
            for object in objects where object.entity.name == entity.name {
                let id = "\(entity.name)/\(try Self.identifier(of: object))"
                var node = Node()
                for attribute in entity.attributesByName.values where !attribute.isTransient {
                    let value = try object.value(forKey: attribute.name)
                    // Data by its content, not its length.
                    node.attributes[attribute.name] = (value as? Data).map { "data:" + LargeValues.sha256($0) } ?? "\(value ?? "nil")"
                }
                for relationship in entity.relationshipsByName.values where !relationship.isTransient {
                    let value = try object.value(forKey: relationship.name)
                    let targets: [ManagedObject]
                    if let one = value as? ManagedObject { targets = [one] }
                    else if let set = value as? Set<ManagedObject> { targets = Array(set) }
                    else if let many = value as? [ManagedObject] { targets = many }
                    else if let set = value as? NSSet { targets = set.allObjects.compactMap { $0 as? ManagedObject } }
                    else if let ordered = value as? NSOrderedSet { targets = ordered.array.compactMap { $0 as? ManagedObject } }
                    else if let any = value as? any Collection { targets = any.compactMap { $0 as? ManagedObject } }
                    else { targets = [] }
                    let ids = try targets.map { "\($0.entity.name)/\(try Self.identifier(of: $0))" }
                    node.relationships[relationship.name] = relationship.isOrdered ? ids : ids.sorted()
                }
                if nodes[id] != nil { duplicates.append(id) }
                nodes[id] = node
            }
        }
    }

    private static func identifier(of object: ManagedObject) throws -> String {
        "\(try object.value(forKey: "uniqueIdentifier") ?? "nil")"
    }

    var description: String {
        nodes.keys.sorted().map { key in
            let node = nodes[key]!
            let attributes = node.attributes.keys.sorted().map { "\($0)=\(node.attributes[$0]!)" }
            let relationships = node.relationships.keys.sorted().map { "\($0)→\(node.relationships[$0]!)" }
            return "\(key) " + (attributes + relationships).joined(separator: " ")
        }.joined(separator: "\n")
    }
}

/// Merges each device in turn, `rounds` times, so that every device has every other device's events.
func mergeAll(_ devices: [SyncTestDevice], rounds: Int = 2) async throws {
    for _ in 0..<rounds {
        for device in devices { try await device.ensemble.merge() }
    }
}
