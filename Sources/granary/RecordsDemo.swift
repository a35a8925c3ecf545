import Foundation
import Granary
import GranaryRecords

final class Member: ManagedObject, Parsable {
    @Managed var uuid: String
    @Managed var name: String
    @Managed var visits: Int
    @Managed var joined: Date?
    static var idKeyPath: ReferenceWritableKeyPath<Member, String> { \.uuid }
    static var jsonKey: String { "id" }

    func mapValues(from map: MappingValues) throws {
        try name <- map["name"]
        try visits <- map["visits"]
        try joined <- map["joined"]
    }
}

/// The records half of the demo (CorePersistence's services): a JSON array imported by ID into a durable
/// store in one save, imported again with changes (every ID exists: updated in place, no duplicate), and
/// an observed `Results` told of each save in one batch.
enum RecordsDemo {
    static let members = 5_000

    static func run(store url: URL) throws {
        print("Records services (module GranaryRecords), store \(url.lastPathComponent)")
        let model = try ManagedObjectModel(version: "1") {
            Entity("Member", as: Member.self) {
                Attribute("uuid", .string)
                Attribute("name", .string, defaultValue: "")
                Attribute("visits", .integer64, defaultValue: 0)
                Attribute("joined", .date, optional: true)
                Unique("uuid")
            }
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .durable, at: url)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let regulars = try Results<Member>(context: context, filterBy: \Member.visits >= 40)
            print("  observed: members with 40 visits or more, \(regulars.toArray().count) now")
            regulars.registerForChanges { changes in
                let kinds = Dictionary(grouping: changes, by: { "\($0.type)" }).map { "\($0.value.count) \($0.key)" }.sorted()
                print("    Results: one batch for the save: \(kinds.joined(separator: ", "))")
            }
            for round in 0..<2 {
                let json = (0..<members).map { i -> [String: Any] in
                    ["id": "m\(i)", "name": "Member \(i)", "visits": round == 0 ? i % 50 : (i % 50 + 3) % 60,
                     "joined": "2024-0\(1 + i % 9)-1\(i % 10)T10:00:00Z"]
                }
                let data = try JSONSerialization.data(withJSONObject: json)
                let start = ContinuousClock.now
                let imported = try Member.parse(jsonData: data, in: context)
                try context.save()
                let ms = (ContinuousClock.now - start) / .milliseconds(1)
                let label = round == 0 ? "import \(members) members from JSON, one save" : "import them again, changed (all exist: updated)"
                print(String(format: "  %-52@ %9.2f ms", label as NSString, ms))
                print("    \(imported.count) objects back in input order; the store holds \(try context.count(for: FetchRequest<Member>()))")
            }
            print("  observed now: \(regulars.toArray().count) members with 40 visits or more")
            let bad = Data(#"[{"id": "m1", "visits": "many"}]"#.utf8)
            do {
                _ = try Member.parse(jsonData: bad, in: context)
            } catch {
                print("  a bad element is refused, nothing written: \(error)")
            }
        }
        print()
    }
}
