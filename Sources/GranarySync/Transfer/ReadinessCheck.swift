/// Which downloaded events can be integrated now, and why the others wait (§10.1, M5).
///
/// An event is ready when its model is known and everything it depends on — its own store's previous
/// revision and every event its vector covers — is integrated or ready itself. Ready events come in
/// position order (M1), which is also a causal order: an event's count is above that of everything it
/// depends on (M2). Waiting is not an error; the events stay downloaded for a later merge.
enum ReadinessCheck {
    /// Why an event waits.
    enum Reason: Hashable, Sendable, CustomStringConvertible {
        /// The event `missing` (the first one this event needs that is neither integrated nor ready) has
        /// not arrived, or waits itself.
        case missingDependency(EventID)
        /// The event was made with a model this device does not know (a newer app version).
        case unknownModel(hash: String)
        /// A data file holding one of the event's large values (M15) has not arrived whole; the events
        /// after it from its store wait behind it.
        case missingDataFile(CloudFileName)

        var description: String {
            switch self {
            case let .missingDependency(id): "waits for event \(id)"
            case let .unknownModel(hash): "made with an unknown model (version hash \(hash.prefix(64)))"
            case let .missingDataFile(name): "waits for data file \(name)"
            }
        }
    }

    struct Waiting: Hashable, Sendable {
        var id: EventID
        var reason: Reason
    }

    struct Result: Hashable, Sendable {
        /// Events to integrate, in position order.
        var ready: [Event] = []
        /// Events that wait, in position order, each with its reason.
        var waiting: [Waiting] = []
        /// Downloaded events the integrated vector already covers (a copy of an event integrated
        /// through another path): nothing to integrate, only their status to settle.
        var alreadyIntegrated: [EventID] = []
    }

    /// Sorts `downloaded` into ready, waiting and already integrated, given the `integrated` vector, the
    /// model hashes this device knows (events without a hash are always known) and the data files the
    /// event store holds (nil: not checked).
    static func evaluate(_ downloaded: [Event], integrated: RevisionVector, knownModelHashes: Set<String>,
                         heldDataFiles: Set<CloudFileName>? = nil) -> Result {
        var result = Result()
        var available = integrated
        var candidates: [Event] = []
        for event in downloaded.sorted(by: { $0.meta.position < $1.meta.position }) {
            if integrated[event.id.store] >= event.id.revision {
                result.alreadyIntegrated.append(event.id)
            } else {
                candidates.append(event)
            }
        }
        var readyIDs = Set<EventID>()
        // Each pass in position order takes every event whose dependencies an earlier one of the pass
        // made available, so passes are few; it ends when a pass adds nothing.
        var changed = true
        while changed {
            changed = false
            for event in candidates where !readyIDs.contains(event.id) && isKnown(event, knownModelHashes)
                && available[event.id.store] == event.id.revision - 1 && event.meta.vector.isCovered(by: available)
                && missingDataFile(event, heldDataFiles) == nil {
                available[event.id.store] = event.id.revision
                readyIDs.insert(event.id)
                result.ready.append(event)
                changed = true
            }
        }
        result.ready.sort { $0.meta.position < $1.meta.position }
        for event in candidates where !readyIDs.contains(event.id) {
            result.waiting.append(Waiting(id: event.id, reason: reason(event, available: available, knownModelHashes, heldDataFiles)))
        }
        return result
    }

    /// The check over the events the event store holds as downloaded.
    /// - Throws: `SyncError.eventStore`.
    static func run(on eventStore: EventStore, knownModelHashes: Set<String>) throws(SyncError) -> Result {
        do {
            let downloaded = try eventStore.events(withStatus: .downloaded)
            return evaluate(downloaded, integrated: try eventStore.state().integrated, knownModelHashes: knownModelHashes,
                            heldDataFiles: try heldDataFiles(of: downloaded, in: eventStore))
        } catch {
            throw SyncError(error)
        }
    }

    /// The data files `events` name that `eventStore` holds.
    /// - Throws: `EventStoreError.storage`.
    static func heldDataFiles(of events: [Event], in eventStore: EventStore) throws(EventStoreError) -> Set<CloudFileName> {
        var names = Set<CloudFileName>()
        for event in events { names.formUnion(LargeValues.references(in: event.changes)) }
        return try eventStore.heldDataFiles(among: names)
    }

    private static func isKnown(_ event: Event, _ hashes: Set<String>) -> Bool {
        event.modelHash.map(hashes.contains) ?? true
    }

    /// The first data file (by name) `event` names that is not held.
    private static func missingDataFile(_ event: Event, _ held: Set<CloudFileName>?) -> CloudFileName? {
        guard let held else { return nil }
        return LargeValues.references(in: event.changes).subtracting(held).min { $0.fileName < $1.fileName }
    }

    private static func reason(_ event: Event, available: RevisionVector, _ hashes: Set<String>,
                               _ held: Set<CloudFileName>?) -> Reason {
        if let hash = event.modelHash, !hashes.contains(hash) { return .unknownModel(hash: hash) }
        if available[event.id.store] == event.id.revision - 1, event.meta.vector.isCovered(by: available),
           let name = missingDataFile(event, held) {
            return .missingDataFile(name)
        }
        if available[event.id.store] < event.id.revision - 1 {
            return .missingDependency(EventID(store: event.id.store, revision: available[event.id.store] + 1))
        }
        // Some store of the vector is ahead of what is available; the smallest store ID, for a stable answer.
        let store = event.meta.vector.revisions.keys.sorted().first { event.meta.vector[$0] > available[$0] }
        return .missingDependency(EventID(store: store ?? event.id.store, revision: available[store ?? event.id.store] + 1))
    }
}
