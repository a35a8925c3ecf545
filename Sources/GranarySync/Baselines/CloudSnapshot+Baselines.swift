import Foundation

/// How the merge pipeline's one listing (`CloudSnapshot`) feeds the baseline steps: §9 step 6 (join the
/// baselines not yet covered) and step 9 (rebase when the policy says so).
extension CloudSnapshot {
    /// `names` with their listed sizes (0 when not listed).
    func sized(_ names: [CloudFileName]) -> [(name: CloudFileName, size: Int64)] {
        names.map { ($0, size(of: $0) ?? 0) }
    }

    /// When each store of `stores/` registered, read from the registration files. A registration that
    /// cannot be read counts as written `now`: an unknown store is taken as active, which only holds
    /// removal back.
    /// - Throws: `SyncError.cloud` when a download fails for another reason than the file being gone.
    func registrationDates(fileSystem: any CloudFileSystem, layout: CloudLayout, directory: URL,
                           now: Date = Date()) async throws(SyncError) -> [StoreID: Date] {
        var dates: [StoreID: Date] = [:]
        for name in stores {
            guard case let .registration(store) = name else { continue }
            let url = directory.appendingPathComponent(name.fileName)
            defer { try? FileManager.default.removeItem(at: url) }
            do {
                try await fileSystem.downloadFile(atPath: layout.path(for: name), toLocalFile: url)
            } catch {
                // Removed since the listing: a deleeched store holds nothing back.
                if case .notFound = error { continue }
                throw .cloud(error)
            }
            let registration = (try? Data(contentsOf: url)).flatMap {
                try? EventPayloadCoding.value(StoreRegistration.self, ofKind: .registration, inFile: $0, name: name.fileName)
            }
            dates[store] = registration?.store == store ? registration?.registeredAt : now
        }
        return dates
    }
}

extension BaselineIntegrator {
    /// §9 step 6 on the merge's listing: joins the baselines of `snapshot` not covered by `integrated`
    /// into `overlay` (see `integrate(_:into:integrated:)`).
    func integrate(_ snapshot: CloudSnapshot, into overlay: inout Ledger, integrated: RevisionVector) async throws(SyncError) -> Result {
        try await integrate(snapshot.baselines, into: &overlay, integrated: integrated)
    }
}

extension Rebaser {
    /// §9 step 9 on the merge's listing: reads the registrations, computes the cutoff and the policy's
    /// facts, and rebases if the policy (or `force`) says so; nil when it does not.
    /// - Throws: what `rebaseIfNeeded(policy:force:suppress:registrations:now:events:baselines:)` throws.
    func rebaseIfNeeded(policy: RebasePolicy, force: Bool = false, suppress: Bool = false, snapshot: CloudSnapshot,
                        downloadDirectory: URL, now: Date = Date()) async throws(SyncError) -> Outcome? {
        guard !suppress else { return nil }
        let registrations = try await snapshot.registrationDates(fileSystem: fileSystem, layout: layout, directory: downloadDirectory, now: now)
        return try await rebaseIfNeeded(policy: policy, force: force, registrations: registrations, now: now,
                                        events: snapshot.sized(snapshot.events), baselines: snapshot.sized(snapshot.baselines))
    }
}
