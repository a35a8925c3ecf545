import Foundation

// Ensembles' class methods for what is in a cloud file system as a whole.
extension PersistentStoreEnsemble {
    /// The identifiers of the ensembles in `fileSystem`: the directories at its root holding an ensemble's
    /// `format.json`, sorted.
    /// - Throws: ``SyncError/cloud(_:)``.
    public static func ensembleIdentifiers(in fileSystem: any CloudFileSystem) async throws(SyncError) -> [String] {
        do {
            if await !fileSystem.isConnected { try await fileSystem.connect() }
            var identifiers: [String] = []
            for case let .directory(name) in try await fileSystem.contentsOfDirectory(atPath: "") {
                guard let layout = try? CloudLayout(ensembleIdentifier: name) else { continue }
                if try await fileSystem.fileExists(atPath: layout.formatFile).exists { identifiers.append(name) }
            }
            return identifiers.sorted()
        } catch {
            throw .cloud(error)
        }
    }

    /// Removes an ensemble's data from `fileSystem` (Ensembles' `removeEnsembleWithIdentifier:inCloudFileSystem:`):
    /// every device leeched to it is deleeched at its next merge, told ``SyncError/storeUnregistered``,
    /// and keeps its store's objects. Leeching again starts a new ensemble from that device's data.
    /// - Throws: ``SyncError/invalidEnsembleIdentifier(_:)``, ``SyncError/cloud(_:)``.
    public static func removeEnsemble(identifier: String, in fileSystem: any CloudFileSystem) async throws(SyncError) {
        let layout: CloudLayout
        do { layout = try CloudLayout(ensembleIdentifier: identifier) } catch { throw .invalidEnsembleIdentifier(identifier) }
        do {
            if await !fileSystem.isConnected { try await fileSystem.connect() }
            try await fileSystem.removeItem(atPath: layout.root)
        } catch {
            throw .cloud(error)
        }
    }
}
