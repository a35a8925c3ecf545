/// What one feed merge did.
public struct FeedMergeReport: Sendable, Hashable, CustomStringConvertible {
    /// Feed records whose key was not stored: inserted.
    public var inserted = 0
    /// Stored objects the feed changed.
    public var updated = 0
    /// Stored objects the feed matched with nothing to change (or whose `condition` said no).
    public var unchanged = 0
    /// Stored objects within the subset that the feed no longer lists: deleted.
    public var deleted = 0
    /// Objects left as they are because the outbox holds an unsent local change of them (an update or
    /// delete the server has not seen yet): the feed does not overwrite, delete or resurrect them.
    public var protectedByOutbox = 0
    /// Feed records that repeated an earlier record's key (the later one was applied).
    public var repeatedKeys = 0
    /// Whether the merge saved (only when something changed).
    public var saved = false

    public init() {}

    public var description: String {
        "inserted \(inserted), updated \(updated), unchanged \(unchanged), deleted \(deleted)"
            + (protectedByOutbox > 0 ? ", kept for unsent local changes \(protectedByOutbox)" : "")
            + (saved ? ", saved" : ", nothing to save")
    }
}
