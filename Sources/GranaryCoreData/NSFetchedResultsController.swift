import Granary

/// One section of an `NSFetchedResultsController`'s results: Core Data's `NSFetchedResultsSectionInfo`.
public protocol NSFetchedResultsSectionInfo {
    /// The section key path's value as text (`""` without a section key path).
    var name: String { get }
    /// The section's index title.
    var indexTitle: String? { get }
    /// How many objects the section holds.
    var numberOfObjects: Int { get }
    /// The section's objects, in order.
    var objects: [Any]? { get }
}

/// A section of Granary's controller seen as Core Data's section info.
struct SectionInfo: NSFetchedResultsSectionInfo {
    let section: FetchedResultsController<ManagedObject>.Section
    var name: String { section.name }
    var indexTitle: String? { section.indexTitle }
    var numberOfObjects: Int { section.numberOfObjects }
    var objects: [Any]? { section.objects }
}

/// Hears an `NSFetchedResultsController`'s changes: Core Data's `NSFetchedResultsControllerDelegate`,
/// with its methods' exact signatures, so that a Core Data delegate class compiles unchanged. Every
/// method has a default, as Core Data's are optional.
///
/// The calls are Granary's `FetchedResultsControllerDelegate` calls, in its order (see there). The
/// `controller` passed is a view of the app's controller typed `NSFetchedResultsController<NSFetchRequestResult>`,
/// as in Core Data, but not the same object: Swift's generic classes are not covariant, so compare
/// controllers by `fetchRequest` or keep one delegate per controller rather than testing `===`.
public protocol NSFetchedResultsControllerDelegate: AnyObject {
    /// Called before the changes of one event are reported.
    func controllerWillChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>)
    /// An object was inserted (`newIndexPath`), deleted (`indexPath`), moved or updated (both).
    func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange anObject: Any, at indexPath: IndexPath?,
                    for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?)
    /// A section was inserted or deleted.
    func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange sectionInfo: NSFetchedResultsSectionInfo,
                    atSectionIndex sectionIndex: Int, for type: NSFetchedResultsChangeType)
    /// Called after the changes of one event were reported.
    func controllerDidChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>)
    /// A section's index title; by default its name's first character, uppercased.
    func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, sectionIndexTitleForSectionName sectionName: String) -> String?
}

extension NSFetchedResultsControllerDelegate {
    public func controllerWillChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) {}
    public func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange anObject: Any, at indexPath: IndexPath?,
                           for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?) {}
    public func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange sectionInfo: NSFetchedResultsSectionInfo,
                           atSectionIndex sectionIndex: Int, for type: NSFetchedResultsChangeType) {}
    public func controllerDidChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) {}
    public func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>,
                           sectionIndexTitleForSectionName sectionName: String) -> String? {
        FetchedResultsController<ManagedObject>.defaultSectionIndexTitle(forSectionName: sectionName)
    }
}

/// Forwards Granary's delegate calls to a Core Data delegate, passing the controller's untyped view; and
/// holds what a controller and its untyped view share.
final class DelegateBridge: FetchedResultsControllerDelegate {
    typealias Result = ManagedObject
    var hasFetched = false
    weak var delegate: NSFetchedResultsControllerDelegate?
    weak var view: NSFetchedResultsController<NSFetchRequestResult>?

    func controllerWillChangeContent(_ controller: FetchedResultsController<ManagedObject>) {
        guard let delegate, let view else { return }
        delegate.controllerWillChangeContent(view)
    }

    func controller(_ controller: FetchedResultsController<ManagedObject>, didChange object: ManagedObject, at indexPath: IndexPath?,
                    for type: FetchedResultsChangeType, newIndexPath: IndexPath?) {
        guard let delegate, let view else { return }
        delegate.controller(view, didChange: object, at: indexPath, for: type, newIndexPath: newIndexPath)
    }

    func controller(_ controller: FetchedResultsController<ManagedObject>, didChange sectionInfo: FetchedResultsController<ManagedObject>.Section,
                    atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType) {
        guard let delegate, let view else { return }
        delegate.controller(view, didChange: SectionInfo(section: sectionInfo), atSectionIndex: sectionIndex, for: type)
    }

    func controllerDidChangeContent(_ controller: FetchedResultsController<ManagedObject>) {
        guard let delegate, let view else { return }
        delegate.controllerDidChangeContent(view)
    }

    func controller(_ controller: FetchedResultsController<ManagedObject>, sectionIndexTitleForSectionName sectionName: String) -> String? {
        guard let delegate, let view else { return FetchedResultsController<ManagedObject>.defaultSectionIndexTitle(forSectionName: sectionName) }
        return delegate.controller(view, sectionIndexTitleForSectionName: sectionName)
    }
}

/// Core Data's `NSFetchedResultsController`, with its exact shapes (optional `fetchedObjects` and
/// `sections`, section infos, a Core Data delegate), over Granary's `FetchedResultsController`, which
/// does the fetching and the tracking of changes.
///
/// `ResultType` is the managed object class (`NSFetchedResultsController<Quake>`), or
/// `NSFetchRequestResult` in the delegate's signatures. Granary's controller behind it is
/// `fetchedResultsController`.
open class NSFetchedResultsController<ResultType>: CustomStringConvertible {
    /// The request whose results the controller keeps; it must have sort descriptors.
    public let fetchRequest: NSFetchRequest<ResultType>
    /// The context the results live in.
    public let managedObjectContext: ManagedObjectContext
    /// The key path that names each object's section, if any.
    public let sectionNameKeyPath: String?
    /// Accepted and kept, not used: Granary keeps no section cache on disk.
    public let cacheName: String?
    /// Granary's controller that does the work.
    public let fetchedResultsController: FetchedResultsController<ManagedObject>
    private let bridge: DelegateBridge
    /// The untyped view passed to delegates (self when `ResultType` is `NSFetchRequestResult`).
    private var untypedView: NSFetchedResultsController<NSFetchRequestResult>?

    /// A controller of `fetchRequest`'s results in `context`: Core Data's
    /// `init(fetchRequest:managedObjectContext:sectionNameKeyPath:cacheName:)`. Nothing is fetched until
    /// `performFetch()`; a predicate that did not parse makes `performFetch()` throw.
    public init(fetchRequest: NSFetchRequest<ResultType>, managedObjectContext context: ManagedObjectContext,
                sectionNameKeyPath: String?, cacheName name: String?) {
        self.fetchRequest = fetchRequest
        managedObjectContext = context
        self.sectionNameKeyPath = sectionNameKeyPath
        cacheName = name
        fetchedResultsController = FetchedResultsController<ManagedObject>(fetchRequest: fetchRequest, managedObjectContext: context,
                                                                           sectionNameKeyPath: sectionNameKeyPath, cacheName: name)
        bridge = DelegateBridge()
        fetchedResultsController.delegate = bridge
    }

    /// The untyped view of another controller: same Granary controller, same delegate bridge.
    private init<Other>(viewOf other: NSFetchedResultsController<Other>, request: NSFetchRequest<ResultType>) {
        fetchRequest = request
        managedObjectContext = other.managedObjectContext
        sectionNameKeyPath = other.sectionNameKeyPath
        cacheName = other.cacheName
        fetchedResultsController = other.fetchedResultsController
        bridge = other.bridge
    }

    /// Hears the changes, Core Data's way. Held weakly, as in Core Data.
    public weak var delegate: NSFetchedResultsControllerDelegate? {
        get { bridge.delegate }
        set {
            bridge.delegate = newValue
            bridge.view = untyped()
        }
    }

    /// This controller typed as the delegate methods take it.
    private func untyped() -> NSFetchedResultsController<NSFetchRequestResult> {
        if let same = self as? NSFetchedResultsController<NSFetchRequestResult> { return same }
        if let untypedView { return untypedView }
        let request = NSFetchRequest<NSFetchRequestResult>()
        request.copySettings(of: fetchRequest)
        request.entityName = fetchRequest.resolvedEntityName(in: managedObjectContext.model)
        let view = NSFetchedResultsController<NSFetchRequestResult>(viewOf: self, request: request)
        untypedView = view
        return view
    }

    /// Fetches the results and starts following the context's changes.
    /// - Throws: as Granary's `FetchedResultsController.performFetch()` (no sort order, a bad section key
    ///   path, an unknown entity or key, a predicate that did not parse).
    open func performFetch() throws {
        try fetchedResultsController.performFetch()
        bridge.hasFetched = true
    }

    /// The results in order; nil before `performFetch()`, as in Core Data.
    open var fetchedObjects: [ResultType]? {
        guard bridge.hasFetched else { return nil }
        return fetchedResultsController.fetchedObjects.compactMap { $0 as? ResultType }
    }

    /// The sections; nil before `performFetch()`.
    open var sections: [NSFetchedResultsSectionInfo]? {
        guard bridge.hasFetched else { return nil }
        return fetchedResultsController.sections.map(SectionInfo.init)
    }

    /// The object at a section and row; the index path must be valid.
    open func object(at indexPath: IndexPath) -> ResultType {
        fetchedResultsController.object(at: indexPath) as! ResultType
    }

    /// Where an object is in the results, or nil.
    open func indexPath(forObject object: ResultType) -> IndexPath? {
        guard let object = object as? ManagedObject else { return nil }
        return fetchedResultsController.indexPath(forObject: object)
    }

    /// The sections' distinct index titles, in order.
    open var sectionIndexTitles: [String] { fetchedResultsController.sectionIndexTitles }

    /// The section of an index title: Core Data's `section(forSectionIndexTitle:at:)`; `sectionIndex`
    /// is used when the title heads no section.
    open func section(forSectionIndexTitle title: String, at sectionIndex: Int) -> Int {
        fetchedResultsController.section(forSectionIndexTitle: title) ?? sectionIndex
    }

    /// Core Data's default index title of a section name.
    open func sectionIndexTitle(forSectionName sectionName: String) -> String? {
        FetchedResultsController<ManagedObject>.defaultSectionIndexTitle(forSectionName: sectionName)
    }

    /// Accepted for Core Data code; does nothing, as Granary keeps no section caches.
    open class func deleteCache(withName name: String?) {}

    open var description: String { "<NSFetchedResultsController \(fetchRequest.entityName ?? "\(ResultType.self)")>" }
}
