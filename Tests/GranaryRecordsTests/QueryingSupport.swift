import Foundation
import Granary
import GranaryRecords

final class Customer: ManagedObject, Persistable {
    @Managed var uuid: String
    @Managed var name: String
    @Managed var email: String?
    @Managed var numberOfOrders: Int
    @Managed var birthDate: Date
    @Managed var orders: Set<Purchase>
    static var idKeyPath: ReferenceWritableKeyPath<Customer, String> { \.uuid }
    /// Not stored: for the "not a stored property" error.
    var greeting: String { "hello" }
    /// Stored by Swift but not in the model.
    var scratch = 0
}

final class Purchase: ManagedObject {
    @Managed var title: String
    @Managed var amount: Double
    @Managed var user: Customer?
}

func makeQueryModel() throws -> ManagedObjectModel {
    try ManagedObjectModel(version: "1") {
        Entity("Customer", as: Customer.self) {
            Attribute("uuid", .string)
            Attribute("name", .string)
            Attribute("email", .string, optional: true)
            Attribute("numberOfOrders", .integer64, defaultValue: 0)
            Attribute("birthDate", .date)
            Relationship("orders", toMany: "Purchase", inverse: "user", deleteRule: .cascade)
            Unique("uuid")
            Index("byName", "name")
        }
        Entity("Purchase", as: Purchase.self) {
            Attribute("title", .string)
            Attribute("amount", .double, defaultValue: 0)
            Relationship("user", to: "Customer", inverse: "orders", deleteRule: .nullify)
        }
    }
}

func queryScratchURL(_ label: String = #function) -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("granary-records")
        .appendingPathComponent("\(label.filter { $0.isLetter })-\(UUID().uuidString.prefix(8)).granary")
}

/// A durable store with the records model, and a private-queue context on it.
func makeQueryStack() throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
    let coordinator = PersistentStoreCoordinator(managedObjectModel: try makeQueryModel())
    try coordinator.addPersistentStore(type: .durable, at: queryScratchURL())
    return (coordinator, ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator))
}

/// SplitMix64: a seeded generator, so that a failing property run can be replayed.
struct SplitMixGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: Int) { state = UInt64(bitPattern: Int64(seed)) }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
