// GranarySync: sync between stores through any cloud file system, as Ensembles does it for Core Data.
//
// Devices exchange immutable event files through a `CloudFileSystem`; each folds the events it has into
// a ledger whose projection is the store (see Documentation.docc/MergeSemantics.md for the rules and
// CloudLayoutAndFormat.md for what is written where).

/// Constants every device of an ensemble must agree on; changing one is a format change.
enum SyncConstants {
    /// The format version written in every cloud file's header and in the ensemble's `format.json`. A
    /// reader refuses files of a higher version rather than misread them.
    static let formatVersion: UInt16 = 1
    /// Payloads larger than this are LZ4-compressed (when that makes them smaller): below it the
    /// repetition JSON keys bring is too little to pay for the flag.
    static let compressionThreshold = 4096
    /// The largest payload of one event or baseline part; larger events are split (§4.4 of the plan).
    static let maximumPartPayload = 8 * 1024 * 1024
    /// Attribute data larger than this travels as a data file instead of inline (Ensembles' limit).
    static let inlineDataLimit = 10_000
    /// The transaction author of every save sync makes to the app's store: capture skips its
    /// transactions, which hold changes the ledger already has.
    static let mergeAuthor = "granary.sync"
    /// The prefix of the merge context's name; the full name (`prefix + mergeID`) is how recovery finds out
    /// from the store's history whether an interrupted merge's save committed.
    static let mergeContextNamePrefix = "granary.sync.merge."
}
