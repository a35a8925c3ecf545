import Foundation

/// What the ensemble's cloud directories hold at one moment: one listing of `events/`, `baselines/`,
/// `data/` and `stores/`, parsed, taken once per merge (§9 step 4) so that every later step decides from
/// the same picture.
///
/// Names that do not parse (conflicted copies, stray files, subdirectories) are kept aside as foreign
/// and never acted on. Taken with the previous merge's snapshot, a directory whose listing did not
/// change is not parsed or sorted again: an unchanged ensemble costs its listings and their comparison
/// (the polling budget, S3).
struct CloudSnapshot: Hashable, Sendable {
    /// Event files, ordered by count, store, revision and part.
    private(set) var events: [CloudFileName] = []
    /// The names of `events` as listed, in the same order (so that callers compare text, not reformat).
    private(set) var eventFileNames: [String] = []
    /// Baseline files, ordered by count, baseline ID, store and part.
    private(set) var baselines: [CloudFileName] = []
    private(set) var data: [CloudFileName] = []
    private(set) var stores: [CloudFileName] = []
    /// The listed size of each file, by file name (the extension keeps names of different kinds apart).
    private(set) var sizes: [String: Int64] = [:]
    /// Paths, relative to the file system's root, of entries that are not GranarySync files.
    private(set) var foreignPaths: [String] = []
    /// Whether every listing was the same as in the snapshot this one was taken after.
    private(set) var isUnchanged = false
    /// The raw listing of each directory, to compare the next one with.
    private var listings: [String: [CloudItem]] = [:]
    private var parsed: [String: CloudFileName] = [:]

    /// Every GranarySync file name listed.
    var names: Set<String> { Set(sizes.keys) }

    func contains(_ name: CloudFileName) -> Bool { sizes[name.fileName] != nil }

    func size(of name: CloudFileName) -> Int64? { sizes[name.fileName] }

    /// Lists the four directories of `layout` on `fileSystem` (connected by the caller's checks),
    /// reusing what `previous` parsed for directories whose listing is unchanged.
    /// - Throws: `SyncError.cloud` when a listing fails, a directory missing included: the checks before
    ///   have found the ensemble's registration, so a missing directory is the cloud failing, not an
    ///   empty ensemble. The exception is `data/`, which is made again when missing (see the code).
    static func take(of fileSystem: any CloudFileSystem, layout: CloudLayout,
                     after previous: CloudSnapshot? = nil) async throws(SyncError) -> CloudSnapshot {
        var listings: [String: [CloudItem]] = [:]
        for directory in [layout.eventsDirectory, layout.baselinesDirectory, layout.dataDirectory, layout.storesDirectory] {
            do {
                listings[directory] = try await fileSystem.contentsOfDirectory(atPath: directory)
            } catch .notFound where directory == layout.dataDirectory {
                // Users clear `data/` to reclaim space (Ensembles' tests do it too): its files' writers upload
                // them again, so it is made anew rather than failing every merge from now on.
                do { try await fileSystem.createDirectory(atPath: directory) } catch { throw .cloud(error) }
                listings[directory] = []
            } catch {
                throw .cloud(error)
            }
        }
        if var previous, previous.listings == listings {
            previous.isUnchanged = true
            return previous
        }
        var snapshot = CloudSnapshot()
        snapshot.listings = listings
        for (directory, items) in listings.sorted(by: { $0.key < $1.key }) {
            for item in items {
                guard case let .file(text, size) = item,
                      let name = previous?.parsed[text] ?? (try? CloudFileName.parse(text)).flatMap({ $0.isValid ? $0 : nil }),
                      layout.directory(for: name) == directory else {
                    snapshot.foreignPaths.append(directory + "/" + item.name)
                    continue
                }
                snapshot.sizes[text] = size
                snapshot.parsed[text] = name
                switch name {
                case .event: snapshot.events.append(name)
                case .baseline: snapshot.baselines.append(name)
                case .data: snapshot.data.append(name)
                case .registration: snapshot.stores.append(name)
                }
            }
        }
        if let previous, previous.listings[layout.eventsDirectory] == listings[layout.eventsDirectory] {
            snapshot.events = previous.events
            snapshot.eventFileNames = previous.eventFileNames
        } else {
            snapshot.events.sort(by: Self.precedes)
            snapshot.eventFileNames = snapshot.events.map(\.fileName)
        }
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
