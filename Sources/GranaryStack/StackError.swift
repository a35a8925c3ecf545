import Foundation
import Granary

/// What the stack layer throws. Every message names the container, configuration, store location or
/// entity involved, so a failure at start-up or after a log-out says what to fix.
public enum StackError: Error, CustomStringConvertible {
    /// A fetch or save reached the stores before `start()`.
    case notStarted(container: String, entity: String)
    /// `start()` or `loadPersistentStores` was called on a stack that is already running (its stores
    /// were loaded once already).
    case alreadyStarted(container: String)
    /// The store holding the entity (or the object) was detached; `configuration` is `nil` for the
    /// model's default configuration.
    case storeDetached(container: String, configuration: String?, url: URL?, entity: String)
    /// No attached store holds the entity: its configuration was never attached.
    case noStoreForEntity(container: String, entity: String, attachedConfigurations: [String])
    /// The model has no configuration by this name.
    case unknownConfiguration(container: String, configuration: String, known: [String])
    /// A store for this configuration is already attached; detach it first.
    case alreadyAttached(container: String, configuration: String?, url: URL?)
    /// Opening the store failed (locked by another process, damaged, written by another model…).
    case attachFailed(container: String, configuration: String?, url: URL?, underlying: any Error)
    /// `detach` was given a store this stack did not attach (or already detached).
    case notAttached(container: String, store: String)
    /// Detaching (closing the store's files) failed.
    case detachFailed(container: String, store: String, underlying: any Error)
    /// No model is registered under this name (what a `ModelRegistry` throws).
    case unknownModel(name: String, registered: [String])
    /// A container made from a name alone found no model by that name: none registered, no model file
    /// in any of the directories searched.
    case modelNotFound(name: String, registered: [String], searched: [URL])
    /// A model was found by name but could not be made: a registered factory threw, or the model file
    /// at `source` is not a model Granary can read.
    case modelUnreadable(name: String, source: String, underlying: any Error)
    /// A store description asks for something Granary does not do yet (remote-change notifications);
    /// loading that store fails instead of ignoring the option.
    case unsupportedOption(container: String, url: URL?, key: String, reason: String)
    /// A save the stack ran in the background (a root context writing its children's saves to the
    /// store, a view context saving an editor's changes) failed; the changes stay where they were.
    case backgroundSaveFailed(container: String, context: String, underlying: any Error)

    /// The message, naming what is involved.
    public var description: String {
        switch self {
        case .notStarted(let container, let entity):
            return "container '\(container)' has not been started: call start() before fetching or saving '\(entity)'"
        case .alreadyStarted(let container):
            return "container '\(container)' is already started: its stores were loaded by start() or loadPersistentStores before"
        case .storeDetached(let container, let configuration, let url, let entity):
            return "the store of \(Self.name(configuration)) (\(Self.place(url))) holding '\(entity)' was detached from container '\(container)'"
        case .noStoreForEntity(let container, let entity, let attached):
            let list = attached.isEmpty ? "none" : attached.joined(separator: ", ")
            return "container '\(container)' has no store attached for '\(entity)' (attached configurations: \(list))"
        case .unknownConfiguration(let container, let configuration, let known):
            let list = known.isEmpty ? "none" : known.sorted().joined(separator: ", ")
            return "the model of container '\(container)' has no configuration '\(configuration)' (it has: \(list))"
        case .alreadyAttached(let container, let configuration, let url):
            return "container '\(container)' already has a store for \(Self.name(configuration)) (\(Self.place(url))); detach it first"
        case .attachFailed(let container, let configuration, let url, let underlying):
            return "container '\(container)' could not attach the store of \(Self.name(configuration)) at \(Self.place(url)): \(underlying)"
        case .notAttached(let container, let store):
            return "the store \(store) is not attached to container '\(container)'"
        case .detachFailed(let container, let store, let underlying):
            return "container '\(container)' could not detach the store \(store): \(underlying)"
        case .unknownModel(let name, let registered):
            let list = registered.isEmpty ? "none" : registered.sorted().joined(separator: ", ")
            return "no model is registered under the name '\(name)' (registered: \(list)); register it with ModelRegistry.shared.register(_:named:)"
        case .modelNotFound(let name, let registered, let searched):
            let list = registered.isEmpty ? "none" : registered.sorted().joined(separator: ", ")
            let places = searched.isEmpty ? "no directory" : searched.map(\.path).joined(separator: ", ")
            return "no model named '\(name)': none is registered under that name (registered: \(list)), and no \(name).xcdatamodeld or \(name).xcdatamodel is in \(places); register it with ModelRegistry.shared or ship the model file beside the executable"
        case .modelUnreadable(let name, let source, let underlying):
            return "the model '\(name)' from \(source) could not be made: \(underlying)"
        case .unsupportedOption(let container, let url, let key, let reason):
            return "container '\(container)' cannot load the store at \(Self.place(url)): option \(key) is set, but \(reason)"
        case .backgroundSaveFailed(let container, let context, let underlying):
            return "container '\(container)': the background save of \(context) failed: \(underlying)"
        }
    }

    static func name(_ configuration: String?) -> String {
        configuration.map { "configuration '\($0)'" } ?? "the default configuration"
    }

    static func place(_ url: URL?) -> String { url?.path ?? "in memory" }
}
