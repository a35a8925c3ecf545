import Foundation
import Testing
@testable import Granary

/// Random edits of writers and their volumes (insert, delete, move, rename, change pages), saved every
/// few steps into a durable store: after every save, and after reopening, each derived attribute holds
/// what a plain reference model computes from the current values.
@Suite struct DerivedAttributePropertyTests {
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func int(_ n: Int) -> Int { Int(next() % UInt64(n)) }
        mutating func pick<T>(_ xs: [T]) -> T { xs[int(xs.count)] }
    }

    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(version: "derived-property") {
            Entity("Writer") {
                Attribute("id", .integer64)
                Attribute("name", .string)
                Attribute("nameLower", .string, optional: true, derivation: "lowercase:(name)")
                Attribute("searchName", .string, optional: true, indexed: true, derivation: "canonical:(name)")
                Attribute("bookCount", .integer64, optional: true, derivation: "books.@count")
                Attribute("totalPages", .integer64, optional: true, derivation: "books.@sum.pages")
                Attribute("longest", .integer32, optional: true, derivation: "books.@max.pages")
                Attribute("shortest", .integer32, optional: true, derivation: "books.@min.pages")
                Relationship("books", toMany: "Volume", inverse: "writer")
            }
            Entity("Volume") {
                Attribute("id", .integer64)
                Attribute("pages", .integer32, defaultValue: 0)
                Attribute("writerName", .string, optional: true, derivation: "writer.name")
                Attribute("writerKey", .string, optional: true, derivation: "writer.searchName")
                Relationship("writer", to: "Writer", inverse: "books")
            }
        }
    }

    /// The reference: plain values by id.
    struct Reference {
        var names: [Int64: String] = [:]
        var pages: [Int64: Int32] = [:]
        var writerOf: [Int64: Int64] = [:]

        static func canonical(_ s: String) -> String {
            s.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil).lowercased()
        }

        func books(of writer: Int64) -> [Int32] {
            writerOf.filter { $0.value == writer }.map { pages[$0.key]! }
        }
    }

    static let names = ["Ann", "ÉMILE", "émile", "Zoë", "bo", "Ōta", "ANN"]

    final class Run {
        let url = scratchURL("DerivedAttributePropertyTests")
        let model: ManagedObjectModel
        var coordinator: PersistentStoreCoordinator
        var context: ManagedObjectContext
        var reference = Reference()
        var writers: [Int64: ManagedObject] = [:]
        var volumes: [Int64: ManagedObject] = [:]
        var nextID: Int64 = 1

        init() throws {
            model = try DerivedAttributePropertyTests.model()
            (coordinator, context) = try Self.open(model, url)
        }

        static func open(_ model: ManagedObjectModel, _ url: URL) throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            try coordinator.addPersistentStore(type: .durable, at: url)
            return (coordinator, ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator))
        }

        func step(_ r: inout Random) throws {
            try context.performAndWait {
                switch r.int(8) {
                case 0 where writers.count < 6, 1 where writers.isEmpty:
                    let id = nextID
                    nextID += 1
                    let name = r.pick(DerivedAttributePropertyTests.names)
                    writers[id] = try context.insert("Writer", ["id": id, "name": name])
                    reference.names[id] = name
                case 0, 1, 2:
                    let id = nextID
                    nextID += 1
                    let pages = Int32(r.int(900))
                    let writer = r.int(4) == 0 ? nil : writers.keys.sorted().randomElement(using: &r)
                    volumes[id] = try context.insert("Volume", ["id": id, "pages": pages, "writer": writer.flatMap { writers[$0] }])
                    reference.pages[id] = pages
                    if let writer { reference.writerOf[id] = writer }
                case 3 where !volumes.isEmpty:
                    let id = volumes.keys.sorted().randomElement(using: &r)!
                    context.delete(volumes.removeValue(forKey: id)!)
                    reference.pages[id] = nil
                    reference.writerOf[id] = nil
                case 4 where !volumes.isEmpty:
                    let id = volumes.keys.sorted().randomElement(using: &r)!
                    let writer = r.int(4) == 0 ? nil : writers.keys.sorted().randomElement(using: &r)
                    try volumes[id]!.setValue(writer.flatMap { writers[$0] }, forKey: "writer")
                    reference.writerOf[id] = writer
                case 5 where !volumes.isEmpty:
                    let id = volumes.keys.sorted().randomElement(using: &r)!
                    let pages = Int32(r.int(900))
                    try volumes[id]!.setValue(pages, forKey: "pages")
                    reference.pages[id] = pages
                case 6 where !writers.isEmpty:
                    let id = writers.keys.sorted().randomElement(using: &r)!
                    let name = r.pick(DerivedAttributePropertyTests.names)
                    try writers[id]!.setValue(name, forKey: "name")
                    reference.names[id] = name
                case 7 where writers.count > 1 && r.int(3) == 0:
                    let id = writers.keys.sorted().randomElement(using: &r)!
                    context.delete(writers.removeValue(forKey: id)!)
                    reference.names[id] = nil
                    for (volume, writer) in reference.writerOf where writer == id { reference.writerOf[volume] = nil }
                default:
                    try context.save()
                    try compare("after a save")
                }
            }
        }

        /// Compares every registered object with the reference; call on the context's queue after a save.
        func compare(_ when: String) throws {
            for (id, writer) in writers {
                let name = try #require(reference.names[id])
                let books = reference.books(of: id)
                let label = "\(when): writer \(id) (\(name), books \(books.sorted()))"
                #expect(try writer.get("nameLower", as: String.self) == name.lowercased(), "\(label)")
                #expect(try writer.get("searchName", as: String.self) == Reference.canonical(name), "\(label)")
                #expect(try writer.get("bookCount", as: Int64.self) == Int64(books.count), "\(label)")
                #expect(try writer.get("totalPages", as: Int64.self) == books.reduce(0) { $0 + Int64($1) }, "\(label)")
                #expect(try writer.get("longest", as: Int32.self) == books.max(), "\(label)")
                #expect(try writer.get("shortest", as: Int32.self) == books.min(), "\(label)")
            }
            for (id, volume) in volumes {
                let writer = reference.writerOf[id]
                let name = writer.flatMap { reference.names[$0] }
                #expect(try volume.get("writerName", as: String.self) == name, "\(when): volume \(id) of writer \(String(describing: writer))")
                #expect(try volume.get("writerKey", as: String.self) == name.map(Reference.canonical), "\(when): volume \(id)")
            }
        }

        func reopen() throws {
            try context.performAndWait { try context.save() }
            for store in coordinator.persistentStores { try coordinator.remove(store) }
            (coordinator, context) = try Self.open(model, url)
            try context.performAndWait {
                writers = Dictionary(uniqueKeysWithValues: try context.all("Writer", sortedBy: "id").map { (try $0.get("id", as: Int64.self)!, $0) })
                volumes = Dictionary(uniqueKeysWithValues: try context.all("Volume", sortedBy: "id").map { (try $0.get("id", as: Int64.self)!, $0) })
                #expect(Set(writers.keys) == Set(reference.names.keys) && Set(volumes.keys) == Set(reference.pages.keys))
                try compare("after reopening")
            }
            for store in coordinator.persistentStores { try coordinator.remove(store) }
            try? FileManager.default.removeItem(at: url)
        }
    }

    @Test func derivedValuesMatchAReferenceAfterEverySaveAndAfterReopening() async {
        await SeededPropertyRuns.run(environmentPrefix: "DERIVED", label: "DerivedAttributePropertyTests") { seed, steps in
            var r = Random(state: UInt64(truncatingIfNeeded: seed))
            let run = try Run()
            for _ in 0..<steps { try run.step(&r) }
            try run.reopen()
        }
    }
}

extension DerivedAttributePropertyTests.Random: RandomNumberGenerator {}
