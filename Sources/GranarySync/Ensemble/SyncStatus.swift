/// What an ensemble is doing or waiting for.
public enum SyncStatus: Sendable, Hashable {
    /// Not leeched: nothing is recorded or exchanged.
    case notLeeched
    /// Leeched and not merging.
    case idle
    /// A leech, merge or deleech is running.
    case busy
    /// The last merge left events waiting: `count` of them depend on events not yet arrived.
    case waitingForEvents(count: Int)
    /// The last merge found events made with a model this app does not know (their version hashes);
    /// they wait for an update of the app, while local changes keep being recorded and sent.
    case waitingForModelVersion(hashes: [String])
    /// The last merge left events waiting for data files (their large values) that have not arrived
    /// whole: `names` of the files. Nothing is lost; the next merge that finds them integrates the events,
    /// and the events after them from the same device, which wait too (counted in ``MergeReport/waitingEvents``).
    case waitingForDataFiles(names: [String])
}
