import Foundation
import Granary
import Synchronization

/// Models by name, so a stack can be started with a name alone (`PersistentContainer(name: "Notes")`),
/// as Core Data's containers load a compiled model by name.
///
/// Linux has no compiled model bundles. A container made from a name looks here first, then for the
/// model's `.xcdatamodeld` source shipped with the app (see `PersistentContainer.init(name:)`). Register
/// a model once at start-up when it is built in code, when its entities have classes of their own
/// (read the file with `ManagedObjectModel(contentsOf:classes:)`), or to make it lazily.
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
    private let entries = Mutex<[String: Entry]>([:])

    /// An empty registry, for tests or for apps that keep several sets of models apart.
    public init() {}

    /// Registers a built model under `name`, replacing any earlier one.
    public func register(_ model: ManagedObjectModel, named name: String) {
        entries.withLock { $0[name] = .built(model) }
    }

    /// Registers a model built on first use, for models costly to build that some runs never need.
    public func register(named name: String, _ make: @escaping @Sendable () throws -> ManagedObjectModel) {
        entries.withLock { $0[name] = .factory(make) }
    }

    /// The names registered so far.
    public var names: [String] { entries.withLock { $0.keys.sorted() } }

    /// The model registered under `name`, built now if it was registered as a factory.
    /// - Throws: `StackError.unknownModel` naming the registered models; a factory's own error.
    public func model(named name: String) throws -> ManagedObjectModel {
        let entry = entries.withLock { $0[name] }
        switch entry {
        case .built(let model):
            return model
        case .factory(let make):
            let model = try make()
            entries.withLock { $0[name] = .built(model) }
            return model
        case nil:
            throw StackError.unknownModel(name: name, registered: names)
        }
    }
}
