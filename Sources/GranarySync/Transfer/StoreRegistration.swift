import Foundation

/// The payload of `stores/<storeID>.gsstore`: a store says it syncs in this ensemble (§4.4). Written
/// once, after the store's leech finished, removed at deleech; a registration gone while the store is
/// still registered means the ensemble's data was removed, and the store is deleeched (§9 step 2).
struct StoreRegistration: Codable, Hashable, Sendable {
    var store: StoreID
    var ensemble: String
    /// When the registration was written; informational.
    var registeredAt: Date
    /// The app's persistent store, informational (which device is which, when debugging a folder).
    var persistentStoreUUID: UUID?
    var modelHash: String?
    /// Which library wrote it.
    var library: String

    static let libraryName = "GranarySync, format \(SyncConstants.formatVersion)"

    /// The framed file.
    /// - Throws: `EventFileError.unencodable`.
    func encoded() throws(EventFileError) -> Data {
        try EventPayloadCoding.file(.registration, of: self)
    }
}

/// What the exporter writes into a registration besides the store ID and date.
struct RegistrationInfo: Hashable, Sendable {
    var persistentStoreUUID: UUID?
    var modelHash: String?

    init(persistentStoreUUID: UUID? = nil, modelHash: String? = nil) {
        self.persistentStoreUUID = persistentStoreUUID
        self.modelHash = modelHash
    }
}
