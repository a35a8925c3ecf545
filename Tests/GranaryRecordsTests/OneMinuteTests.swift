import Foundation
import Granary
import GranaryRecords
import Testing

// The README's "CorePersistence in one minute", run as written (DocumentationCodeTests checks the README
// shows these regions word for word).

// snippet: records-one-minute-class
final class Member: ManagedObject, Parsable {
    @Managed var uuid: String
    @Managed var name: String
    @Managed var visits: Int
    static var idKeyPath: ReferenceWritableKeyPath<Member, String> { \.uuid }
    static var jsonKey: String { "id" }

    func mapValues(from map: MappingValues) throws {
        try name <- map["name"]
        try visits <- map["visits"]          // 3 and "3" both convert; "three" throws, naming the key
    }
}
// end-snippet

@Suite(.serialized) struct OneMinuteTests {
    static let model: ManagedObjectModel = {
        do {
            return try ManagedObjectModel(version: "club-1") {
                Entity("Member", as: Member.self) {
                    Attribute("uuid", .string)
                    Attribute("name", .string, defaultValue: "")
                    Attribute("visits", .integer64, defaultValue: 0)
                    Unique("uuid")
                }
            }
        } catch {
            fatalError("the one-minute model is invalid: \(error)")
        }
    }()

    @Test func theReadmeExampleRuns() async throws {
        let clubModel = Self.model
        let storeURL = FileManager.default.temporaryDirectory.appendingPathComponent("one-minute-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: storeURL) }
        // snippet: records-one-minute
        let manager = try StoreManager(name: "Club", model: clubModel, location: .directory(storeURL))
        let json = Data(#"[{"id": "m1", "name": "Ada", "visits": 3}, {"id": "m2", "name": "Bob", "visits": "1"}]"#.utf8)
        try await Member.parse(jsonData: json, in: manager)                  // one save; IDs upserted
        try await Member.create(in: manager) { member, _ in                  // ID m2 exists: updated
            member.uuid = "m2"
            member.visits = 5
        }
        let main = manager.mainContext                                       // the view context
        let names = try await main.perform {
            try Member.getAll(comparisonClauses: [.descending(\Member.visits)], from: manager).map(\.name)
        }                                                                     // ["Bob", "Ada"]
        // end-snippet
        #expect(names == ["Bob", "Ada"])
        let count = try await manager.mainContext.perform { try manager.mainContext.count(for: FetchRequest<Member>()) }
        #expect(count == 2)
    }
}
