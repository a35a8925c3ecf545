import Foundation

/// When an ensemble compacts the cloud: writes a baseline (a summary of every event all active devices
/// have) and removes the events it covers.
///
/// Any device may rebase; baselines written concurrently by two devices are joined, so the thresholds
/// only decide how much the cloud holds between rebases, never what devices end up with.
public struct RebasePolicy: Sendable, Hashable {
    /// With no baseline in the cloud yet, rebase once it holds at least this many events.
    public var minimumEventsForFirstBaseline: Int
    /// Rebase when more than this many events in the cloud are covered by what every active device has.
    public var coveredEventThreshold: Int
    /// Rebase when the covered events take more than this many times the bytes of the last baseline.
    public var coveredBytesRatio: Double
    /// A device that has published nothing (no event, no registration) for this long no longer holds back
    /// the removal of events; when it returns it catches up from the baseline.
    public var inactiveAfter: TimeInterval

    /// A policy of the given thresholds; the defaults are ``default``'s.
    public init(minimumEventsForFirstBaseline: Int = 100, coveredEventThreshold: Int = 200, coveredBytesRatio: Double = 4,
                inactiveAfter: TimeInterval = 30 * 24 * 60 * 60) {
        self.minimumEventsForFirstBaseline = minimumEventsForFirstBaseline
        self.coveredEventThreshold = coveredEventThreshold
        self.coveredBytesRatio = coveredBytesRatio
        self.inactiveAfter = inactiveAfter
    }

    /// A first baseline at 100 events; then a rebase when more than 200 events, or more than four times
    /// the last baseline's bytes, are covered; devices silent for 30 days stop holding removal back.
    public static let `default` = RebasePolicy()

    /// What the cloud holds, as the rebase decision needs it.
    struct Facts: Hashable, Sendable {
        /// Whether the cloud holds a baseline.
        var hasBaseline: Bool
        /// Events in the cloud.
        var eventCount: Int
        /// Events in the cloud covered by the cutoff.
        var coveredEventCount: Int
        /// Their bytes.
        var coveredEventBytes: Int64
        /// The bytes of the newest baseline (0 when none).
        var lastBaselineBytes: Int64
    }

    /// Whether to rebase now; `force` rebases whatever the facts, `suppress` never (and wins).
    func shouldRebase(_ facts: Facts, force: Bool = false, suppress: Bool = false) -> Bool {
        if suppress { return false }
        if force { return true }
        if !facts.hasBaseline { return facts.eventCount >= minimumEventsForFirstBaseline }
        if facts.coveredEventCount > coveredEventThreshold { return true }
        return facts.coveredEventCount > 0
            && Double(facts.coveredEventBytes) > coveredBytesRatio * Double(facts.lastBaselineBytes)
    }
}

extension RebasePolicy.Facts {
    /// The facts of a listing: the files of `events/` and `baselines/` with their sizes, and the cutoff.
    /// Parts of one event count once; a baseline's bytes are those of all its parts.
    init(events: [(name: CloudFileName, size: Int64)], baselines: [(name: CloudFileName, size: Int64)], cutoff: RevisionVector) {
        var eventIDs: Set<EventID> = [], coveredIDs: Set<EventID> = []
        var coveredBytes: Int64 = 0
        for (name, size) in events {
            guard case let .event(_, store, revision, _) = name else { continue }
            let id = EventID(store: store, revision: revision)
            eventIDs.insert(id)
            if cutoff[store] >= revision {
                coveredIDs.insert(id)
                coveredBytes += size
            }
        }
        var baselineBytes: [String: (count: Int64, bytes: Int64)] = [:]
        for (name, size) in baselines {
            guard case let .baseline(count, _, _, _) = name, let stem = BaselineSummary.stem(of: name) else { continue }
            baselineBytes[stem, default: (count, 0)].bytes += size
        }
        let newest = baselineBytes.max { ($0.value.count, $0.key) < ($1.value.count, $1.key) }
        self.init(hasBaseline: !baselineBytes.isEmpty, eventCount: eventIDs.count, coveredEventCount: coveredIDs.count,
                  coveredEventBytes: coveredBytes, lastBaselineBytes: newest?.value.bytes ?? 0)
    }
}
