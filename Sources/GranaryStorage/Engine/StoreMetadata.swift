import Foundation

/// What a store says about itself: its identity, the schema version it was written with, and free-form
/// entries for the layers above (Core Data keeps model version hashes here).
///
/// Metadata is written through the log like any other change, so it is exactly as durable and atomic
/// as the data it describes.
public struct StoreMetadata: Sendable, Hashable, Codable {
    /// Chosen when the store is created and never changed; identifies the store in object-ID URIs.
    public var storeUUID: UUID
    /// A version tag for the schema the data was written with; the engine stores it and never interprets it.
    public var schemaVersion: String?
    public var userInfo: [String: String]

    public init(storeUUID: UUID = UUID(), schemaVersion: String? = nil, userInfo: [String: String] = [:]) {
        self.storeUUID = storeUUID
        self.schemaVersion = schemaVersion
        self.userInfo = userInfo
    }
}
