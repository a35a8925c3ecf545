import Foundation
import Granary
import Synchronization

/// A stack with one coordinator, its stores and its contexts: Core Data's `NSPersistentContainer`, with a
/// context layout of your choosing.
///
/// Code written for Core Data's container works as written: made from a name alone, the container finds
/// its model (see `init(name:)`), and `loadPersistentStores(completionHandler:)` opens the stores of
/// its `persistentStoreDescriptions`:
///
/// ```swift
/// let container = PersistentContainer(name: "Model")
/// container.loadPersistentStores { description, error in
///     if let error { fatalError("Unresolved error \(error)") }
/// }
/// ```
///
/// Or, in one line with a model built in code, `start()`:
///
/// ```swift
/// let container = try PersistentContainer(name: "Notes", model: model, strategy: .mixed).start()
/// try await container.performBackgroundTask { context in
///     Note(context: context).text = "written off the main queue"
///     try context.save()
/// }
/// ```
///
/// The strategy decides where contexts sit and how saves reach the store and the view context:
/// `.direct` (the default), `.independent`, `.nested`, `.mixed`, or your own (see `ContextStrategy` and
/// <doc:ChoosingAContextStrategy>). It is chosen when the container is made and is not part of its
/// type, so a property declared `let container: PersistentContainer` holds a container of any layout.
///
/// Stores go in `storeDirectory`: `defaultDirectoryURL()` for Core Data's initializers; for Granary's,
/// `StackOptions.storeDirectory` or else the per-user data directory named after the container
/// (`$XDG_DATA_HOME/<name>` or `~/.local/share/<name>`).
public final class PersistentContainer: PersistentStack {
    /// Names the default store and, for Granary's initializers, the default directory.
    public let name: String
    /// The model every context uses (an empty one when `init(name:)` found none; loading then fails).
    public let managedObjectModel: ManagedObjectModel
    /// The one coordinator; the strategy decides which contexts sit on it.
    public let persistentStoreCoordinator: PersistentStoreCoordinator
    /// The layout chosen at creation (`DirectStrategy` unless another was given).
    public let strategy: any ContextStrategy
    /// The contexts the strategy built: the view context and, for some strategies, a root context,
    /// reached by casting to the strategy's type (`container.contexts as? MixedContexts`).
    public let contexts: any StackContexts
    /// Where stores go when an attach call names no directory, and where the default store description
    /// points.
    public let storeDirectory: URL
    let attachments: StoreAttachments
    /// Why the model named like the container could not be had: `init(name:)` does not throw, as in
    /// Core Data, so loading reports it.
    let modelFailure: StackError?
    private let descriptions: Mutex<[PersistentStoreDescription]>
    /// Loads the stores of descriptions that ask to be added asynchronously, one after the other.
    let loadQueue: DispatchQueue

    private init<Strategy: ContextStrategy>(name: String, model: ManagedObjectModel, strategy: Strategy, storeDirectory: URL,
                                            options: StackOptions, modelFailure: StackError?) {
        self.name = name
        self.managedObjectModel = model
        self.strategy = strategy
        self.modelFailure = modelFailure
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        self.persistentStoreCoordinator = coordinator
        self.storeDirectory = storeDirectory
        self.attachments = StoreAttachments(containerName: name, model: model, defaultDirectory: storeDirectory, coordinators: [coordinator])
        self.descriptions = Mutex([PersistentStoreDescription(url: storeDirectory.appendingPathComponent("\(name).granary", isDirectory: true))])
        self.loadQueue = DispatchQueue(label: "Granary.PersistentContainer.\(name).load")
        let handler = options.backgroundSaveErrorHandler
        self.contexts = strategy.makeContexts(StackEnvironment(coordinator: coordinator, containerName: name,
                                                               viewContextQueue: options.viewContextQueue,
                                                               reportBackgroundSaveFailure: { handler?($0) }))
    }

    // MARK: Granary's initializers

    /// A container for a model built in code, with the contexts laid out as `strategy` says.
    /// - Parameters:
    ///   - name: Names the default store (`<name>.granary`) and the default directory.
    ///   - model: The model; share one instance between containers.
    ///   - strategy: How contexts are laid out (`.direct`, `.independent`, `.nested`, `.mixed`).
    ///   - options: Store directory, view-context queue, background-save error handler.
    public convenience init(name: String, model: ManagedObjectModel, strategy: some ContextStrategy, options: StackOptions = StackOptions()) {
        self.init(name: name, model: model, strategy: strategy, storeDirectory: options.storeDirectory ?? StoreDirectory.defaultURL(for: name),
                  options: options, modelFailure: nil)
    }

    /// A container with the direct strategy, the default: every context on the coordinator, background
    /// saves merged into the view context.
    /// - Parameters:
    ///   - name: Names the default store (`<name>.granary`) and the default directory.
    ///   - model: The model; share one instance between containers.
    ///   - options: Store directory, view-context queue, background-save error handler.
    public convenience init(name: String, model: ManagedObjectModel, options: StackOptions = StackOptions()) {
        self.init(name: name, model: model, strategy: .direct, options: options)
    }

    /// A container for the model named like it (see `init(name:)` for where it is looked for), failing
    /// here rather than when the stores load.
    /// - Parameters:
    ///   - name: The model's name; also names the default store and directory.
    ///   - strategy: How contexts are laid out.
    ///   - options: Store directory, view-context queue, background-save error handler.
    ///   - models: Searched before the model files; `ModelRegistry.shared` by default.
    /// - Throws: `StackError.modelNotFound` naming the registered models and the directories searched;
    ///   `.modelUnreadable` when a model factory throws or the model file cannot be read.
    public convenience init(name: String, strategy: some ContextStrategy, options: StackOptions = StackOptions(),
                            models: ModelRegistry = .shared) throws(StackError) {
        let model = try ModelSearch(registry: models).model(named: name)
        self.init(name: name, model: model, strategy: strategy, options: options)
    }

    /// A container with the direct strategy for the model named like it, failing here rather than when
    /// the stores load.
    /// - Parameters:
    ///   - name: The model's name; also names the default store and directory.
    ///   - options: Store directory, view-context queue, background-save error handler.
    ///   - models: Searched before the model files; `ModelRegistry.shared` by default.
    /// - Throws: `StackError.modelNotFound` naming the registered models and the directories searched;
    ///   `.modelUnreadable` when a model factory throws or the model file cannot be read.
    public convenience init(name: String, options: StackOptions, models: ModelRegistry = .shared) throws(StackError) {
        try self.init(name: name, strategy: .direct, options: options, models: models)
    }

    /// A container with the direct strategy for the model registered in `models` under its name, or
    /// shipped as a model file, failing here rather than when the stores load.
    /// - Parameters:
    ///   - name: The model's name; also names the default store and directory.
    ///   - models: Searched before the model files.
    /// - Throws: `StackError.modelNotFound` naming the registered models and the directories searched;
    ///   `.modelUnreadable` when a model factory throws or the model file cannot be read.
    public convenience init(name: String, models: ModelRegistry) throws(StackError) {
        try self.init(name: name, strategy: .direct, options: StackOptions(), models: models)
    }

    // MARK: Core Data's initializers

    /// A container for the model named `name`, with the direct strategy and the default store
    /// description: Core Data's `init(name:)`, which every Core Data tutorial starts with.
    ///
    /// The model is the one registered under `name` in `ModelRegistry.shared`, or else the first
    /// `<name>.xcdatamodeld` or `<name>.xcdatamodel` in the main bundle's resources, the main
    /// executable's directory, or a SwiftPM resource bundle beside it (`<Package>_<Target>.resources`),
    /// read with `ManagedObjectModel(contentsOf:)`: its entities are plain `ManagedObject`s (register
    /// the model with its classes to use subclasses). As in Core Data, a missing model does not stop
    /// the container from being made: `loadPersistentStores` then reports `StackError.modelNotFound`,
    /// naming the places searched, for every description (and `start()` throws it). To fail at once,
    /// use `init(name:models:)`.
    ///
    /// The default description is one durable store, `defaultDirectoryURL()/<name>.granary`.
    /// - Parameter name: The model's name and the default store's.
    public convenience init(name: String) {
        self.init(name: name, search: ModelSearch())
    }

    /// A container for a model you made, with the direct strategy and the default store description
    /// (`defaultDirectoryURL()/<name>.granary`): Core Data's `init(name:managedObjectModel:)`.
    /// - Parameters:
    ///   - name: Names the default store.
    ///   - model: The model.
    public convenience init(name: String, managedObjectModel model: ManagedObjectModel) {
        self.init(name: name, model: model, strategy: .direct, storeDirectory: Self.defaultDirectoryURL(), options: StackOptions(),
                  modelFailure: nil)
    }

    /// `init(name:)` searching `search` instead of the shared registry and the app's directories.
    convenience init(name: String, search: ModelSearch) {
        let model: ManagedObjectModel
        var failure: StackError?
        do {
            model = try search.model(named: name)
        } catch {
            failure = error
            // An empty model cannot be invalid; the container is unusable anyway until it has a model.
            model = try! ManagedObjectModel(entities: [])
        }
        self.init(name: name, model: model, strategy: .direct, storeDirectory: Self.defaultDirectoryURL(), options: StackOptions(),
                  modelFailure: failure)
    }

    /// The directory Core Data's initializers put stores in: the per-user data directory of this
    /// application, `$XDG_DATA_HOME/<executable>` or `~/.local/share/<executable>` (see
    /// `StoreDirectory`), as Core Data's `defaultDirectoryURL()` is the app's own Application Support
    /// directory. It is not created until a store is loaded there.
    public static func defaultDirectoryURL() -> URL {
        StoreDirectory.defaultURL(for: ProcessInfo.processInfo.processName)
    }

    // MARK: Stores and contexts

    /// The stores `loadPersistentStores` (or `start()`, when no store was attached before it) opens, in
    /// order: one durable store, `storeDirectory/<name>.granary`, unless changed. Change them before
    /// loading; changes after it do nothing.
    public var persistentStoreDescriptions: [PersistentStoreDescription] {
        get { descriptions.withLock { $0 } }
        set { descriptions.withLock { $0 = newValue } }
    }

    /// The strategy's view context.
    public var viewContext: ManagedObjectContext { contexts.viewContext }
    /// Whether `start()` or `loadPersistentStores` has run.
    public var isStarted: Bool { attachments.isStarted }
    /// The attached stores.
    public var persistentStores: [PersistentStore] { attachments.persistentStores }

    /// Opens the attached stores or, if none was attached, the stores of `persistentStoreDescriptions`
    /// (by default one durable store at `<storeDirectory>/<name>.granary`), all or none, and returns the
    /// container, for one-line starts.
    /// - Throws: `StackError.alreadyStarted`; `.attachFailed` naming the store that could not open;
    ///   `.unsupportedOption` for a description asking for what Granary does not do; `.modelNotFound`
    ///   or `.modelUnreadable` when `init(name:)` found no usable model.
    @discardableResult
    public func start() throws(StackError) -> Self {
        if let modelFailure { throw modelFailure }
        var defaults: [StoreRequest] = []
        if attachments.persistentStores.isEmpty {
            for description in persistentStoreDescriptions { defaults.append(try description.storeRequest(container: name)) }
        }
        try attachments.start(defaults: defaults)
        return self
    }

    /// A new private-queue context placed where the strategy says.
    public func newBackgroundContext() -> ManagedObjectContext { contexts.newBackgroundContext() }

    /// Opens and attaches the stores, all or none.
    /// - Throws: as `PersistentStack.attachPersistentStores(at:for:)`.
    @discardableResult
    public func attachPersistentStores(at directory: URL?, for configurations: [StoreConfiguration]) throws(StackError) -> [PersistentStore] {
        try attachments.attach(configurations, in: directory)
    }

    /// Detaches the stores; their objects leave the strategy's own contexts.
    /// - Throws: `StackError.notAttached`, `.detachFailed`.
    public func detach(persistentStores stores: [PersistentStore]) throws(StackError) {
        let gone = try attachments.detach(stores)
        for context in contexts.ownedContexts { context.schedule { context.forgetObjects(ofStores: gone) } }
    }

    /// Waits for the strategy's merges and background saves.
    /// - Throws: `StackError.backgroundSaveFailed`.
    public func flush() async throws { try await contexts.flush() }
}
