import Foundation
import Granary
import Synchronization

/// A stack with two coordinators on the same stores: one for the user interface, one for writers, so
/// that heavy background imports never wait for, or make wait, the view context.
///
/// - `viewContext`: on the main coordinator, store-trump merging (what imports saved wins over its
///   stale edits, per property). With `isViewContextReadOnly` it uses rollback merging and refuses to
///   save, so nothing written in it ever reaches the store.
/// - `importerContext()`: a private-queue context on the writer coordinator with object-trump merging,
///   for imports that save straight to the store without touching the view context.
/// - `temporaryContext()`: on the main coordinator with rollback merging, for scratch objects; it
///   refuses to save (`ContextError.readOnlyContext`): nothing in it is ever stored.
/// - `editorContext()`: a child of the view context with overwrite merging, for an edit the user may
///   cancel: saving it pushes its changes into the view context, which the container then saves to
///   the store (on the view context's queue, right after); dropping it (or `rollback()`) discards
///   everything.
///
/// **Smart merge**: after an importer (any context on the writer coordinator) saves, the objects the
/// view context has loaded are refreshed with the new values, deleted ones leave it, and inserted ones
/// are announced to its observers; nothing else is loaded into it, so an import of 200,000 objects
/// costs the view context only what it shows. Saves on the main coordinator do not trigger it. Set
/// `shouldMergeIncomingSavedObjects` to `false` to turn it off (the view context then goes stale until
/// refreshed).
///
/// The two coordinators share each store's open engine (`addPersistentStore(sharing:)`), so each sees
/// the other's commits as soon as they are made, and optimistic locking (row versions) catches
/// conflicting writes between them.
public final class ImportingContainer: PersistentStack {
    /// Names the default store and directory.
    public let name: String
    /// The model both coordinators use.
    public let managedObjectModel: ManagedObjectModel
    /// The main coordinator: the view, temporary and editor contexts read through it.
    public let persistentStoreCoordinator: PersistentStoreCoordinator
    /// The writer coordinator: importer contexts write through it.
    public let writerCoordinator: PersistentStoreCoordinator
    /// The user interface's context: main coordinator, store-trump merging (or read-only, rollback).
    public let viewContext: ManagedObjectContext
    /// Whether the view context refuses to save and yields to the store on conflicts (rollback merging).
    public let isViewContextReadOnly: Bool
    /// Where stores go when an attach call names no directory.
    public let storeDirectory: URL
    private let attachments: StoreAttachments
    private let mergesIncomingSaves = Switch()
    private let reportBackgroundSaveFailure: @Sendable (StackError) -> Void
    private let observers: [ContextObserver]

    /// - Parameters:
    ///   - name: Names the default store (`<name>.granary`) and the default directory.
    ///   - model: The model; both coordinators use it.
    ///   - isViewContextReadOnly: Make the view context read-only with rollback merging.
    ///   - options: Store directory, view-context queue, background-save error handler.
    public init(name: String, model: ManagedObjectModel, isViewContextReadOnly: Bool = false, options: StackOptions = StackOptions()) {
        self.name = name
        self.managedObjectModel = model
        self.isViewContextReadOnly = isViewContextReadOnly
        let main = PersistentStoreCoordinator(managedObjectModel: model)
        let writer = PersistentStoreCoordinator(managedObjectModel: model)
        persistentStoreCoordinator = main
        writerCoordinator = writer
        storeDirectory = options.storeDirectory ?? StoreDirectory.defaultURL(for: name)
        attachments = StoreAttachments(containerName: name, model: model, defaultDirectory: storeDirectory, coordinators: [main, writer])
        let handler = options.backgroundSaveErrorHandler
        reportBackgroundSaveFailure = { handler?($0) }

        let view = ManagedObjectContext(concurrencyType: options.viewContextQueue, coordinator: main)
        view.name = "\(name).view"
        view.mergePolicy = isViewContextReadOnly ? .rollback : .mergeByPropertyStoreTrump
        view.isReadOnly = isViewContextReadOnly
        viewContext = view

        let writerID = ObjectIdentifier(writer)
        let viewID = ObjectIdentifier(view)
        let isImporter: @Sendable (ManagedObjectContext) -> Bool = { context in
            context.parent == nil && context.persistentStoreCoordinator.map(ObjectIdentifier.init) == writerID
        }
        let isEditor: @Sendable (ManagedObjectContext) -> Bool = { context in context.parent.map(ObjectIdentifier.init) == viewID }
        var observers = [
            ContextObserver(.didSave, where: isImporter) { [weak view, mergesIncomingSaves] _, changes in
                guard let view, mergesIncomingSaves.isOn else { return }
                // mergeChanges refreshes only objects the view context has loaded; the rest is announced.
                view.schedule { view.mergeChanges(fromContextDidSave: changes) }
            },
        ]
        if !isViewContextReadOnly {
            let report = reportBackgroundSaveFailure
            observers += [
                ContextObserver(.willSave, where: isEditor) { context, _ in
                    // The editor may go on editing what it inserted after the view context saved it.
                    try? context.obtainPermanentIDsForInsertedObjects()
                },
                ContextObserver(.didSave, where: isEditor) { [weak view] _, _ in
                    view?.scheduleSave(container: name, report: report)
                },
            ]
        }
        self.observers = observers
    }

    /// A container for the model named like it: the one registered under the name in `models`, or
    /// else a `<name>.xcdatamodeld` or `<name>.xcdatamodel` shipped with the app (see
    /// `PersistentContainer.init(name:)` for where it is looked for).
    /// - Throws: `StackError.modelNotFound` naming the registered models and the directories searched;
    ///   `.modelUnreadable` when a model factory throws or the model file cannot be read.
    public convenience init(name: String, isViewContextReadOnly: Bool = false, options: StackOptions = StackOptions(),
                            models: ModelRegistry = .shared) throws(StackError) {
        let model = try ModelSearch(registry: models).model(named: name)
        self.init(name: name, model: model, isViewContextReadOnly: isViewContextReadOnly, options: options)
    }

    /// Whether importer saves are merged into the view context (the smart merge); `true` by default.
    public var shouldMergeIncomingSavedObjects: Bool {
        get { mergesIncomingSaves.isOn }
        set { mergesIncomingSaves.isOn = newValue }
    }

    /// Whether `start()` has run.
    public var isStarted: Bool { attachments.isStarted }
    /// The attached stores, as the main coordinator holds them.
    public var persistentStores: [PersistentStore] { attachments.persistentStores }

    /// Opens the attached stores on both coordinators (or one durable store at
    /// `<storeDirectory>/<name>.granary` if none was attached).
    /// - Throws: `StackError.alreadyStarted`, `.attachFailed`.
    @discardableResult
    public func start() throws(StackError) -> Self {
        try attachments.start(defaults: attachments.requests([StoreConfiguration()], in: nil))
        return self
    }

    /// A private-queue context on the writer coordinator with object-trump merging, for imports: its
    /// saves go straight to the store, and the view context merges them (see the smart merge).
    public func importerContext() -> ManagedObjectContext {
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: writerCoordinator)
        context.name = "\(name).importer"
        context.mergePolicy = .mergeByPropertyObjectTrump
        return context
    }

    /// A private-queue context on the main coordinator with rollback merging, for scratch objects that
    /// must never be stored: its `save()` throws `ContextError.readOnlyContext`.
    public func temporaryContext() -> ManagedObjectContext {
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: persistentStoreCoordinator)
        context.name = "\(name).temporary"
        context.mergePolicy = .rollback
        context.isReadOnly = true
        return context
    }

    /// A private-queue child of the view context with overwrite merging, for an edit the user may
    /// cancel. Saving it pushes into the view context, which the container then saves to the store;
    /// dropping it discards everything. With a read-only view context its saves stay in the view
    /// context, unsaved.
    public func editorContext() -> ManagedObjectContext {
        let context = ManagedObjectContext(concurrencyType: .privateQueue, parent: viewContext)
        context.name = "\(name).editor"
        context.mergePolicy = .overwrite
        return context
    }

    /// An importer context: background work in this container is importing.
    public func newBackgroundContext() -> ManagedObjectContext { importerContext() }

    /// Opens the stores and attaches each to both coordinators (sharing one open engine).
    /// - Throws: as `PersistentStack.attachPersistentStores(at:for:)`.
    @discardableResult
    public func attachPersistentStores(at directory: URL?, for configurations: [StoreConfiguration]) throws(StackError) -> [PersistentStore] {
        try attachments.attach(configurations, in: directory)
    }

    /// Detaches the stores from both coordinators; their objects leave the view context.
    /// - Throws: `StackError.notAttached`, `.detachFailed`.
    public func detach(persistentStores stores: [PersistentStore]) throws(StackError) {
        let gone = try attachments.detach(stores)
        viewContext.schedule { [viewContext] in viewContext.forgetObjects(ofStores: gone) }
    }

    /// Waits until the view context has merged every importer save so far and saved what editors
    /// pushed into it.
    public func flush() async throws {
        await viewContext.drain()
    }
}

/// A flag observers can hold without holding the container.
private final class Switch: Sendable {
    private let state = Atomic<Bool>(true)
    var isOn: Bool {
        get { state.load(ordering: .relaxed) }
        set { state.store(newValue, ordering: .relaxed) }
    }
}
