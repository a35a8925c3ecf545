import Foundation

/// What the ensemble's cloud directories hold at one moment: one listing of `events/`, `baselines/`,
/// `data/` and `stores/`, parsed, taken once per merge (§9 step 4) so that every later step decides from
/// the same picture.
///
/// Names that do not parse (conflicted copies, stray files, subdirectories) are kept aside as foreign
/// and never acted on.
struct CloudSnapshot: Hashable, Sendable {
    /// Event files, ordered by count, store, revision and part.
    var events: [CloudFileName] = []
    /// Baseline files, ordered by count, baseline ID, store and part.
    var baselines: [CloudFileName] = []
    var data: [CloudFileName] = []
    var stores: [CloudFileName] = []
    /// The listed size of each file, by file name (the extension keeps names of different kinds apart).
    var sizes: [String: Int64] = [:]
    /// Paths, relative to the file system's root, of entries that are not GranarySync files.
    var foreignPaths: [String] = []

    /// Every GranarySync file name listed.
    var names: Set<String> { Set(sizes.keys) }

    func contains(_ name: CloudFileName) -> Bool { sizes[name.fileName] != nil }

    func size(of name: CloudFileName) -> Int64? { sizes[name.fileName] }

    /// Lists the four directories of `layout` on `fileSystem` (connected by the caller's checks).
    /// - Throws: `SyncError.cloud` when a listing fails, a directory missing included: the checks before
    ///   have found the ensemble's registration, so a missing directory is the cloud failing, not an
    ///   empty ensemble.
    static func take(of fileSystem: any CloudFileSystem, layout: CloudLayout) async throws(SyncError) -> CloudSnapshot {
        var snapshot = CloudSnapshot()
        for directory in [layout.eventsDirectory, layout.baselinesDirectory, layout.dataDirectory, layout.storesDirectory] {
            let items: [CloudItem]
            do { items = try await fileSystem.contentsOfDirectory(atPath: directory) } catch { throw .cloud(error) }
            for item in items {
                guard case let .file(text, size) = item, let name = try? CloudFileName.parse(text), name.isValid,
                      layout.directory(for: name) == directory else {
                    snapshot.foreignPaths.append(directory + "/" + item.name)
                    continue
                }
                snapshot.sizes[text] = size
                switch name {
                case .event: snapshot.events.append(name)
                case .baseline: snapshot.baselines.append(name)
                case .data: snapshot.data.append(name)
                case .registration: snapshot.stores.append(name)
                }
            }
        }
        snapshot.events.sort(by: Self.precedes)
        snapshot.baselines.sort(by: Self.precedes)
        return snapshot
    }

    /// Numeric order of counts (names are not zero-padded, so their text does not sort), then store
    /// (or baseline ID), revision and part.
    static func precedes(_ a: CloudFileName, _ b: CloudFileName) -> Bool {
        switch (a, b) {
        case let (.event(c1, s1, r1, p1), .event(c2, s2, r2, p2)):
            if c1 != c2 { return c1 < c2 }
            if s1 != s2 { return s1 < s2 }
            if r1 != r2 { return r1 < r2 }
            return (p1?.index ?? 0) < (p2?.index ?? 0)
        case let (.baseline(c1, i1, s1, p1), .baseline(c2, i2, s2, p2)):
            if c1 != c2 { return c1 < c2 }
            if i1 != i2 { return i1.uuidString < i2.uuidString }
            if s1 != s2 { return s1 < s2 }
            return (p1?.index ?? 0) < (p2?.index ?? 0)
        default:
            return a.fileName.utf8.lexicographicallyPrecedes(b.fileName.utf8)
        }
    }
}
