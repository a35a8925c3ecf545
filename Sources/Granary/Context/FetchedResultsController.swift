import Foundation
import Synchronization

/// How an object or a section changed in a fetched-results controller (Core Data's
/// `NSFetchedResultsChangeType`); `FetchedResultsDifference` defines each.
public enum FetchedResultsChangeType: Sendable, Hashable {
    /// New in the results.
    case insert
    /// Gone from the results.
    case delete
    /// Changed place relative to the other results, or changed section.
    case move
    /// Changed in place.
    case update
}

/// Hears what a fetched-results controller's results did at each change event, one call per section and
/// object change between a will-change and a did-change call (Core Data's
/// `NSFetchedResultsControllerDelegate`). Every method has a default that does nothing.
///
/// The call sequence for one event: `controllerWillChangeContent`; section deletions (old indexes,
/// ascending), then section insertions (new indexes, ascending); object deletions, insertions, moves,
/// updates (each ascending, as in `FetchedResultsDifference`); `controllerDidChangeContent`. The
/// controller already holds the new results during the calls. Events that change nothing call nothing.
public protocol FetchedResultsControllerDelegate<Result>: AnyObject {
    associatedtype Result: ManagedObject

    /// Called before the changes of one event are reported.
    func controllerWillChangeContent(_ controller: FetchedResultsController<Result>)

    /// An object was inserted (`newIndexPath` only), deleted (`indexPath` only, its old one), moved or
    /// updated (both: old and new index paths).
    func controller(_ controller: FetchedResultsController<Result>, didChange object: Result, at indexPath: IndexPath?,
                    for type: FetchedResultsChangeType, newIndexPath: IndexPath?)

    /// A section was inserted (its new index) or deleted (its old index, and its old contents).
    func controller(_ controller: FetchedResultsController<Result>, didChange sectionInfo: FetchedResultsController<Result>.Section,
                    atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType)

    /// Called after the changes of one event were reported.
    func controllerDidChangeContent(_ controller: FetchedResultsController<Result>)

    /// The index title of a section; by default the controller's `sectionIndexTitle(forSectionName:)`
    /// (its name's first character, uppercased, unless a subclass says otherwise).
    func controller(_ controller: FetchedResultsController<Result>, sectionIndexTitleForSectionName sectionName: String) -> String?
}

extension FetchedResultsControllerDelegate {
    public func controllerWillChangeContent(_ controller: FetchedResultsController<Result>) {}
    public func controller(_ controller: FetchedResultsController<Result>, didChange object: Result, at indexPath: IndexPath?,
                           for type: FetchedResultsChangeType, newIndexPath: IndexPath?) {}
    public func controller(_ controller: FetchedResultsController<Result>, didChange sectionInfo: FetchedResultsController<Result>.Section,
                           atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType) {}
    public func controllerDidChangeContent(_ controller: FetchedResultsController<Result>) {}
    public func controller(_ controller: FetchedResultsController<Result>, sectionIndexTitleForSectionName sectionName: String) -> String? {
        controller.sectionIndexTitle(forSectionName: sectionName)
    }
}

/// The results of a sorted fetch request, kept up to date as objects change in its context, split into
/// sections (Core Data's `NSFetchedResultsController`).
///
/// Use it to drive a list: `performFetch()` once, read `sections` / `object(at:)`, and hear each change
/// event through a `delegate`, the `onChange` closure or `differences()`, as index paths to apply.
///
/// ```swift
/// var request = FetchRequest<Employee>(sortBy: [SortDescriptor(\.name)])
/// request.predicate = #Predicate { $0.salary > 50_000 }
/// let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: context,
///                                           sectionNameKeyPath: "company.name")
/// try context.performAndWait { try controller.performFetch() }
/// ```
///
/// Semantics:
/// - **When it updates.** At each objects-did-change event of its context: `processPendingChanges()`,
///   the start of `save()`, fetches, `rollback()`, `refreshAllObjects()` and merges
///   (`mergeChanges(fromContextDidSave:)`, automatic merging). Every event gives at most one
///   difference. Use the controller on its context's queue, like the context.
/// - **What it sees.** The objects as they are in the context, saved or not: the request's
///   `includesPendingChanges` is taken as `true`. Objects inserted elsewhere and merged in are loaded
///   and tested; so are updated objects the context did not hold.
/// - **How.** The objects an event names are re-tested with the predicate in memory (the evaluator
///   fetches use) and put in place by the sort; the others keep their place. When the event also names
///   objects of other entities and the predicate, sort or section key path goes through a relationship
///   (or is a `#Predicate`/`SortDescriptor` the store cannot run), or the request has a `fetchLimit` or
///   `fetchOffset`, the request is fetched again instead, so that changes of related objects count.
///   Without sections and with a sort on attributes, an event that names few of the results costs time
///   in proportion to the objects it names (binary searches), not to the results: about 40 µs for one
///   object of 10,000 (release build), against 13 ms for comparing the results whole.
/// - **Order.** The request's sort; objects that tie keep their previous relative order, and objects
///   that tie with ones already there come after them. `fetchedObjects` is the sections concatenated.
/// - **Sections.** With a `sectionNameKeyPath` (an attribute, possibly through to-one relationships),
///   consecutive objects with the same value form a section, named by the value as text (`""` for nil).
///   As in Core Data, the first sort key must order by the section key path; otherwise a name can head
///   several sections. Without one there is exactly one section, named `""`, even when empty.
/// - **Differences.** See `FetchedResultsDifference` for inserts, deletes, moves and updates.
/// - `reset()` of the context detaches every object: call `performFetch()` again after it.
/// - **Subclasses** may override the section index (`sectionIndexTitle(forSectionName:)`,
///   `sectionIndexTitles`, `section(forSectionIndexTitle:at:)`), as with Core Data's class; a
///   delegate's `controller(_:sectionIndexTitleForSectionName:)` still comes first.
/// - **No cache.** `cacheName` is accepted for source compatibility and kept, but nothing is written:
///   see `init(fetchRequest:managedObjectContext:sectionNameKeyPath:cacheName:)`.
open class FetchedResultsController<Result: ManagedObject> {
    /// One section of the results (Core Data's `NSFetchedResultsSectionInfo`).
    public struct Section: FetchedResultsSectionInfo {
        /// The section key path's value as text, or `""` without a section key path.
        public let name: String
        /// The title for a section index, from the delegate or `defaultSectionIndexTitle(forSectionName:)`.
        public let indexTitle: String?
        /// The section's objects, in order.
        public let objects: [Result]
        /// How many objects the section holds.
        public var numberOfObjects: Int { objects.count }
    }

    /// The request whose results the controller keeps; it must have a sort order.
    public let fetchRequest: FetchRequest<Result>
    /// The context the results live in and whose changes the controller follows.
    public let managedObjectContext: ManagedObjectContext
    /// The key path of the attribute whose value names an object's section (`"company.name"`), if any.
    public let sectionNameKeyPath: String?
    /// The cache name given at creation (Core Data's `cacheName`); Granary keeps no cache under it.
    public let cacheName: String?
    /// Hears each change event's changes one by one.
    public weak var delegate: (any FetchedResultsControllerDelegate<Result>)?
    /// Called once per change event that changed something, after the delegate, with the whole difference.
    public var onChange: ((FetchedResultsDifference) -> Void)?

    /// The results in order (empty until `performFetch()`).
    public private(set) var fetchedObjects: [Result] = []
    /// The results by section (empty until `performFetch()`).
    public private(set) var sections: [Section] = []
    /// What stopped the last update, if it failed (a predicate the evaluator rejects, a removed store):
    /// the results then stay as they were until the next event or `performFetch()`.
    public private(set) var trackingError: (any Error)?

    private struct Plan {
        var entity: EntityDescription
        var predicate: PredicateNode?
        var unlowered: Predicate<Result>?
        /// `nil` when a sort descriptor has no key path the model names: descriptors then compare objects.
        var sortKeys: [SortKey]?
        var decimalKeys: [Bool]
        var sectionKeyPath: KeyPathExpr?
        var dependsOnRelatedObjects: Bool
        var isWindowed: Bool
    }

    /// What the controller remembers of each result: its sort values, section name, and tie-breaking rank.
    private struct Entry {
        var keys: [Value]
        var section: String
        var rank: Int
    }

    /// Which way `update(for:)` goes; tests force each to compare them.
    enum UpdatePath {
        /// The incremental path when it applies and the event names few results, else the general one.
        case automatic
        /// Always the general path: the old and new results compared whole.
        case general
        /// The incremental path whenever it applies, however many objects the event names.
        case incremental
    }

    var updatePath = UpdatePath.automatic
    /// How many events took the incremental path, for tests that must know it was taken.
    private(set) var incrementalUpdateCount = 0
    private var plan: Plan?
    private var entries: [ObjectIdentifier: Entry] = [:]
    /// Index paths by object, for `indexPath(forObject:)` on sectioned results; built when first asked
    /// after a change, not at every change: most events are never asked about.
    private var positions: [ObjectIdentifier: IndexPath]?
    /// The results' IDs, in the order of `fetchedObjects`, for the incremental path to find results the
    /// context no longer holds by comparing plain values; built when first needed, kept by the
    /// incremental path, dropped by the general one. Only a temporary ID can change (to a permanent
    /// one, at a save), so only temporary ones are read again.
    private var resultIDs: [ManagedObjectID]?
    private var nextRank = 0
    private var feedToken: UInt64?
    private var isFetching = false
    private var isProcessing = false
    private var queued: [ContextChanges] = []
    private let streams = EventStreams<FetchedResultsDifference>()

    /// A controller for a request that has a sort order (`sortDescriptors` or `sortKeys`); nothing is
    /// fetched until `performFetch()`.
    ///
    /// - Parameters:
    ///   - fetchRequest: The request whose results the controller keeps; it must have a sort order.
    ///   - managedObjectContext: The context whose objects and changes the controller follows.
    ///   - sectionNameKeyPath: The attribute (possibly through to-one relationships) whose value names
    ///     each object's section; `nil` for one section.
    ///   - cacheName: Accepted so that Core Data code compiles unchanged, and kept in `cacheName`;
    ///     nothing is cached. Core Data's cache saves recomputing sections over SQLite at launch, and
    ///     must be deleted by hand whenever the request changes, or it serves stale sections. Granary's
    ///     fetch with its sort on an index is that fast already, and the sections are worked out as the
    ///     results are read, so a file would only add a way to be wrong.
    public init(fetchRequest: FetchRequest<Result>, managedObjectContext: ManagedObjectContext, sectionNameKeyPath: String? = nil,
                cacheName: String? = nil) {
        self.fetchRequest = fetchRequest
        self.managedObjectContext = managedObjectContext
        self.sectionNameKeyPath = sectionNameKeyPath
        self.cacheName = cacheName
    }

    /// Core Data's `deleteCache(withName:)`, for source compatibility: Granary keeps no section cache
    /// (see `init(fetchRequest:managedObjectContext:sectionNameKeyPath:cacheName:)`), so there is
    /// nothing to delete, for any name or for `nil` (every cache).
    public static func deleteCache(withName name: String?) {}

    deinit {
        if let feedToken { managedObjectContext.objectsDidChangeFeed.unsubscribe(feedToken) }
        streams.finish()
    }

    // MARK: Results

    /// Fetches the results and starts following the context's changes; call it again to start over.
    /// - Throws: `ContextError.invalidRequest` when the request has no sort order or the section key path
    ///   does not end at an attribute; `.unknownEntity`, `PredicateParseError` for unknown keys, store errors.
    open func performFetch() throws {
        let context = managedObjectContext
        context.assertOnQueue()
        let plan = try makePlan()
        isFetching = true
        defer { isFetching = false }
        let fetched = try context.fetchObjects(trackingRequest).compactMap { $0 as? Result }
        let evaluator = ObjectEvaluator(context: context)
        var fresh: [ObjectIdentifier: Entry] = [:]
        for (rank, object) in fetched.enumerated() {
            fresh[ObjectIdentifier(object)] = try entry(for: object, rank: rank, plan, evaluator)
        }
        self.plan = plan
        entries = fresh
        nextRank = fetched.count
        queued = []
        trackingError = nil
        install(fetched.sorted { precedes($0, $1, plan) })
        if feedToken == nil {
            let box = WeakController(self)
            feedToken = context.objectsDidChangeFeed.subscribe { changes, _ in box.controller?.contextDidChange(changes) }
        }
    }

    /// The object at a section and item; the index path must be valid.
    open func object(at indexPath: IndexPath) -> Result {
        sections[indexPath.section].objects[indexPath.item]
    }

    /// Where an object is in the results, or `nil` when it is not one of them.
    open func indexPath(forObject object: Result) -> IndexPath? {
        guard let plan, entries[ObjectIdentifier(object)] != nil else { return nil }
        if plan.sectionKeyPath == nil, plan.sortKeys != nil, let item = index(of: object, plan) { return IndexPath(item: item, section: 0) }
        if let positions { return positions[ObjectIdentifier(object)] }
        var built: [ObjectIdentifier: IndexPath] = [:]
        built.reserveCapacity(fetchedObjects.count)
        for (s, section) in sections.enumerated() {
            for (i, object) in section.objects.enumerated() { built[ObjectIdentifier(object)] = IndexPath(item: i, section: s) }
        }
        positions = built
        return built[ObjectIdentifier(object)]
    }

    /// Where a result is in `fetchedObjects`, found by its sort values in `entries`; with `sortKeys`
    /// those are the values the order was made with, so a binary search finds it.
    private func index(of object: Result, _ plan: Plan) -> Int? {
        guard let keys = plan.sortKeys, let entry = entries[ObjectIdentifier(object)] else { return nil }
        let objects = fetchedObjects
        let i = objects.firstIndex(sortedBy: { !Self.precedes(entries[ObjectIdentifier($0)]!, entry, keys, plan.decimalKeys) })
        if i < objects.count && objects[i] === object { return i }
        // Only an order that is not total (which `ValueOrder` should never give) gets here.
        return objects.firstIndex { $0 === object }
    }

    /// The distinct index titles of the sections, in section order.
    ///
    /// Override it to show another index (every letter of the alphabet, say) and override
    /// `section(forSectionIndexTitle:at:)` with it.
    open var sectionIndexTitles: [String] {
        var seen = Set<String>()
        return sections.compactMap(\.indexTitle).filter { seen.insert($0).inserted }
    }

    /// The index of the first section with this index title, or `nil`.
    public func section(forSectionIndexTitle title: String) -> Int? {
        sections.firstIndex { $0.indexTitle == title }
    }

    /// The section a tap on the index entry `title`, at `sectionIndex` in `sectionIndexTitles`, shows
    /// (Core Data's `section(forSectionIndexTitle:at:)`): the first section with that title, else the
    /// last section whose title sorts before it, else 0.
    ///
    /// Override it together with `sectionIndexTitles` when the index lists titles no section has.
    open func section(forSectionIndexTitle title: String, at sectionIndex: Int) -> Int {
        if let found = section(forSectionIndexTitle: title) { return found }
        return sections.lastIndex { ($0.indexTitle ?? "") < title } ?? 0
    }

    /// The index title of a section name (Core Data's `sectionIndexTitle(forSectionName:)`): by
    /// default `defaultSectionIndexTitle(forSectionName:)`, the name's first character, uppercased.
    ///
    /// Override it to index sections differently; a delegate's
    /// `controller(_:sectionIndexTitleForSectionName:)` still wins when it returns a title.
    open func sectionIndexTitle(forSectionName sectionName: String) -> String? {
        Self.defaultSectionIndexTitle(forSectionName: sectionName)
    }

    /// Core Data's default index title: the name's first character, uppercased; `nil` for `""`.
    public static func defaultSectionIndexTitle(forSectionName name: String) -> String? {
        name.first.map { String($0).uppercased() }
    }

    /// An async sequence of the differences of every later change event that changed something.
    ///
    /// Use it instead of a delegate from async code; it ends when the controller goes away.
    public func differences() -> AsyncStream<FetchedResultsDifference> {
        streams.makeStream()
    }

    // MARK: Planning

    private var trackingRequest: FetchRequest<Result> {
        var request = fetchRequest
        request.includesPendingChanges = true
        return request
    }

    private func makePlan() throws -> Plan {
        let context = managedObjectContext
        let entity = try context.entity(for: fetchRequest)
        guard let model = context.model else { throw ContextError.noPersistentStore("the context has no coordinator") }
        if fetchRequest.sortDescriptors.isEmpty && fetchRequest.sortKeys.isEmpty {
            throw ContextError.invalidRequest(entity: entity.name, reason: "a fetched-results controller needs a sort order (sortDescriptors or sortKeys)")
        }
        let (fetch, unlowered) = try context.storeFetch(trackingRequest, window: false)
        let sortKeys = fetch.sort.isEmpty ? nil : fetch.sort

        func property(at path: KeyPathExpr) -> PropertyDescription? {
            var current = entity
            for (i, name) in path.enumerated() {
                guard let property = current.propertiesByName[name] else { return nil }
                if i == path.count - 1 { return property }
                guard let r = property.relationship, !r.isToMany, let next = model.entity(named: r.destinationEntityName) else { return nil }
                current = next
            }
            return nil
        }
        var sectionKeyPath: KeyPathExpr?
        if let name = sectionNameKeyPath {
            let path = name.split(separator: ".").map(String.init)
            guard !path.isEmpty, property(at: path)?.attribute != nil else {
                throw ContextError.invalidRequest(entity: entity.name,
                                                  reason: "section name key path '\(name)' must name an attribute (through to-one relationships)")
            }
            sectionKeyPath = path
        }
        let crossesRelationships = (fetch.predicate.map(Self.crossesRelationships) ?? false) || unlowered != nil || sortKeys == nil
            || sortKeys!.contains { $0.keyPath.count > 1 } || (sectionKeyPath?.count ?? 0) > 1
        return Plan(entity: entity, predicate: fetch.predicate, unlowered: unlowered, sortKeys: sortKeys,
                    decimalKeys: (sortKeys ?? []).map { property(at: $0.keyPath)?.attribute?.type == .decimal },
                    sectionKeyPath: sectionKeyPath, dependsOnRelatedObjects: crossesRelationships,
                    isWindowed: fetchRequest.fetchLimit > 0 || fetchRequest.fetchOffset > 0)
    }

    /// Whether the predicate reads other objects than the one it tests.
    private static func crossesRelationships(_ node: PredicateNode) -> Bool {
        switch node {
        case .true, .false: return false
        case .and(let terms), .or(let terms): return terms.contains(where: crossesRelationships)
        case .not(let term): return crossesRelationships(term)
        case .compare(let path, _, let rhs):
            if case .keyPath(let other) = rhs, other.count > 1 { return true }
            return path.count > 1
        // An object test on a relationship of the object reads only the references the object holds.
        case .isIn(let path, _), .between(let path, _, _), .string(let path, _, _, _, _), .isNil(let path), .objects(let path, _): return path.count > 1
        case .any, .count: return true
        }
    }

    // MARK: Membership and order

    private func entry(for object: Result, rank: Int, _ plan: Plan, _ evaluator: ObjectEvaluator) throws -> Entry {
        let keys = try (plan.sortKeys ?? []).map { try evaluator.value(at: $0.keyPath, of: object) }
        let section = try plan.sectionKeyPath.map { Self.sectionName(for: try evaluator.value(at: $0, of: object)) } ?? ""
        return Entry(keys: keys, section: section, rank: rank)
    }

    private static func sectionName(for value: Value) -> String {
        switch value {
        case .null, .reference, .references: return ""
        case .string(let s): return s
        case .int(let i): return String(i)
        case .double(let d): return String(d)
        case .bool(let b): return String(b)
        case .date(let d): return d.formatted(.iso8601)
        case .uuid(let u): return u.uuidString
        case .bytes(let b): return b.map { String(format: "%02x", $0) }.joined()
        }
    }

    /// The object as a result, if it belongs in the results now.
    private func member(_ object: ManagedObject, _ plan: Plan, _ evaluator: ObjectEvaluator) throws -> Result? {
        guard let result = object as? Result, object.managedObjectContext === managedObjectContext, !object.isDeleted,
            fetchRequest.includesSubentities ? object.entity.isKind(of: plan.entity) : object.entity == plan.entity
        else { return nil }
        if let predicate = plan.predicate, try !evaluator.matches(predicate, object) { return nil }
        if let unlowered = plan.unlowered, try !unlowered.evaluate(result) { return nil }
        return result
    }

    private func precedes(_ a: Result, _ b: Result, _ plan: Plan) -> Bool {
        let x = entries[ObjectIdentifier(a)]!
        let y = entries[ObjectIdentifier(b)]!
        if let keys = plan.sortKeys { return Self.precedes(x, y, keys, plan.decimalKeys) }
        let order = fetchRequest.sortDescriptors.lazy.map { $0.compare(a, b) }.first { $0 != .orderedSame } ?? .orderedSame
        return order == .orderedSame ? x.rank < y.rank : order == .orderedAscending
    }

    /// The order by sort values, then rank.
    private static func precedes(_ x: Entry, _ y: Entry, _ keys: [SortKey], _ decimalKeys: [Bool]) -> Bool {
        for (i, key) in keys.enumerated() {
            let r = ValueOrder.sortOrder(x.keys[i], y.keys[i], asDecimals: decimalKeys[i], strings: key.comparison)
            if r != .orderedSame { return (r == .orderedAscending) == key.ascending }
        }
        return x.rank < y.rank
    }

    // MARK: Following the context

    private func contextDidChange(_ changes: ContextChanges) {
        guard plan != nil, !isFetching else { return }
        queued.append(changes)
        // A delegate that changes the context and processes its changes reaches here again: queue those.
        guard !isProcessing else { return }
        isProcessing = true
        defer { isProcessing = false }
        while !queued.isEmpty {
            let next = queued.removeFirst()
            do {
                try update(for: next)
                trackingError = nil
            } catch {
                trackingError = error
            }
        }
    }

    private func update(for changes: ContextChanges) throws {
        guard let plan, let model = managedObjectContext.model else { return }
        var relevant: [ManagedObjectID] = []
        var namesOtherEntities = false
        for id in changes.inserted.union(changes.updated).union(changes.refreshed).union(changes.deleted) {
            if let entity = model.entity(named: id.entityName),
                fetchRequest.includesSubentities ? entity.isKind(of: plan.entity) : entity == plan.entity
            {
                relevant.append(id)
            } else {
                namesOtherEntities = true
            }
        }
        let refetch = plan.isWindowed || (namesOtherEntities && plan.dependsOnRelatedObjects)
        guard refetch || !relevant.isEmpty else { return }
        // New arrivals get ranks in ID order, so that ties come out the same from run to run.
        relevant = Self.sortedInIDOrder(relevant)

        let incremental = !refetch && plan.sectionKeyPath == nil && plan.sortKeys != nil
        switch updatePath {
        case .automatic where incremental && Self.isFew(relevant.count, of: fetchedObjects.count),
             .incremental where incremental:
            try updateIncrementally(for: changes, relevant, plan)
        default:
            try updateGenerally(for: changes, relevant, refetch: refetch, plan)
        }
    }

    /// IDs by primary key (temporary ones last), then by URI. The URI is made only for IDs whose keys
    /// tie (temporary IDs, rows of different tables): making it takes about 20 µs (a URL is built and
    /// percent-encoded), and making it at every comparison took half of an event of 64 objects.
    static func sortedInIDOrder(_ ids: [ManagedObjectID]) -> [ManagedObjectID] {
        let keys = ids.map { $0.primaryKey ?? .max }
        var occurrences: [Int64: Int] = [:]
        for key in keys { occurrences[key, default: 0] += 1 }
        let uris = zip(ids, keys).map { id, key in occurrences[key]! > 1 ? id.description : "" }
        return ids.indices.sorted { (keys[$0], uris[$0]) < (keys[$1], uris[$1]) }.map { ids[$0] }
    }

    /// Whether `count` named objects are few enough in `total` results for the incremental path. It
    /// costs per named object two binary searches and two moves of the array (a `memmove` each); the
    /// general path hashes every result several times. Measured (release, in-memory store, half the
    /// objects renamed, half moved): the two cost the same near 30 named objects of 100, near 250 of
    /// 1,000, near 1,000 of 10,000. A sixteenth stays 4 to 16 times below that at those sizes; the cap
    /// of 64 bounds the moves of very large arrays (128 of 8 MB at a million results).
    private static func isFew(_ count: Int, of total: Int) -> Bool {
        count <= 64 && count * 16 <= total
    }

    /// The rank an object had, or the next one for a newcomer.
    private func rank(of object: Result) -> Int {
        if let rank = entries[ObjectIdentifier(object)]?.rank { return rank }
        defer { nextRank += 1 }
        return nextRank
    }

    /// The event's objects of the entity, tested again: those of the old results (`current`), and the
    /// objects that belong now, with their new entries, in ID order. Reads `entries`, does not write them.
    private func examine(_ relevant: [ManagedObjectID], _ changes: ContextChanges, current: (ManagedObjectID) -> Result?,
                         _ plan: Plan, _ evaluator: ObjectEvaluator) throws -> (leaving: [Result], arriving: [(object: Result, entry: Entry)]) {
        let context = managedObjectContext
        var leaving: [Result] = []
        var seen = Set<ObjectIdentifier>()
        // Objects loaded here and found not to belong would otherwise go away at once, and a later one
        // could take the address, and so the identifier, `seen` remembers.
        var examined: [ManagedObject] = []
        defer { withExtendedLifetime(examined) {} }
        var arriving: [(object: Result, entry: Entry)] = []
        for id in relevant {
            let current = current(id)
            if let current { leaving.append(current) }
            // Membership follows the object's state (deleted objects are flagged or detached); only
            // objects the context does not hold are loaded, and never for a deleted ID.
            let loadable = !id.isTemporaryID && !changes.deleted.contains(id)
            guard let object = current ?? context.registeredObject(for: id) ?? (loadable ? try? context.existingObject(with: id) : nil),
                seen.insert(ObjectIdentifier(object)).inserted
            else { continue }
            examined.append(object)
            guard let result = try member(object, plan, evaluator) else { continue }
            arriving.append((result, try entry(for: result, rank: rank(of: result), plan, evaluator)))
        }
        return (leaving, arriving)
    }

    /// The objects an event reported changed (edited, refreshed, merged, inserted), found by `current`
    /// among the old results or else among the context's objects.
    private func changedObjects(_ changes: ContextChanges, current: (ManagedObjectID) -> Result?) -> Set<ObjectIdentifier> {
        var changed = Set<ObjectIdentifier>()
        for id in changes.updated.union(changes.refreshed).union(changes.inserted) {
            if let object = current(id) ?? managedObjectContext.registeredObject(for: id) { changed.insert(ObjectIdentifier(object)) }
        }
        return changed
    }

    /// The general update: the old and new results compared whole, in time and hashing linear in the
    /// results. Any request, any event.
    private func updateGenerally(for changes: ContextChanges, _ relevant: [ManagedObjectID], refetch: Bool, _ plan: Plan) throws {
        let context = managedObjectContext
        let evaluator = ObjectEvaluator(context: context)
        let old = fetchedObjects
        let byID = Dictionary(old.map { ($0.objectID, $0) }, uniquingKeysWith: { a, _ in a })
        let changed = changedObjects(changes) { byID[$0] }

        let ordered: [Result]
        if refetch {
            let fetched = try context.fetchObjects(trackingRequest).compactMap { $0 as? Result }
            var fresh: [ObjectIdentifier: Entry] = [:]
            for object in fetched { fresh[ObjectIdentifier(object)] = try entry(for: object, rank: rank(of: object), plan, evaluator) }
            entries = fresh
            ordered = fetched.sorted { precedes($0, $1, plan) }
        } else {
            let (leavers, arriving) = try examine(relevant, changes, current: { byID[$0] }, plan, evaluator)
            let leaving = Set(leavers.map(ObjectIdentifier.init))
            var fresh = entries
            for (object, entry) in arriving { fresh[ObjectIdentifier(object)] = entry }
            let arrived = Set(arriving.map { ObjectIdentifier($0.object) })
            for gone in leaving.subtracting(arrived) { fresh[gone] = nil }
            entries = fresh
            ordered = Self.merge(old.filter { !leaving.contains(ObjectIdentifier($0)) }, arriving.map(\.object).sorted { precedes($0, $1, plan) }) {
                precedes($0, $1, plan)
            }
        }

        let oldSections = sections
        install(ordered)
        let (difference, objectChanges) = FetchedResultsDifference.between(
            old: oldSections.map { ($0.name, $0.objects.map(ObjectIdentifier.init)) },
            new: sections.map { ($0.name, $0.objects.map(ObjectIdentifier.init)) }, changed: changed)
        report(difference, objectChanges, oldSections: oldSections) { oldSections[$0.section].objects[$0.item] }
    }

    /// The incremental update, for one section sorted by `sortKeys` and an event that names few of the
    /// results: the named objects are found by binary search on their old sort values, taken out and put
    /// back by binary search, and the difference is worked out from them alone
    /// (`FetchedResultsDifference.forOneSection`). It gives exactly what `updateGenerally` gives.
    private func updateIncrementally(for changes: ContextChanges, _ relevant: [ManagedObjectID], _ plan: Plan) throws {
        incrementalUpdateCount += 1
        let context = managedObjectContext
        let evaluator = ObjectEvaluator(context: context)
        // The old result with each ID, as `byID` finds it in the general path. A result the context holds
        // is registered under its ID; one it does not (detached by a deletion or a reset) is looked for in
        // `resultIDs` when an ID is not found (an object new to the context, a deletion merged in): a
        // pass over plain values, where reading each result's ID took 0.3 ms of 10,000 (a dynamic call
        // and an exclusivity check each). Only IDs of the entity can be results' IDs.
        var found: [ManagedObjectID: Result] = [:]
        var unresolved: [ManagedObjectID] = []
        for id in relevant {
            if let object = context.registeredObject(for: id) as? Result, object.objectID == id, entries[ObjectIdentifier(object)] != nil {
                found[id] = object
            } else {
                unresolved.append(id)
            }
        }
        if !unresolved.isEmpty {
            var ids = resultIDs ?? fetchedObjects.map(\.objectID)
            for i in ids.indices {
                if ids[i].isTemporaryID { ids[i] = fetchedObjects[i].objectID }
                if unresolved.contains(ids[i]) && found[ids[i]] == nil { found[ids[i]] = fetchedObjects[i] }
            }
            resultIDs = ids
        }
        let changed = changedObjects(changes) { found[$0] }
        let (leavers, arriving) = try examine(relevant, changes, current: { found[$0] }, plan, evaluator)

        // Old indexes, by the old sort values, before `entries` takes the new ones.
        var oldIndex: [ObjectIdentifier: Int] = [:]
        for object in leavers {
            guard let i = index(of: object, plan) else { preconditionFailure("a result missing from fetchedObjects") }
            oldIndex[ObjectIdentifier(object)] = i
        }
        let arrived = Set(arriving.map { ObjectIdentifier($0.object) })
        var deleted: [(index: Int, object: Result)] = []
        for object in leavers where !arrived.contains(ObjectIdentifier(object)) {
            deleted.append((oldIndex[ObjectIdentifier(object)]!, object))
            entries[ObjectIdentifier(object)] = nil
        }
        for (object, entry) in arriving { entries[ObjectIdentifier(object)] = entry }
        let keys = plan.sortKeys!

        // The sections hold the same array: dropping them first lets the array change in place.
        let oldCount = fetchedObjects.count
        sections = []
        positions = nil
        for i in oldIndex.values.sorted(by: >) {
            fetchedObjects.remove(at: i)
            resultIDs?.remove(at: i)
        }
        var inserted: [Int] = []
        var replaced: [FetchedResultsDifference.Replaced] = []
        // In order, each arrival lands after the earlier ones: its index is final once inserted.
        for (object, entry) in arriving.sorted(by: { Self.precedes($0.entry, $1.entry, keys, plan.decimalKeys) }) {
            let i = fetchedObjects.firstIndex(sortedBy: { Self.precedes(entry, entries[ObjectIdentifier($0)]!, keys, plan.decimalKeys) })
            fetchedObjects.insert(object, at: i)
            resultIDs?.insert(object.objectID, at: i)
            if let old = oldIndex[ObjectIdentifier(object)] {
                replaced.append(.init(old: old, new: i, isChanged: changed.contains(ObjectIdentifier(object))))
            } else {
                inserted.append(i)
            }
        }
        sections = [makeSection(name: "", objects: fetchedObjects)]

        let (difference, objectChanges) = FetchedResultsDifference.forOneSection(
            oldCount: oldCount, deleted: deleted.map(\.index), inserted: inserted, replaced: replaced)
        let deletedObjects = Dictionary(uniqueKeysWithValues: deleted)
        report(difference, objectChanges, oldSections: []) { deletedObjects[$0.item]! }
    }

    /// Tells the delegate, `onChange` and the streams of a difference, unless it is empty; the
    /// controller holds the new results already. `deletedObject` gives an old object by its old index path.
    private func report(_ difference: FetchedResultsDifference, _ objectChanges: [FetchedResultsDifference.ObjectChange<some Hashable>],
                        oldSections: [Section], deletedObject: (IndexPath) -> Result) {
        guard !difference.isEmpty else { return }
        if let delegate {
            delegate.controllerWillChangeContent(self)
            for change in difference.deletedSections {
                delegate.controller(self, didChange: oldSections[change.index], atSectionIndex: change.index, for: .delete)
            }
            for change in difference.insertedSections {
                delegate.controller(self, didChange: sections[change.index], atSectionIndex: change.index, for: .insert)
            }
            for change in objectChanges {
                let object = change.new.map { self.object(at: $0) } ?? deletedObject(change.old!)
                delegate.controller(self, didChange: object, at: change.old, for: change.type, newIndexPath: change.new)
            }
            delegate.controllerDidChangeContent(self)
        }
        onChange?(difference)
        streams.yield(difference)
    }

    /// Two sorted lists as one sorted list.
    private static func merge(_ a: [Result], _ b: [Result], by precedes: (Result, Result) -> Bool) -> [Result] {
        var merged: [Result] = []
        merged.reserveCapacity(a.count + b.count)
        var i = 0
        var j = 0
        while i < a.count && j < b.count {
            if precedes(b[j], a[i]) {
                merged.append(b[j])
                j += 1
            } else {
                merged.append(a[i])
                i += 1
            }
        }
        merged += a[i...]
        merged += b[j...]
        return merged
    }

    /// Takes an ordered list as the results: sections, positions.
    private func install(_ ordered: [Result]) {
        fetchedObjects = ordered
        var groups: [(name: String, objects: [Result])] = []
        if plan?.sectionKeyPath == nil {
            groups = [("", ordered)]
        } else {
            for object in ordered {
                let name = entries[ObjectIdentifier(object)]!.section
                if groups.last?.name == name { groups[groups.count - 1].objects.append(object) } else { groups.append((name, [object])) }
            }
        }
        sections = groups.map { makeSection(name: $0.name, objects: $0.objects) }
        positions = nil
        resultIDs = nil
    }

    private func makeSection(name: String, objects: [Result]) -> Section {
        let title = delegate.map { $0.controller(self, sectionIndexTitleForSectionName: name) } ?? sectionIndexTitle(forSectionName: name)
        return Section(name: name, indexTitle: title, objects: objects)
    }

    /// Lets the context's change feed reach the controller without keeping it alive.
    private final class WeakController: @unchecked Sendable {
        // @unchecked: the feed calls back on the context's queue (objects-did-change is posted there),
        // the one queue the controller is used on.
        weak var controller: FetchedResultsController?
        init(_ controller: FetchedResultsController) { self.controller = controller }
    }
}

extension Array {
    /// The first index whose element satisfies `isAfter`, for an array in which every element that
    /// does follows every one that does not (a binary search); `count` when none does.
    fileprivate func firstIndex(sortedBy isAfter: (Element) -> Bool) -> Int {
        var low = 0
        var high = count
        while low < high {
            let mid = low + (high - low) / 2
            if isAfter(self[mid]) { high = mid } else { low = mid + 1 }
        }
        return low
    }
}
