/// Variations of ``PersistentStoreEnsemble/merge(options:)``.
public struct MergeOptions: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Write a baseline now, whatever the rebase policy says.
    public static let forceRebase = MergeOptions(rawValue: 1 << 0)
    /// Write no baseline in this merge, whatever the rebase policy says.
    public static let suppressRebase = MergeOptions(rawValue: 1 << 1)
}
