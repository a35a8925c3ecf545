import Granary

/// Core Data's `NSSortDescriptor`: a key (or a key path of a managed object class) and a direction,
/// turned into Granary's `SortKey` when a fetch runs.
///
/// It shadows Foundation's `NSSortDescriptor` for code that imports `GranaryCoreData`. Comparison
/// selectors do not exist on Linux: `init(key:ascending:selector:)` is not offered; use
/// `init(key:ascending:comparison:)` with `.caseInsensitive` or `.localized` instead.
open class NSSortDescriptor: CustomStringConvertible {
    /// The key path compared, dot-separated (`"author.name"`); nil only for a key path Swift cannot name.
    public let key: String?
    /// Whether smaller values come first.
    public let ascending: Bool
    /// How strings are compared.
    public let comparison: SortKey.StringComparison

    /// Sorts by `key`: Core Data's `init(key:ascending:)`.
    public init(key: String?, ascending: Bool = true) {
        self.key = key
        self.ascending = ascending
        comparison = .binary
    }

    /// Sorts by `key` comparing strings as `comparison` says: the Linux form of Core Data's
    /// `init(key:ascending:selector:)` (`localizedStandardCompare:` is `.localized`,
    /// `caseInsensitiveCompare:` is `.caseInsensitive`).
    public init(key: String?, ascending: Bool = true, comparison: SortKey.StringComparison) {
        self.key = key
        self.ascending = ascending
        self.comparison = comparison
    }

    /// Sorts by a property of a managed object class: Core Data's `init(keyPath:ascending:)`.
    public init<Root, Value>(keyPath: KeyPath<Root, Value>, ascending: Bool = true) {
        key = KeyPathNames.components(of: keyPath)?.joined(separator: ".")
        self.ascending = ascending
        comparison = .binary
    }

    /// The descriptor with the opposite direction.
    public var reversedSortDescriptor: NSSortDescriptor {
        NSSortDescriptor(key: key, ascending: !ascending, comparison: comparison)
    }

    /// Granary's form of this descriptor.
    /// - Throws: `ContextError.invalidRequest` when the descriptor was made from a key path Swift cannot name.
    public func sortKey(entity: String) throws(ContextError) -> SortKey {
        guard let key else {
            throw ContextError.invalidRequest(entity: entity, reason: "a sort descriptor's key path names no stored property")
        }
        return SortKey(key, ascending: ascending, comparison: comparison)
    }

    public var description: String { "(\(key ?? "<unnamed key path>"), \(ascending ? "ascending" : "descending"))" }
}
