import Foundation
import Granary

/// A stack with one coordinator and a context layout of your choosing: Core Data's
/// `NSPersistentContainer`, generic over a `ContextStrategy`.
///
/// ```swift
/// let container = try PersistentContainer(name: "Notes", model: model, strategy: .mixed).start()
/// let notes = try await container.viewContext.perform { try container.viewContext.count(for: FetchRequest<Note>()) }
/// try await container.performBackgroundTask { context in
///     Note(context: context).text = "written off the main queue"
///     try context.save()
/// }
/// ```
///
/// The strategy decides where contexts sit and how saves reach the store and the view context:
/// `.direct` (the default), `.independent`, `.nested`, `.mixed`, or your own (see `ContextStrategy` and
/// <doc:ChoosingAContextStrategy>). Without other instructions `start()` opens one durable store at
/// `<storeDirectory>/<name>.granary`, where `storeDirectory` is the per-user data directory
/// (`$XDG_DATA_HOME/<name>` or `~/.local/share/<name>`) unless `StackOptions.storeDirectory` says
/// otherwise.
public final class PersistentContainer<Strategy: ContextStrategy>: PersistentStack {
    /// Names the default store and directory.
    public let name: String
    /// The model every context uses.
    public let managedObjectModel: ManagedObjectModel
    /// The one coordinator; the strategy decides which contexts sit on it.
    public let persistentStoreCoordinator: PersistentStoreCoordinator
    /// The layout chosen at creation.
    public let strategy: Strategy
    /// The contexts the strategy built: the view context and, for some strategies, a root context.
    public let contexts: Strategy.Contexts
    /// Where stores go when an attach call names no directory.
    public let storeDirectory: URL
    private let attachments: StoreAttachments

    /// A container for a model built in code.
    /// - Parameters:
    ///   - name: Names the default store (`<name>.granary`) and the default directory.
    ///   - model: The model; share one instance between containers.
    ///   - strategy: How contexts are laid out (`.direct`, `.independent`, `.nested`, `.mixed`).
    ///   - options: Store directory, view-context queue, background-save error handler.
    public init(name: String, model: ManagedObjectModel, strategy: Strategy, options: StackOptions = StackOptions()) {
        self.name = name
        self.managedObjectModel = model
        self.strategy = strategy
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        self.persistentStoreCoordinator = coordinator
        self.storeDirectory = options.storeDirectory ?? StoreDirectory.defaultURL(for: name)
        self.attachments = StoreAttachments(containerName: name, model: model, defaultDirectory: storeDirectory, coordinators: [coordinator])
        let handler = options.backgroundSaveErrorHandler
        self.contexts = strategy.makeContexts(StackEnvironment(coordinator: coordinator, containerName: name,
                                                               viewContextQueue: options.viewContextQueue,
                                                               reportBackgroundSaveFailure: { handler?($0) }))
    }

    /// A container for the model registered under the container's name (Core Data's convention of a
    /// model file named like the container; on Linux, models are registered in code, see
    /// `ModelRegistry`).
    /// - Throws: `StackError.unknownModel` naming the registered models; a model factory's error.
    public convenience init(name: String, strategy: Strategy, options: StackOptions = StackOptions(),
                            models: ModelRegistry = .shared) throws {
        try self.init(name: name, model: models.model(named: name), strategy: strategy, options: options)
    }

    /// The strategy's view context.
    public var viewContext: ManagedObjectContext { contexts.viewContext }
    /// Whether `start()` has run.
    public var isStarted: Bool { attachments.isStarted }
    /// The attached stores.
    public var persistentStores: [PersistentStore] { attachments.persistentStores }

    /// Opens the attached stores (or one durable store at `<storeDirectory>/<name>.granary` if none
    /// was attached) and returns the container, for one-line starts.
    /// - Throws: `StackError.alreadyStarted`, `.attachFailed`.
    @discardableResult
    public func start() throws(StackError) -> Self {
        try attachments.start(defaults: [StoreConfiguration()])
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

extension PersistentContainer where Strategy == DirectStrategy {
    /// A container with the direct strategy, the default: every context on the coordinator, background
    /// saves merged into the view context.
    public convenience init(name: String, model: ManagedObjectModel, options: StackOptions = StackOptions()) {
        self.init(name: name, model: model, strategy: .direct, options: options)
    }

    /// A container with the direct strategy for the model registered under the container's name.
    /// - Throws: `StackError.unknownModel`; a model factory's error.
    public convenience init(name: String, options: StackOptions = StackOptions(), models: ModelRegistry = .shared) throws {
        try self.init(name: name, strategy: .direct, options: options, models: models)
    }
}
