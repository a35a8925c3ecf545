import Foundation
import Granary
import GranaryRecords

// The records bench's Granary classes and model (items from a web service, each linked by ID to one of
// 1,000 parents), shared by granary-bench and records-probe.

public final class FeedParent: ManagedObject, Parsable {
    @Managed public var serverID: Int64
    @Managed public var name: String
    @Managed public var items: Set<FeedItem>
    public static var idKeyPath: ReferenceWritableKeyPath<FeedParent, Int64> { \.serverID }
    public static var jsonKey: String { "id" }

    public func mapValues(from map: MappingValues) throws {
        try name <- map["name"]
    }
}

public final class FeedItem: ManagedObject, Parsable {
    @Managed public var serverID: Int64
    @Managed public var name: String
    @Managed public var score: Double
    @Managed public var quantity: Int32
    @Managed public var active: Bool
    @Managed public var created: Date
    @Managed public var parent: FeedParent?
    public static var idKeyPath: ReferenceWritableKeyPath<FeedItem, Int64> { \.serverID }
    public static var jsonKey: String { "id" }

    public func mapValues(from map: MappingValues) throws {
        try name <- map["name"]
        try score <- map["score"]
        try quantity <- map["quantity"]
        try active <- map["active"]
        try created <- map["created"]
        try parent <- map["parent"]
    }
}

public enum FeedModel {
    public static let parents = 1_000

    /// One model for the process: classes bind to their entities once.
    public static let model: ManagedObjectModel = {
        do {
            return try ManagedObjectModel(version: "1") {
                Entity("FeedParent", as: FeedParent.self) {
                    Attribute("serverID", .integer64)
                    Attribute("name", .string, defaultValue: "")
                    Relationship("items", toMany: "FeedItem", inverse: "parent", deleteRule: .nullify)
                    Unique("serverID")
                }
                Entity("FeedItem", as: FeedItem.self) {
                    Attribute("serverID", .integer64)
                    Attribute("name", .string, defaultValue: "")
                    Attribute("score", .double, defaultValue: 0.0)
                    Attribute("quantity", .integer32, defaultValue: Int32(0))
                    Attribute("active", .boolean, defaultValue: false)
                    Attribute("created", .date, defaultValue: Date(timeIntervalSince1970: 0))
                    Relationship("parent", to: "FeedParent", inverse: "items", deleteRule: .nullify)
                    Unique("serverID")
                }
            }
        } catch {
            fatalError("the records bench model does not build: \(error)")
        }
    }()
}
