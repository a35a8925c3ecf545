import Foundation
import Granary

/// Watches contexts' will-save and did-save notifications for as long as it lives.
///
/// Strategies use it to react to saves of contexts they did not create (background contexts handed
/// out to users): a child's save must reach the store through its root, a coordinator-level save must
/// reach a child view context. Handlers run synchronously on the saving context's queue, so they must
/// only schedule work on other contexts (`schedule`), never wait for them.
public final class ContextObserver: @unchecked Sendable {
    // @unchecked: the token (not Sendable) is set once, in init, and only read in deinit.
    private let token: NSObjectProtocol

    /// Which saves a handler receives.
    public enum Event: Sendable {
        /// Before a context writes (after validation): the context may still be changed.
        case willSave
        /// After a context wrote into its parent or the store, with what it saved.
        case didSave
    }

    /// - Parameters:
    ///   - event: Before or after the save.
    ///   - filter: Which saving contexts matter; called first, on the saving context's queue.
    ///   - handler: The saving context and, for `.didSave`, the saved changes.
    public init(_ event: Event, where filter: @escaping @Sendable (ManagedObjectContext) -> Bool,
                handler: @escaping @Sendable (ManagedObjectContext, ContextChanges) -> Void) {
        let name: Notification.Name = event == .willSave ? .managedObjectContextWillSave : .managedObjectContextDidSave
        token = NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { note in
            guard let context = note.object as? ManagedObjectContext, filter(context) else { return }
            let changes = note.userInfo?[ContextChanges.userInfoKey] as? ContextChanges ?? ContextChanges()
            handler(context, changes)
        }
    }

    deinit {
        NotificationCenter.default.removeObserver(token)
    }
}
