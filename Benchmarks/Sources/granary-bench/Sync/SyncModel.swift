import Foundation
import Granary

/// The sync bench's model: items in folders, every object with a global identifier (`uuid`), as an app
/// that syncs would have.
final class SyncItem: ManagedObject {
    @Managed var uuid: String
    @Managed var name: String
    @Managed var count: Int
    @Managed var date: Date
    @Managed var note: String
    @Managed var folder: SyncFolder?
}

final class SyncFolder: ManagedObject {
    @Managed var uuid: String
    @Managed var name: String
    @Managed var items: Set<SyncItem>
}

enum SyncModel {
    static let folders = 100
    /// Properties an inserted item sends: five attributes and its folder.
    static let propertiesPerItem = 6

    static func make() throws -> ManagedObjectModel {
        try ManagedObjectModel(version: "1") {
            Entity("Item", as: SyncItem.self) {
                Attribute("uuid", .string)
                Attribute("name", .string)
                Attribute("count", .integer64)
                Attribute("date", .date)
                Attribute("note", .string)
                Relationship("folder", to: "Folder", inverse: "items", deleteRule: .nullify)
            }
            Entity("Folder", as: SyncFolder.self) {
                Attribute("uuid", .string)
                Attribute("name", .string)
                Relationship("items", toMany: "Item", inverse: "folder", deleteRule: .nullify)
            }
        }
    }
}
