import Foundation
import Granary

/// Models by name, so a stack can be started with a name alone (`PersistentContainer(name: "Notes",
/// strategy: .direct)`), as Core Data's containers load a compiled model by name.
///
/// Linux has no compiled model bundles; register each model once at start-up, built in code or
/// lazily. (Loading Xcode model files is planned: issue 6.)
///
/// ```swift
/// ModelRegistry.shared.register(named: "Notes") { try NotesModel.make() }
/// let container = try PersistentContainer(name: "Notes", strategy: .mixed).start()
/// ```
public final class ModelRegistry: Sendable {
    /// The registry containers use unless given another.
    public static let shared = ModelRegistry()

    private enum Entry {
        case built(ManagedObjectModel)
        case factory(@Sendable () throws -> ManagedObjectModel)
    }
    private let lock = NSLock()
    nonisolated(unsafe) private var entries: [String: Entry] = [:]  // guarded by `lock`

    public init() {}

    /// Registers a built model under `name`, replacing any earlier one.
    public func register(_ model: ManagedObjectModel, named name: String) {
        lock.withLock { entries[name] = .built(model) }
    }

    /// Registers a model built on first use, for models costly to build that some runs never need.
    public func register(named name: String, _ make: @escaping @Sendable () throws -> ManagedObjectModel) {
        lock.withLock { entries[name] = .factory(make) }
    }

    /// The names registered so far.
    public var names: [String] { lock.withLock { entries.keys.sorted() } }

    /// The model registered under `name`, built now if it was registered as a factory.
    /// - Throws: `StackError.unknownModel` naming the registered models; a factory's own error.
    public func model(named name: String) throws -> ManagedObjectModel {
        let entry = lock.withLock { entries[name] }
        switch entry {
        case .built(let model):
            return model
        case .factory(let make):
            let model = try make()
            lock.withLock { entries[name] = .built(model) }
            return model
        case nil:
            throw StackError.unknownModel(name: name, registered: names)
        }
    }
}
