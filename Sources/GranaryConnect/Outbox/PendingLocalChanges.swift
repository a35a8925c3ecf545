/// The keys of an entity's objects with local changes the server has not acknowledged: what a feed
/// merge must not overwrite (updated, inserted) or bring back (deleted).
struct PendingLocalChanges: Sendable {
    /// Objects inserted or updated locally, not yet sent (or sent and not acknowledged).
    var updated: Set<FeedKey> = []
    /// Objects deleted locally, not yet sent.
    var deleted: Set<FeedKey> = []
}
