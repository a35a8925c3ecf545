import Granary

/// Core Data's `NSSortDescriptor`: a key (or a key path of a managed object class) and a direction,
/// turned into Granary's `SortKey` when a fetch runs.
///
/// It shadows Foundation's `NSSortDescriptor` for code that imports `GranaryCoreData`. Comparison
/// selectors do not exist on Linux: `init(key:ascending:selector:)` is not offered; use
/// `init(key:ascending:comparison:)` with `.caseInsensitive` or `.localized` instead.
open class NSSortDescriptor: CustomStringConvertible {
    /// The key path compared, dot-separated (`"author.name"`); for a descriptor made from a Swift key
    /// path, its names as Swift describes them (nil for `@Managed` properties, which are named when a
    /// fetch runs, from the entity).
    public let key: String?
    /// The Swift key path this descriptor was made from, if any.
    public let keyPath: AnyKeyPath?
    /// Whether smaller values come first.
    public let ascending: Bool
    /// How strings are compared.
    public let comparison: SortKey.StringComparison

    /// Sorts by `key`: Core Data's `init(key:ascending:)`.
    public init(key: String?, ascending: Bool = true) {
        self.key = key
        keyPath = nil
        self.ascending = ascending
        comparison = .binary
    }

    /// Sorts by `key` comparing strings as `comparison` says: the Linux form of Core Data's
    /// `init(key:ascending:selector:)` (`localizedStandardCompare:` is `.localized`,
    /// `caseInsensitiveCompare:` is `.caseInsensitive`).
    public init(key: String?, ascending: Bool = true, comparison: SortKey.StringComparison) {
        self.key = key
        keyPath = nil
        self.ascending = ascending
        self.comparison = comparison
    }

    /// Sorts by a property of a managed object class: Core Data's `init(keyPath:ascending:)`.
    public init<Root, Value>(keyPath: KeyPath<Root, Value>, ascending: Bool = true) {
        key = KeyPathNames.components(of: keyPath).flatMap { names in
            names.contains { $0.hasPrefix("<") } ? nil : names.joined(separator: ".")
        }
        self.keyPath = keyPath
        self.ascending = ascending
        comparison = .binary
    }

    /// The descriptor with the opposite direction.
    public var reversedSortDescriptor: NSSortDescriptor {
        NSSortDescriptor(copying: self, ascending: !ascending)
    }

    private init(copying other: NSSortDescriptor, ascending: Bool) {
        key = other.key
        keyPath = other.keyPath
        comparison = other.comparison
        self.ascending = ascending
    }

    /// Granary's form of this descriptor, for a fetch of `entity` (which names a key path's `@Managed`
    /// properties).
    /// - Throws: `ContextError.invalidRequest` when the descriptor was made from a key path that names no
    ///   property of the entity.
    public func sortKey(entity: String, model: ManagedObjectModel?) throws(ContextError) -> SortKey {
        if let keyPath, let model, let description = model.entity(named: entity),
           let names = KeyPathNames.components(of: keyPath, entity: description, model: model) {
            return SortKey(keyPath: names, ascending: ascending, comparison: comparison)
        }
        guard let key else {
            throw ContextError.invalidRequest(entity: entity, reason: "the sort descriptor's key path \(keyPath.map { "\($0)" } ?? "") names no property")
        }
        return SortKey(key, ascending: ascending, comparison: comparison)
    }

    public var description: String { "(\(key ?? "<unnamed key path>"), \(ascending ? "ascending" : "descending"))" }
}
