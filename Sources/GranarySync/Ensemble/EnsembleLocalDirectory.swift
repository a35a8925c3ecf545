import Foundation

/// Where an ensemble keeps its local data for one store, and the names inside.
///
/// Keyed by the persistent store's UUID: a store deleted and created again by the app (the seed's "delete
/// the local store and resync") has a new UUID, so its old event data can never be mistaken for the new
/// store's; the ensemble finds no event store, is not leeched, and a leech starts fresh.
struct EnsembleLocalDirectory: Sendable, Hashable {
    /// `<root>/<ensembleIdentifier>`: one directory per store UUID inside.
    let ensembleDirectory: URL
    /// `<ensembleDirectory>/<store UUID>`.
    let url: URL

    init(root: URL, ensembleIdentifier: String, storeUUID: UUID) {
        ensembleDirectory = root.appendingPathComponent(ensembleIdentifier, isDirectory: true)
        url = ensembleDirectory.appendingPathComponent(storeUUID.uuidString, isDirectory: true)
    }

    /// The default root: beside a durable store (`<store>.sync`), so that moving or deleting the store's
    /// folder with its neighbours takes its sync state along; for a store without a URL, the user's data
    /// directory (`$XDG_DATA_HOME/granary/sync`, else `~/.local/share/granary/sync`).
    static func defaultRoot(forStoreAt storeURL: URL?) -> URL {
        if let storeURL {
            let standardized = storeURL.standardizedFileURL
            return standardized.deletingLastPathComponent()
                .appendingPathComponent(standardized.lastPathComponent + ".sync", isDirectory: true)
        }
        let environment = ProcessInfo.processInfo.environment
        let data = environment["XDG_DATA_HOME"].map { URL(fileURLWithPath: $0, isDirectory: true) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share", isDirectory: true)
        return data.appendingPathComponent("granary/sync", isDirectory: true)
    }

    var eventStore: URL { url.appendingPathComponent("events.granary", isDirectory: true) }
    /// Downloads and staged uploads (`TransitDirectories`), emptied at every open.
    var transit: URL { url.appendingPathComponent("transit", isDirectory: true) }
    var trash: URL { url.appendingPathComponent("trash", isDirectory: true) }

    var hasEventStore: Bool { FileManager.default.fileExists(atPath: eventStore.path) }

    func create() throws(SyncError) {
        do {
            for directory in [url, transit, trash] {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            }
        } catch {
            throw .eventStore("cannot create \(url.path): \(error.localizedDescription)")
        }
    }

    /// Deletes the directories of other store UUIDs: stores that were deleted and made again. Only
    /// directories named by a UUID are touched, so a root shared with other files loses nothing else.
    func removeStaleSiblings() {
        let manager = FileManager.default
        guard let names = try? manager.contentsOfDirectory(atPath: ensembleDirectory.path) else { return }
        for name in names where name != url.lastPathComponent && UUID(uuidString: name) != nil {
            try? manager.removeItem(at: ensembleDirectory.appendingPathComponent(name, isDirectory: true))
        }
    }

    /// Moves the event store out of the way in one rename (the deleech's commit point), then deletes it.
    /// A kill before the rename leaves the store leeched; after it, not leeched, with garbage in the trash
    /// that the next call removes.
    func discardEventStore() throws(SyncError) {
        let manager = FileManager.default
        do {
            try manager.createDirectory(at: trash, withIntermediateDirectories: true)
            if manager.fileExists(atPath: eventStore.path) {
                let target = trash.appendingPathComponent(UUID().uuidString, isDirectory: true)
                try manager.moveItem(at: eventStore, to: target)
            }
            emptyTrash()
        } catch {
            throw .eventStore("cannot remove the event store at \(eventStore.path): \(error.localizedDescription)")
        }
    }

    func emptyTrash() {
        let manager = FileManager.default
        for name in (try? manager.contentsOfDirectory(atPath: trash.path)) ?? [] {
            try? manager.removeItem(at: trash.appendingPathComponent(name))
        }
    }
}
