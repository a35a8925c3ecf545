import Foundation

extension Notification.Name {
    /// Posted on `NotificationCenter.default` when an action starts executing; the object is the
    /// connect, `userInfo[ActionNotificationKey.actionProxy]` the ``ActionProxy``.
    public static let actionDidStartExecuting = Notification.Name("GranaryConnect.ActionDidStartExecuting")
    /// Posted when an action finished (also one cancelled while pending), as the start notification.
    public static let actionDidFinishExecuting = Notification.Name("GranaryConnect.ActionDidFinishExecuting")
}

/// The keys of the action notifications' `userInfo`.
public enum ActionNotificationKey {
    /// The ``ActionProxy`` of the action (Coherence's `Notification.Key.ActionProxy`).
    public static let actionProxy = "ActionProxy"
}

/// Posts the action notifications from a serial queue of its own, so that a slow observer never holds
/// up an action or its lane; a finish notification may therefore arrive after the completion ran.
final class ActionNotifier: Sendable {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label, qos: .utility)
    }

    func post(_ name: Notification.Name, proxy: ActionProxy, connect: any Connect) {
        queue.async { [weak connect] in
            NotificationCenter.default.post(name: name, object: connect, userInfo: [ActionNotificationKey.actionProxy: proxy])
        }
    }
}
