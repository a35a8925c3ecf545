import Foundation
import Granary
import GranaryRecords
import GranaryStack

// The seed's example model (CorePersistence's `User`, `Address`, `Order`), built in code, shared by
// the GranaryRecords suites: each class keyed by an ID with a uniqueness constraint, so a store made
// in a temporary directory behaves as an app's.

final class User: ManagedObject, Persistable {
    @Managed var uuid: String
    @Managed var name: String
    @Managed var numberOfOrders: Int
    @Managed var birthDate: Date?
    @Managed var address: Address?
    @Managed var orders: Set<Order>
    static var idKeyPath: ReferenceWritableKeyPath<User, String> { \.uuid }
}

final class Address: ManagedObject, Persistable {
    @Managed var id: Int
    @Managed var street: String
    @Managed var city: String?
    @Managed var user: User?
    static var idKeyPath: ReferenceWritableKeyPath<Address, Int> { \.id }
}

final class Order: ManagedObject, Persistable {
    @Managed var orderID: Int
    @Managed var total: Double
    @Managed var user: User?
    static var idKeyPath: ReferenceWritableKeyPath<Order, Int> { \.orderID }
}

enum RecordsTestModel {
    /// The model (one instance for the process: classes bind to it once).
    static let model: ManagedObjectModel = {
        do {
            return try ManagedObjectModel(version: "1") {
                Entity("User", as: User.self) {
                    Attribute("uuid", .string)
                    Attribute("name", .string, defaultValue: "")
                    Attribute("numberOfOrders", .integer64, defaultValue: 0)
                    Attribute("birthDate", .date, optional: true)
                    Relationship("address", to: "Address", inverse: "user", deleteRule: .cascade)
                    Relationship("orders", toMany: "Order", inverse: "user", deleteRule: .cascade)
                    Unique("uuid")
                }
                Entity("Address", as: Address.self) {
                    Attribute("id", .integer64)
                    Attribute("street", .string, defaultValue: "")
                    Attribute("city", .string, optional: true)
                    Relationship("user", to: "User", inverse: "address")
                    Unique("id")
                }
                Entity("Order", as: Order.self) {
                    Attribute("orderID", .integer64)
                    Attribute("total", .double, defaultValue: 0.0)
                    Relationship("user", to: "User", inverse: "orders")
                    Unique("orderID")
                }
            }
        } catch {
            fatalError("the records test model does not build: \(error)")
        }
    }()

    /// A fresh directory under the temporary directory, named after the test.
    static func scratchDirectory(_ label: String = #function) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("granary-records")
            .appendingPathComponent("\(label.filter { $0.isLetter })-\(UUID().uuidString.prefix(8))", isDirectory: true)
    }

    /// A manager over a durable store in a new temporary directory.
    static func makeManager(_ label: String = #function) throws -> StoreManager {
        try StoreManager(name: "Shop", model: model, location: .directory(scratchDirectory(label)))
    }
}
