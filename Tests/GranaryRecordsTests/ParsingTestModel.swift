import Foundation
import Granary
import GranaryRecords

// The seed's User / Address / Order, with one attribute of every type the JSON conversions cover.

enum UserStatus: String { case active, suspended }

final class PUser: ManagedObject, Parsable {
    @Managed var uuid: String
    @Managed var firstName: String?
    @Managed var lastName: String?
    @Managed var age: Int
    @Managed var level: Int16
    @Managed var points: Int32
    @Managed var big: Int64
    @Managed var score: Double
    @Managed var rating: Float
    @Managed var balance: Decimal
    @Managed var isActive: Bool
    @Managed var birthDate: Date?
    @Managed var token: UUID?
    @Managed var homepage: URL?
    @Managed var avatar: Data?
    @Managed var statusRaw: String
    @Managed var address: PAddress?
    @Managed var orders: Set<POrder>
    @Managed var tags: [PTag]
    @Managed var manager: PUser?
    @Managed var reports: Set<PUser>

    static var idKeyPath: ReferenceWritableKeyPath<PUser, String> { \.uuid }

    var status: UserStatus {
        get { UserStatus(rawValue: statusRaw) ?? .active }
        set { statusRaw = newValue.rawValue }
    }

    func mapValues(from map: MappingValues) throws {
        try firstName <- map["first_name"]
        try lastName <- map["last_name"]
        try age <- map["age"]
        try level <- map["level"]
        try points <- map["points"]
        try big <- map["big"]
        try score <- map["score"]
        try rating <- map["rating"]
        try balance <- map["balance"]
        try isActive <- map["is_active"]
        try birthDate <- (map["birth_date"], dateFormats: ["yyyy-MM-dd"])
        try token <- map["token"]
        try homepage <- map["homepage"]
        try avatar <- map["avatar"]
        try status <- map["status"]
        try address <- map["address"]
        try orders <- map["orders"]
        try tags <- map["tags"]
        try manager <- map["manager"]
    }
}

final class PAddress: ManagedObject, Parsable {
    @Managed var id: String
    @Managed var street: String?
    @Managed var city: String?
    @Managed var users: Set<PUser>
    static var idKeyPath: ReferenceWritableKeyPath<PAddress, String> { \.id }

    func mapValues(from map: MappingValues) throws {
        try street <- map["street"]
        try city <- map["city"]
        try users <- map["users"]
    }
}

final class POrder: ManagedObject, Parsable {
    @Managed var number: Int
    @Managed var total: Decimal
    @Managed var user: PUser?
    static var idKeyPath: ReferenceWritableKeyPath<POrder, Int> { \.number }
    static var jsonKey: String { "id" }

    func mapValues(from map: MappingValues) throws {
        try total <- map["total"]
        try user <- map["user"]
    }
}

final class PTag: ManagedObject, Parsable {
    @Managed var slug: String
    @Managed var users: Set<PUser>
    static var idKeyPath: ReferenceWritableKeyPath<PTag, String> { \.slug }
    func mapValues(from map: MappingValues) throws {}
}

/// An entity whose ID sits in a nested object of the JSON (`{"meta": {"id": 7}}`).
final class PEvent: ManagedObject, Parsable {
    @Managed var code: Int
    @Managed var title: String?
    static var idKeyPath: ReferenceWritableKeyPath<PEvent, Int> { \.code }
    static var jsonKey: String { "meta.id" }
    func mapValues(from map: MappingValues) throws {
        try title <- map["title"]
    }
}

func makeParsingModel() throws -> ManagedObjectModel {
    try ManagedObjectModel(version: "parsing-1") {
        Entity("User", as: PUser.self) {
            Attribute("uuid", .string)
            Attribute("firstName", .string, optional: true)
            Attribute("lastName", .string, optional: true)
            Attribute("age", .integer64, defaultValue: 0)
            Attribute("level", .integer16, defaultValue: Int16(0))
            Attribute("points", .integer32, defaultValue: Int32(0))
            Attribute("big", .integer64, defaultValue: Int64(0))
            Attribute("score", .double, defaultValue: 0.0)
            Attribute("rating", .float, defaultValue: Float(0))
            Attribute("balance", .decimal, defaultValue: Decimal(0))
            Attribute("isActive", .boolean, defaultValue: false)
            Attribute("birthDate", .date, optional: true)
            Attribute("token", .uuid, optional: true)
            Attribute("homepage", .uri, optional: true)
            Attribute("avatar", .binaryData, optional: true)
            Attribute("statusRaw", .string, defaultValue: "active")
            Relationship("address", to: "Address", inverse: "users")
            Relationship("orders", toMany: "Order", inverse: "user")
            Relationship("tags", toMany: "Tag", ordered: true, inverse: "users")
            Relationship("manager", to: "User", inverse: "reports")
            Relationship("reports", toMany: "User", inverse: "manager")
            Unique("uuid")
        }
        Entity("Address", as: PAddress.self) {
            Attribute("id", .string)
            Attribute("street", .string, optional: true)
            Attribute("city", .string, optional: true)
            Relationship("users", toMany: "User", inverse: "address")
            Unique("id")
        }
        Entity("Order", as: POrder.self) {
            Attribute("number", .integer64)
            Attribute("total", .decimal, defaultValue: Decimal(0))
            Relationship("user", to: "User", inverse: "orders")
            Unique("number")
        }
        Entity("Tag", as: PTag.self) {
            Attribute("slug", .string)
            Relationship("users", toMany: "User", inverse: "tags")
            Unique("slug")
        }
        Entity("Event", as: PEvent.self) {
            Attribute("code", .integer64)
            Attribute("title", .string, optional: true)
            Unique("code")
        }
    }
}

/// A durable store in a scratch directory, its coordinator and a private-queue context.
func makeParsingStack(at url: URL? = nil) throws -> (URL, PersistentStoreCoordinator, ManagedObjectContext) {
    let url = url ?? FileManager.default.temporaryDirectory.appendingPathComponent("granary-parsing")
        .appendingPathComponent("\(UUID().uuidString.prefix(8)).granary")
    let coordinator = PersistentStoreCoordinator(managedObjectModel: try makeParsingModel())
    try coordinator.addPersistentStore(type: .durable, at: url)
    return (url, coordinator, ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator))
}
