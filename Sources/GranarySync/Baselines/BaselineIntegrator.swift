import Foundation

/// Brings the cloud's baselines into a merge (§9 step 6): for each complete baseline in a listing that
/// this store has not handled, reads its first part's header; a baseline covered by what is integrated
/// already is only recorded, any other is downloaded whole and joined into the overlay (M32).
///
/// Nothing is committed for joined baselines here: the caller puts `Result.joined` into the merge's
/// finalize step (`EventStoreStep.joinedBaselines`), so the ledger, vector and count move together.
/// A damaged or incomplete baseline is reported and skipped, as a damaged event is: not yet arrived.
struct BaselineIntegrator: Sendable {
    let fileSystem: any CloudFileSystem
    let layout: CloudLayout
    let eventStore: EventStore
    /// Where parts are downloaded to (`transit/download/`); must exist.
    let transitDirectory: URL
    /// Fetches the data files a baseline's ledger names (M15); nil: not checked. A baseline whose files
    /// are not all held afterwards is not joined (nor recorded), and is read again at the next merge.
    var dataFiles: DataFileFetcher? = nil

    struct Result: Sendable {
        /// The baselines joined into the overlay, for the finalize step.
        var joined: [BaselineRecord] = []
        /// The baselines found covered by what is integrated already, recorded as seen.
        var seen: [BaselineRecord] = []
        /// The same baselines whole, in the order joined: a merge that must start again from a newer
        /// ledger (after a retry's capture) joins them into it again, which `BaselineJoiner` makes
        /// idempotent.
        var baselines: [Baseline] = []
        /// The vector the overlay is now the fold of: the integrated vector joined with the baselines'.
        var integrated: RevisionVector
        /// The largest global count among the joined baselines (0 when none).
        var globalCount: Int64 = 0
        /// Baselines refused (damaged, truncated, inconsistent), by stem, with the reason.
        var refused: [String: EventFileError] = [:]
        /// Baselines whose parts are not all listed yet, by stem.
        var incomplete: [String] = []
        /// Baselines listed but gone when downloaded (another device's rebase removed them), by stem.
        var vanished: [String] = []
        /// Baselines left for a later merge because data files their ledger names have not arrived
        /// whole, by stem.
        var missingDataFiles: [String: Set<CloudFileName>] = [:]

        /// What the merge reports of the baselines left for later because of their data files.
        var diagnostics: [String] {
            missingDataFiles.sorted { $0.key < $1.key }.map { stem, names in
                "baseline \(stem) waits for data files \(names.map(\.fileName).sorted().joined(separator: ", "))"
            }
        }
    }

    /// Joins into `overlay` (the fold of the events ≤ `integrated`) every baseline of `names` (a listing
    /// of `baselines/`) that is complete, not yet recorded here and not covered by `integrated`, oldest
    /// first; records those found covered in the event store.
    /// - Throws: `SyncError.cloud` when the cloud fails, `.eventStore` for the event store or the local
    ///   transit files, `.storeIdentityCollision` for a baseline covering revisions of this store that it
    ///   has not made (another device uses its identity). A damaged file is not an error (`Result.refused`).
    func integrate(_ names: [CloudFileName], into overlay: inout Ledger, integrated: RevisionVector) async throws(SyncError) -> Result {
        let result = try await fetch(names, integrated: integrated)
        var vector = integrated
        for baseline in result.baselines { vector = BaselineJoiner.join(baseline, into: &overlay, integrated: vector) }
        return result
    }

    /// What `integrate(_:into:integrated:)` does without a ledger: the baselines to join, read and
    /// checked, with the vector and count they bring (for a caller that joins them into a ledger it loads
    /// itself, as the merge does on each attempt).
    /// - Throws: as `integrate(_:into:integrated:)`.
    func fetch(_ names: [CloudFileName], integrated: RevisionVector) async throws(SyncError) -> Result {
        var result = Result(integrated: integrated)
        let known: [String: BaselineRecord], state: EventStoreState
        do {
            known = try eventStore.baselineRecords()
            state = try eventStore.state()
        } catch {
            throw SyncError(error)
        }
        let listed = BaselineSummary.listed(names)
        result.incomplete = listed.incomplete.filter { known[$0] == nil }
        let candidates = listed.complete.compactMap { stem, parts -> (stem: String, count: Int64, parts: [CloudFileName])? in
            guard known[stem] == nil, case let .baseline(count, _, _, _)? = parts.first else { return nil }
            return (stem, count, parts)
        }.sorted { ($0.count, $0.stem) < ($1.count, $1.stem) }

        var seen: [BaselineRecord] = []
        for candidate in candidates {
            do {
                let first = try await download(candidate.parts[0])
                let summary = try BaselineFile.summary(ofPart: first, name: candidate.parts[0])
                if summary.isCovered(by: result.integrated) {
                    seen.append(BaselineRecord(summary: summary, parts: candidate.parts.count, bytes: Int64(first.count), role: .seen))
                    continue
                }
                var files = [(name: candidate.parts[0], bytes: first)]
                for name in candidate.parts.dropFirst() { files.append((name, try await download(name))) }
                let baseline = try BaselineFile.decode(parts: files)
                // Revisions of this store that it never made: another device has its identity (a restored
                // backup). Joining would make the next local event reuse a revision.
                guard baseline.vector[state.storeID] < state.nextRevision else {
                    throw SyncError.storeIdentityCollision(storeID: state.storeID.description)
                }
                if let dataFiles {
                    var names = Set<CloudFileName>()
                    for object in baseline.ledger.objects.values { names.formUnion(LargeValues.references(in: object)) }
                    let fetched = try await dataFiles.fetch(names)
                    let missing = fetched.missing.isEmpty ? []
                        : try stillNamed(fetched.missing, joining: baseline, after: result.baselines, integrated: integrated)
                    guard missing.isEmpty else {
                        result.missingDataFiles[candidate.stem] = missing
                        continue
                    }
                }
                result.integrated = result.integrated.joined(with: baseline.vector)
                result.globalCount = max(result.globalCount, baseline.globalCount)
                result.baselines.append(baseline)
                result.joined.append(BaselineRecord(summary: baseline.summary, parts: files.count,
                                                    bytes: Int64(files.reduce(0) { $0 + $1.bytes.count }), role: .joined))
            } catch let error as EventFileError {
                result.refused[candidate.stem] = error
            } catch SyncError.cloud(.notFound) {
                // Dominated and removed since the listing: a newer baseline covers what it held.
                result.vanished.append(candidate.stem)
            } catch let error as SyncError {
                throw error
            } catch {
                throw .dataCorruption("baseline \(candidate.stem): \(error)")
            }
        }
        do { try eventStore.recordBaselines(seen) } catch { throw SyncError(error) }
        result.seen = seen
        return result
    }

    /// The files of `missing` that joining `baseline` (after the baselines `accepted` before it) into
    /// this store's ledger, the fold of the events ≤ `integrated`, would still name. A write this store
    /// has superseded does not survive the join, and its file may be gone for good: its writer drops a
    /// file once its own ledger has moved past it, and a slower device can write a baseline still naming
    /// it afterwards. That writer, and any device that has the superseding write, needs no such file.
    /// The join is per key, so only the objects naming a missing file are loaded and joined.
    /// - Throws: `SyncError.eventStore` for the ledger rows.
    private func stillNamed(_ missing: Set<CloudFileName>, joining baseline: Baseline, after accepted: [Baseline],
                            integrated: RevisionVector) throws(SyncError) -> Set<CloudFileName> {
        let keys = baseline.ledger.objects.compactMap { key, object in
            LargeValues.references(in: object).isDisjoint(with: missing) ? nil : key
        }
        func restricted(_ ledger: Ledger) -> Ledger {
            var part = Ledger()
            for key in keys { if let object = ledger.object(key) { part.update(key) { $0 = object } } }
            return part
        }
        var ledger = Ledger()
        do {
            for object in try eventStore.ledgerObjects(keys) { ledger.update(object.key) { $0 = object } }
        } catch {
            throw SyncError(error)
        }
        var vector = integrated
        for earlier in accepted + [baseline] {
            vector = BaselineJoiner.join(Baseline(id: earlier.id, writer: earlier.writer, globalCount: earlier.globalCount,
                                                  vector: earlier.vector, ledger: restricted(earlier.ledger)),
                                         into: &ledger, integrated: vector)
        }
        var named = Set<CloudFileName>()
        for object in ledger.objects.values { named.formUnion(LargeValues.references(in: object)) }
        return missing.intersection(named)
    }

    /// The bytes of the remote file `name`, through a transit file that is removed afterwards.
    func download(_ name: CloudFileName) async throws(SyncError) -> Data {
        let url = transitDirectory.appendingPathComponent(name.fileName)
        defer { try? FileManager.default.removeItem(at: url) }
        do {
            if await !fileSystem.isConnected { try await fileSystem.connect() }
            try await fileSystem.downloadFile(atPath: layout.path(for: name), toLocalFile: url)
        } catch {
            throw .cloud(error)
        }
        do {
            return try Data(contentsOf: url)
        } catch {
            throw .eventStore("cannot read the downloaded baseline part \(url.path): \(error.localizedDescription)")
        }
    }
}
