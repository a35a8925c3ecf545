/// Where an action is in its life: `created → pending → executing → finished`. An action cancelled
/// while pending goes straight to `finished`.
public enum ActionState: Int, Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Made by `execute`, not yet queued.
    case created
    /// Queued, waiting for its lane (or for the connect to be resumed).
    case pending
    /// Running.
    case executing
    /// Done: see ``ActionProxy/completionStatus``.
    case finished

    public static func < (lhs: ActionState, rhs: ActionState) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String {
        switch self {
        case .created: "created"
        case .pending: "pending"
        case .executing: "executing"
        case .finished: "finished"
        }
    }
}

/// How a finished action ended.
public enum ActionCompletionStatus: Sendable, Hashable, CustomStringConvertible {
    /// Not finished yet.
    case unknown
    /// `execute` returned.
    case successful
    /// `cancel()` was called before it finished; whatever `execute` did after, it counts as cancelled
    /// (an error it threw is kept in ``ActionProxy/error``).
    case canceled
    /// `execute` threw (see ``ActionProxy/error``).
    case failed

    public var description: String {
        switch self {
        case .unknown: "unknown"
        case .successful: "successful"
        case .canceled: "canceled"
        case .failed: "failed"
        }
    }
}
