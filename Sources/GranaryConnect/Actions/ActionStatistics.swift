import Foundation

/// When an action ran and how long, and for entity actions what its context did.
public struct ActionStatistics: Sendable, Hashable {
    /// When `execute` made the proxy.
    public var createdTime: Date
    /// When the action started executing (nil until then, and for one cancelled while pending).
    public var startTime: Date?
    /// When it finished (before its completion ran).
    public var finishTime: Date?
    /// For entity actions, what its context did; nil for generic actions.
    public var contextStatistics: ContextStatistics?

    /// `finishTime − startTime`, or 0 before both are known: the action's own work, without the wait in
    /// its lane and without the completion block.
    public var executionTime: TimeInterval {
        guard let startTime, let finishTime else { return 0 }
        return finishTime.timeIntervalSince(startTime)
    }
}

/// Running totals of an ``ActionContext``: what its saves wrote and what its fetches read.
public struct ContextStatistics: Sendable, Hashable {
    /// Objects inserted, updated and deleted by the context's saves (also saves made through
    /// `managedObjectContext` directly, say by the records module's `parse`).
    public var inserts = 0
    public var updates = 0
    public var deletes = 0
    /// Objects returned by the context's fetches (through ``ActionContext``), and their number.
    public var fetches = 0
    public var fetchRequests = 0
    /// Time inside ``ActionContext``'s fetches and saves.
    public var fetchTime: TimeInterval = 0
    public var saveTime: TimeInterval = 0
    /// Time inside the context's outermost `perform`/`performAndWait` blocks (the whole `execute` of a
    /// synchronous entity action), reentrant calls counted once.
    public var contextBlockTime: TimeInterval = 0

    /// `contextBlockTime` less fetch and save time: the action's own work on the context's queue.
    public var otherTime: TimeInterval { max(0, contextBlockTime - fetchTime - saveTime) }

    public init() {}
}
