import Foundation
import Granary
import GranarySync

final class Note: ManagedObject {
    @Managed var uniqueIdentifier: String
    @Managed var text: String
    @Managed var tags: Set<Tag>
}

final class Tag: ManagedObject {
    @Managed var uniqueIdentifier: String
    @Managed var notes: Set<Note>
}

/// The sync part of the demo (Ensembles' service, module GranarySync): two stores, a laptop's and a
/// phone's, each with its ensemble on one shared folder; they change data apart, merge, and end equal,
/// with the note both created under one identifier made one object.
enum SyncDemo {
    struct Device: Sendable {
        let name: String
        let coordinator: PersistentStoreCoordinator
        let ensemble: PersistentStoreEnsemble

        func save(_ body: (ManagedObjectContext) throws -> Void) throws {
            let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
            try context.performAndWait {
                try body(context)
                try context.save()
            }
        }

        /// The notes as text, with their tags, sorted: what the two devices are compared by.
        func contents() throws -> [String] {
            let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
            return try context.performAndWait {
                try context.fetch(FetchRequest<Note>(entityName: "Note")).map { note in
                    "\(note.uniqueIdentifier): \(note.text)" + (note.tags.isEmpty ? "" : " [" + note.tags.map(\.uniqueIdentifier).sorted().joined(separator: ", ") + "]")
                }.sorted()
            }
        }
    }

    static func run(directory: URL) throws {
        print("Sync between stores (module GranarySync), stores in \(directory.lastPathComponent)/")
        try? FileManager.default.removeItem(at: directory)
        let folder = directory.appendingPathComponent("Shared folder", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let model = try ManagedObjectModel(version: "1") {
            Entity("Note", as: Note.self) {
                Attribute("uniqueIdentifier", .string)
                Attribute("text", .string, defaultValue: "")
                Relationship("tags", toMany: "Tag", inverse: "notes")
            }
            Entity("Tag", as: Tag.self) {
                Attribute("uniqueIdentifier", .string)
                Relationship("notes", toMany: "Note", inverse: "tags")
            }
        }
        let cloud = LocalDirectoryFileSystem(rootDirectory: folder)
        func open(_ name: String) throws -> Device {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            let store = try coordinator.addPersistentStore(type: .durable, at: directory.appendingPathComponent("\(name).granary"),
                                                           options: .init(persistentHistoryTracking: true))
            let ensemble = try PersistentStoreEnsemble(ensembleIdentifier: "Notes", persistentStore: store, managedObjectModel: model,
                                                       cloudFileSystem: cloud,
                                                       configuration: EnsembleConfiguration(globalIdentifierAttribute: "uniqueIdentifier"))
            return Device(name: name, coordinator: coordinator, ensemble: ensemble)
        }
        let laptop = try open("laptop")
        let phone = try open("phone")
        func note(_ id: String, _ text: String, tags: [String], in context: ManagedObjectContext) throws {
            let note = Note(context: context)
            note.uniqueIdentifier = id
            note.text = text
            for id in tags {
                let existing = try context.fetch(FetchRequest<Tag>(entityName: "Tag")).first { $0.uniqueIdentifier == id }
                let tag = existing ?? Tag(context: context)
                tag.uniqueIdentifier = id
                note.tags.insert(tag)
            }
        }
        try laptop.save { context in
            try note("groceries", "bread, milk", tags: ["home"], in: context)
            try note("talk", "slides for Tuesday", tags: ["work"], in: context)
        }
        print("  laptop saved 2 notes before sync was enabled")
        try blocking {
            try await laptop.ensemble.leech()
            try await phone.ensemble.leech()
        }
        print("  both stores leeched (the laptop's notes went to the shared folder)")
        try phone.save { context in
            try note("groceries", "bread, milk", tags: ["errands"], in: context)
            try note("call", "call the plumber", tags: [], in: context)
        }
        try laptop.save { context in
            let talk = try context.fetch(FetchRequest<Note>(entityName: "Note")).first { $0.uniqueIdentifier == "talk" }
            talk?.text = "slides for Tuesday, 20 minutes"
        }
        print("  apart: the phone made 'groceries' too (same identifier) and 'call'; the laptop edited 'talk'")
        let timings = try blocking {
            var timings: [String] = []
            for device in [laptop, phone, laptop] {
                let start = ContinuousClock.now
                let report = try await device.ensemble.merge()
                let ms = (ContinuousClock.now - start) / .milliseconds(1)
                timings.append(String(format: "    merge on the %@: %.1f ms, %d events in, %d out", device.name as NSString, ms,
                                      report.integratedEvents, report.exportedEvents))
            }
            return timings
        }
        timings.forEach { print($0) }
        let (a, b) = (try laptop.contents(), try phone.contents())
        for line in a { print("    \(line)") }
        print("  the two stores \(a == b ? "hold the same notes" : "DIFFER: \(b)"); 'groceries' is one note with the tags of both")
        laptop.ensemble.dismantle()
        phone.ensemble.dismantle()
        print()
    }

    /// Where a blocked thread finds what the task it waited for produced; written once, before the
    /// semaphore is signalled.
    private final class Outcome<T>: @unchecked Sendable {
        var result: Result<T, any Error>?
    }

    /// Runs async ensemble calls from the demo's synchronous command.
    private static func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        let outcome = Outcome<T>()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do { outcome.result = .success(try await body()) } catch { outcome.result = .failure(error) }
            done.signal()
        }
        done.wait()
        return try outcome.result!.get()
    }
}
