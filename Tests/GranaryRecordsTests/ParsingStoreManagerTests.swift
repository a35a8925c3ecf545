import Foundation
import Granary
import GranaryRecords
import Testing

// The seed's User / Address / Order as CorePersistence's README maps them.
extension User: Parsable {
    func mapValues(from map: MappingValues) throws {
        try name <- map["name"]
        try numberOfOrders <- map["number_of_orders"]
        try birthDate <- (map["birth_date"], dateFormats: ["yyyy-MM-dd"])
        try address <- map["address"]
        try orders <- map["orders"]
    }
}

extension Address: Parsable {
    func mapValues(from map: MappingValues) throws {
        try street <- map["street"]
        try city <- map["city"]
    }
}

extension Order: Parsable {
    static var jsonKey: String { "id" }
    func mapValues(from map: MappingValues) throws {
        try total <- map["total"]
    }
}

/// The store manager's forms of `parse`: one write on the serial writer, one save, results on the main
/// context in input order; a failing call writes nothing.
@Suite struct ParsingStoreManagerTests {
    static func json() -> [Any] { [
        ["uuid": "u1", "name": "Mark", "number_of_orders": "2", "birth_date": "1954-03-10",
         "address": ["id": 7, "street": "Riva 1"], "orders": [["id": 1, "total": 9.5], 2]],
        ["uuid": "u2", "name": "Ann", "address": 7],
        ["uuid": "u1", "name": "Mark Twain"],
    ] }

    @Test func theAsyncFormSavesOnceAndTheMainContextSeesIt() async throws {
        let store = try RecordsTestModel.makeManager()
        let ids = try await User.parse(jsonArray: Self.json(), in: store)
        #expect(ids.count == 3 && ids[0] == ids[2])
        let main = store.mainContext
        let (names, addressUsers, orders) = try main.performAndWait { () throws -> ([String], Int, Set<Int>) in
            let users = try ids.map { try #require(try main.existingObject(with: $0) as? User) }
            return (users.map(\.name), try main.fetch(FetchRequest<Address>()).count,
                    Set(users[0].orders.map(\.orderID)))
        }
        #expect(names == ["Mark Twain", "Ann", "Mark Twain"])
        #expect(addressUsers == 1 && orders == [1, 2])
    }

    @Test func theClosureFormDeliversMainContextObjectsInInputOrder() async throws {
        let store = try RecordsTestModel.makeManager()
        let uuids = await withCheckedContinuation { (continuation: CheckedContinuation<[String], Never>) in
            User.parse(jsonArray: Self.json(), in: store) { result in
                continuation.resume(returning: (try? result.get().map(\.uuid)) ?? [])
            }
        }
        #expect(uuids == ["u1", "u2", "u1"])
    }

    @Test func aFailingCallWritesNothing() async throws {
        let store = try RecordsTestModel.makeManager()
        try await User.parse(jsonData: Data(#"[{"uuid": "u0", "name": "Zed"}]"#.utf8), in: store)
        await #expect(throws: ParsingError.self) {
            try await User.parse(jsonArray: [["uuid": "u5", "name": "New"], ["uuid": "u0", "number_of_orders": "many"]], in: store)
        }
        let report = try await User.parseSkippingInvalid(jsonArray: [["uuid": "u6"], ["name": "no ID"]], in: store)
        #expect(report.objects.count == 1 && report.skipped.map(\.index) == [1])
        let main = store.mainContext
        let stored = try main.performAndWait { try main.fetch(FetchRequest<User>()).map(\.uuid).sorted() }
        #expect(stored == ["u0", "u6"])
    }
}
