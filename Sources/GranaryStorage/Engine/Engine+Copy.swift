extension Engine {
    /// Replaces the whole content of this store with the content `source` shows (another engine's
    /// snapshot, or this one's), in one atomic step as `rewrite(_:)` does: the way to copy a store to
    /// another location or into memory, and to put a backup back. Metadata is copied too, the store's
    /// UUID included, so the copy is the same store for everything that names it.
    ///
    /// The source keeps working: a snapshot is immutable, so its writers go on while the copy is made.
    /// - Throws: `StorageError.readOnly`, `.closed`, `.poisoned`; `.io` if the new snapshot cannot be
    ///   written (this store keeps its old content).
    public func copyContent(from source: Snapshot) throws {
        try replaceContent(with: source.state)
    }
}
