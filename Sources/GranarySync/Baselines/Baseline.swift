import Foundation

/// A ledger standing in for the events it was folded from (M32): the events covered by `vector`, a
/// causally complete set, with `globalCount` the largest count among them.
///
/// A device may integrate a baseline instead of its events, or join it into a ledger that already holds
/// some of them (`BaselineJoiner`): either way it ends with the ledger of the union.
struct Baseline: Hashable, Sendable {
    /// Random, so that two baselines of one store never share a name.
    var id: UUID
    /// The store that wrote the baseline: the only one that may write or remove its files' names.
    var writer: StoreID
    /// The largest global count of the covered events; a device joining the baseline raises its own
    /// count to it (M2).
    var globalCount: Int64
    /// The events the ledger is the fold of, for each store up to this revision.
    var vector: RevisionVector
    var ledger: Ledger

    init(id: UUID = UUID(), writer: StoreID, globalCount: Int64, vector: RevisionVector, ledger: Ledger) {
        self.id = id
        self.writer = writer
        self.globalCount = globalCount
        self.vector = vector
        self.ledger = ledger
    }

    /// The summary a listing and the event store keep of it.
    var summary: BaselineSummary {
        BaselineSummary(id: id, writer: writer, globalCount: globalCount, vector: vector)
    }
}

/// What is known of a baseline without its ledger: enough to name its files, to decide whether it is
/// covered by what a device has integrated, and whether a newer baseline dominates it.
struct BaselineSummary: Hashable, Sendable, Codable {
    var id: UUID
    var writer: StoreID
    var globalCount: Int64
    var vector: RevisionVector

    /// The cloud name of part `part` (nil for a baseline of one file).
    func fileName(part: CloudFileName.Part?) -> CloudFileName {
        .baseline(globalCount: globalCount, id: id, store: writer, part: part)
    }

    /// The names of all `parts` files, in part order.
    func fileNames(parts: Int) -> [CloudFileName] {
        parts <= 1 ? [fileName(part: nil)]
            : (1...parts).map { fileName(part: CloudFileName.Part(index: $0, count: parts)) }
    }

    /// The file name stem shared by every part (`<count>_<id>_<store>`), recorded as `state.baselineID`.
    var stem: String { "\(globalCount)_\(id.uuidString)_\(writer)" }

    /// The baselines of a listing: the parts of each, by stem and in part order, for the baselines whose
    /// parts are all listed; and the stems of those still missing a part (an upload under way, or one a
    /// kill cut short). Names of other kinds are ignored.
    static func listed(_ names: [CloudFileName]) -> (complete: [String: [CloudFileName]], incomplete: [String]) {
        var groups: [String: [CloudFileName]] = [:]
        for name in names { if let stem = stem(of: name) { groups[stem, default: []].append(name) } }
        var complete: [String: [CloudFileName]] = [:]
        var incomplete: [String] = []
        for (stem, parts) in groups {
            guard case let .baseline(_, _, _, part)? = parts.first else { continue }
            let total = part?.count ?? 1
            func index(_ name: CloudFileName) -> Int? {
                guard case let .baseline(_, _, _, part) = name, (part?.count ?? 1) == total else { return nil }
                return part?.index ?? 1
            }
            guard Set(parts.compactMap(index)) == Set(1...total) else {
                incomplete.append(stem)
                continue
            }
            complete[stem] = parts.sorted { (index($0) ?? 0) < (index($1) ?? 0) }
        }
        return (complete, incomplete.sorted())
    }

    /// Whether a device that integrated `integrated` gains nothing from this baseline.
    func isCovered(by integrated: RevisionVector) -> Bool { vector.isCovered(by: integrated) }
}
