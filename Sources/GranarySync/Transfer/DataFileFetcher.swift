import Foundation

/// Brings the data files that downloaded events and baselines name into the event store (M15, §9 step
/// 5): each file not held is downloaded, checked (frame, checksum, and the content hash in its name),
/// and its value stored.
///
/// A file not listed, gone, or failing a check (a sync service still copying it, a damaged copy) is not yet arrived: nothing is stored, and whatever names it waits (`ReadinessCheck`,
/// `BaselineIntegrator`) until a later merge finds it whole.
struct DataFileFetcher: Sendable {
    let fileSystem: any CloudFileSystem
    let layout: CloudLayout
    let eventStore: EventStore
    let transit: TransitDirectories

    struct Report: Hashable, Sendable {
        /// Files downloaded and stored.
        var stored: [CloudFileName] = []
        /// Files needed but not stored, and why.
        var diagnostics: [TransferDiagnostic] = []
        /// Needed files the store still lacks after the run.
        var missing: Set<CloudFileName> = []
    }

    /// Fetches the files of `names` the event store does not hold; only those `listed` holds when a
    /// listing is given (the others are known to be absent, and asking costs a round trip each).
    /// - Throws: `SyncError.cloud` when a download fails for another reason than the file being gone
    ///   (what was stored before stays stored); `.eventStore`.
    func fetch(_ names: Set<CloudFileName>, listed: CloudSnapshot? = nil) async throws(SyncError) -> Report {
        var report = Report()
        guard !names.isEmpty else { return report }
        let held: Set<CloudFileName>
        do { held = try eventStore.heldDataFiles(among: names) } catch { throw SyncError(error) }
        var fetched: [DataFileRecord] = []
        func store() throws(SyncError) {
            do { try eventStore.storeDataFiles(fetched) } catch { throw SyncError(error) }
            report.stored += fetched.map(\.name)
            fetched = []
        }
        for name in names.subtracting(held).sorted(by: { $0.fileName < $1.fileName }) {
            guard listed?.contains(name) ?? true else {
                report.missing.insert(name)
                continue
            }
            let fileBytes: Data
            do {
                fileBytes = try await transit.fetch(layout.path(for: name), name: name.fileName, from: fileSystem)
            } catch .notFound {
                report.diagnostics.append(.vanishedFile(name: name.fileName))
                report.missing.insert(name)
                continue
            } catch {
                try store()
                throw .cloud(error)
            }
            let value: Data
            do { value = try LargeValues.value(inFile: fileBytes, name: name) } catch {
                report.diagnostics.append(.damagedFile(name: name.fileName, reason: error.description))
                report.missing.insert(name)
                continue
            }
            fetched.append(DataFileRecord(name: name, bytes: value))
            // Large values: a few per commit keeps memory bounded.
            if fetched.count >= 16 { try store() }
        }
        try store()
        return report
    }
}
