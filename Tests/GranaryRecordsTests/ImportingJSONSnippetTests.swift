import Foundation
import Granary
import GranaryRecords
import Testing

// The code of the ImportingJSON article, run here (DocumentationCodeTests checks it is word for word).

// snippet: importing-json-classes
final class Subscriber: ManagedObject, Parsable {
    @Managed var number: Int
    @Managed var name: String?
    @Managed var joined: Date?
    @Managed var plan: Plan?
    static var idKeyPath: ReferenceWritableKeyPath<Subscriber, Int> { \.number }
    static var jsonKey: String { "id" }                 // defaults to the ID property's name

    func mapValues(from map: MappingValues) throws {
        try name <- map["name"]                          // absent: unchanged; null: nil
        try joined <- (map["joined"], dateFormats: ["yyyy-MM-dd"])   // POSIX locale, UTC
        try plan <- map["plan"]                          // a nested object (upserted by its ID) or an ID
    }
}

final class Plan: ManagedObject, Parsable {
    @Managed var code: String
    @Managed var price: Decimal
    static var idKeyPath: ReferenceWritableKeyPath<Plan, String> { \.code }

    func mapValues(from map: MappingValues) throws {
        try price <- map["price"]                        // 9, "9.90" and 9.9 all convert; "abc" throws
    }
}
// end-snippet

@Suite struct ImportingJSONSnippetTests {
    @Test func theArticleExampleImports() throws {
        let model = try ManagedObjectModel(version: "snippet-1") {
            Entity("Subscriber", as: Subscriber.self) {
                Attribute("number", .integer64)
                Attribute("name", .string, optional: true)
                Attribute("joined", .date, optional: true)
                Relationship("plan", to: "Plan", inverse: nil)
                Unique("number")
            }
            Entity("Plan", as: Plan.self) {
                Attribute("code", .string)
                Attribute("price", .decimal, defaultValue: Decimal(0))
                Unique("code")
            }
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .inMemory, at: nil)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let data = Data(#"[{"id": 1, "name": "Ada", "joined": "2024-05-01", "plan": {"code": "pro", "price": "9.90"}}, {"id": 2, "plan": "pro"}]"#.utf8)
        var result: [(Int, String?)] = []
        // snippet: importing-json-call
        try context.performAndWait {
            let subscribers = try Subscriber.parse(jsonData: data, in: context)   // in input order
            try context.save()                                                   // one call, one save
            result = subscribers.map { ($0.number, $0.plan?.code) }
        }
        // end-snippet
        #expect(result.map(\.0) == [1, 2] && result.map(\.1) == ["pro", "pro"])

        // The article's racing-imports snippet: imports and saves in one call.
        let again = Data(#"[{"id": 2, "name": "Bo"}, {"id": 3, "plan": "pro"}]"#.utf8)
        try importAgain(again, context)
        let names = try context.performAndWait {
            try context.fetch(FetchRequest<Subscriber>()).map { "\($0.number) \($0.name ?? "-")" }.sorted()
        }
        #expect(names == ["1 Ada", "2 Bo", "3 -"])
    }

    func importAgain(_ data: Data, _ context: ManagedObjectContext) throws {
        // snippet: importing-json-race
        try context.performAndWait {
            // Runs the import again if another context saved some of these IDs first.
            _ = try Subscriber.parseAndSave(jsonData: data, in: context)
        }
        // end-snippet
    }
}
