import Foundation
import GranaryStorage

/// One level of a fetch's order: a key path (which may follow to-one relationships), a direction, and
/// how strings compare.
///
/// Null values sort first in ascending order and last in descending order, as in Core Data's SQLite
/// store. Use it for `FetchPlanner.plan` and `RowEvaluator.compare`.
public struct SortKey: Sendable, Hashable, CustomStringConvertible {
    /// How string values compare.
    public enum StringComparison: Sendable, Hashable {
        /// By Unicode scalars (UTF-8 bytes): case-sensitive and the order of the storage indexes, so an
        /// index can deliver it.
        case binary
        /// Ignoring case; always sorted in memory.
        case caseInsensitive
        /// Ignoring case and diacritics, with digit runs compared as numbers (like Finder's
        /// `localizedStandardCompare`); always sorted in memory.
        case localized
    }

    public var keyPath: KeyPathExpr
    public var ascending: Bool
    public var comparison: StringComparison

    /// A sort on a key path given as its components.
    public init(keyPath: KeyPathExpr, ascending: Bool = true, comparison: StringComparison = .binary) {
        self.keyPath = keyPath
        self.ascending = ascending
        self.comparison = comparison
    }

    /// A sort on a dotted key path (`"manager.name"`).
    public init(_ key: String, ascending: Bool = true, comparison: StringComparison = .binary) {
        self.init(keyPath: key.split(separator: ".").map(String.init), ascending: ascending, comparison: comparison)
    }

    /// The sort key of a Foundation `SortDescriptor`, or `nil` when the descriptor has no key path (it
    /// was built from a comparator) or `keyPathName` cannot name it.
    ///
    /// `SortOrder.reverse` becomes descending. A descriptor without a string comparator (Linux's default
    /// for `String` key paths) or with `.lexical` compares binary; one whose comparator ignores case
    /// compares case-insensitively; a localized comparator compares `.localized`.
    public init?<Compared>(_ descriptor: SortDescriptor<Compared>,
                           keyPathName: (AnyKeyPath) -> [String]? = KeyPathNames.components(of:)) {
        guard let keyPath = descriptor.keyPath, let names = keyPathName(keyPath) else { return nil }
        var comparison = StringComparison.binary
        if let comparator = descriptor.stringComparator {
            // The comparator's options are not public; its mirror names them.
            let fields = Dictionary(Mirror(reflecting: comparator).children.compactMap { c in c.label.map { ($0, c.value) } },
                                    uniquingKeysWith: { a, _ in a })
            let options = fields["options"] as? String.CompareOptions ?? []
            if fields["isLocalized"] as? Bool == true {
                comparison = .localized
            } else if options.contains(.caseInsensitive) {
                comparison = .caseInsensitive
            }
        }
        self.init(keyPath: names, ascending: descriptor.order == .forward, comparison: comparison)
    }

    public var description: String {
        let suffix: String
        switch comparison {
        case .binary: suffix = ""
        case .caseInsensitive: suffix = " CASEINSENSITIVE"
        case .localized: suffix = " LOCALIZED"
        }
        return PredicateFormat.keyPath(keyPath) + (ascending ? " ASC" : " DESC") + suffix
    }
}
