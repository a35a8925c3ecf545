import Foundation

// UIKit and AppKit give `IndexPath` its section and item; Linux's Foundation does not, and fetched-results
// controllers speak in them.
#if !canImport(UIKit) && !canImport(AppKit)
extension IndexPath {
    /// An index path to an item of a section (two indexes: section, then item).
    ///
    /// Use it with `FetchedResultsController.object(at:)`.
    public init(item: Int, section: Int) {
        self.init(indexes: [section, item])
    }

    /// The section index: the first index.
    public var section: Int { self[0] }

    /// The item index within the section: the second index.
    public var item: Int { self[1] }
}
#endif
