import Foundation
@testable import Granary

/// Lines written by hooks of several objects and by notifications, in the order they happened.
final class HookJournal: @unchecked Sendable {
    // Used on one context's queue only.
    var lines: [String] = []
}

struct HookRefusal: Error, Equatable {
    var reason: String
}

/// A note that records every lifecycle and validation hook Granary calls on it, in `events`.
final class Note: ManagedObject {
    @Managed var title: String
    @Managed var uid: String?
    @Managed var created: Date?
    @Managed var revision: Int
    @Managed var summary: String?
    @Managed var folder: Folder?

    /// Hooks called on this instance, in order.
    var events: [String] = []
    /// Where hooks also write, with `label`, when a test follows several objects.
    var journal: HookJournal?
    var label = ""
    /// What `validateForUpdate()` throws, when set.
    var refusal: HookRefusal?
    /// `willSave()` bumps `revision` on every call (never settles) when set.
    var changesOnEveryWillSave = false
    /// `willSave()` sets `summary` once (settles) when set.
    var summarizesInWillSave = false
    /// `willSave()` files the note in this folder once, when set.
    var folderForWillSave: Folder?
    /// What `prepareForDeletion()` saw of the folder relationship.
    var folderSeenInPrepareForDeletion: Folder?

    private func record(_ event: String) {
        events.append(event)
        journal?.lines.append("\(label) \(event)")
    }

    override func awakeFromInsert() {
        super.awakeFromInsert()
        record("awakeFromInsert")
        // The seed's pattern: a unique identifier and a creation date given once, on first insertion.
        if uid == nil {
            uid = UUID().uuidString
            created = Date(timeIntervalSince1970: 1_000)
        }
    }

    override func awakeFromFetch() {
        super.awakeFromFetch()
        record("awakeFromFetch")
        // A derived value set with the public setter: must not count as a change.
        summary = "about \(title)"
    }

    override func awake(fromSnapshotEvents events: SnapshotEventType) {
        super.awake(fromSnapshotEvents: events)
        var names: [String] = []
        if events.contains(.rollback) { names.append("rollback") }
        if events.contains(.refresh) { names.append("refresh") }
        if events.contains(.mergePolicy) { names.append("mergePolicy") }
        if events.contains(.undoInsertion) { names.append("undoInsertion") }
        if events.contains(.undoDeletion) { names.append("undoDeletion") }
        if events.contains(.undoUpdate) { names.append("undoUpdate") }
        record("awake(\(names.joined(separator: ",")))")
    }

    override func willSave() {
        super.willSave()
        record(isDeleted ? "willSave(deleted)" : "willSave")
        if changesOnEveryWillSave { revision += 1 }
        if summarizesInWillSave && summary != "saved \(title)" { summary = "saved \(title)" }
        if let folder = folderForWillSave {
            folderForWillSave = nil
            self.folder = folder
        }
    }

    override func didSave() {
        super.didSave()
        record(isDeleted ? "didSave(deleted)" : "didSave")
    }

    override func prepareForDeletion() {
        super.prepareForDeletion()
        record(isDeleted ? "prepareForDeletion(deleted)" : "prepareForDeletion")
        folderSeenInPrepareForDeletion = folder
    }

    override func willTurnIntoFault() {
        super.willTurnIntoFault()
        record("willTurnIntoFault")
    }

    override func didTurnIntoFault() {
        super.didTurnIntoFault()
        record(isFault ? "didTurnIntoFault" : "didTurnIntoFault(not a fault)")
    }

    override func validateForInsert() throws {
        record("validateForInsert")
        try super.validateForInsert()
    }

    override func validateForUpdate() throws {
        record("validateForUpdate")
        try super.validateForUpdate()
        if let refusal { throw refusal }
    }

    override func validateForDelete() throws {
        record("validateForDelete")
        try super.validateForDelete()
    }

    override func validateValue(_ value: inout Any?, forKey key: String) throws {
        // Coercion: titles are stored without surrounding spaces.
        if key == "title", let text = value as? String { value = text.trimmingCharacters(in: .whitespaces) }
        try super.validateValue(&value, forKey: key)
        if key == "title", let text = value as? String, text == "TBD" {
            throw ValidationError(entityName: "Note", propertyName: "title", reason: .custom(rule: "noPlaceholders", message: "a real title"))
        }
    }
}

final class Folder: ManagedObject {
    @Managed var name: String
    @Managed var notes: Set<Note>
    var events: [String] = []

    override func prepareForDeletion() {
        super.prepareForDeletion()
        events.append("prepareForDeletion with \(notes.count) notes")
    }
}

func makeNotesModel() throws -> ManagedObjectModel {
    try ManagedObjectModel(version: "notes") {
        Entity("Note", as: Note.self) {
            Attribute("title", .string, validation: [.length(min: 1, max: 40)])
            Attribute("uid", .string, optional: true)
            Attribute("created", .date, optional: true)
            Attribute("revision", .integer64, defaultValue: 0)
            Attribute("summary", .string, optional: true, transient: true)
            Relationship("folder", to: "Folder", inverse: "notes", deleteRule: .nullify)
        }
        Entity("Folder", as: Folder.self) {
            Attribute("name", .string)
            Relationship("notes", toMany: "Note", inverse: "folder", deleteRule: .cascade)
        }
    }
}

/// A coordinator with one in-memory store of notes and a private-queue context on it.
func makeNotesStack() throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
    let coordinator = PersistentStoreCoordinator(managedObjectModel: try makeNotesModel())
    try coordinator.addPersistentStore(type: .inMemory)
    return (coordinator, ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator))
}
