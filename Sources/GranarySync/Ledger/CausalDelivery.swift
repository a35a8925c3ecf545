/// Which events may integrate: those whose vector and earlier revisions are all integrated (M5).
///
/// Deciding "happens before" from vectors is only the same on every device when each device integrates
/// causally complete sets; an event arriving early therefore waits here instead of failing the merge.
struct CausalDelivery: Hashable, Sendable {
    /// For each store, the highest revision integrated; with no gaps, so it names exactly what is in.
    private(set) var integrated = RevisionVector()
    private(set) var waiting: [EventID: Event] = [:]
    /// The largest global count received, integrated or not (M2).
    private(set) var highestGlobalCount: Int64 = 0

    /// Whether `id` has been integrated.
    func hasIntegrated(_ id: EventID) -> Bool { integrated[id.store] >= id.revision }

    /// Whether every event `meta` depends on has been integrated.
    func isReady(_ meta: EventMeta) -> Bool {
        integrated[meta.id.store] == meta.id.revision - 1 && meta.vector.isCovered(by: integrated)
    }

    /// Takes in a baseline covering `vector` whose events' largest count is `globalCount` (M32): its
    /// events count as integrated, waiting events it covers are dropped, and the waiting events this makes
    /// ready are returned in the order to integrate them.
    mutating func cover(_ vector: RevisionVector, globalCount: Int64) -> [Event] {
        highestGlobalCount = max(highestGlobalCount, globalCount)
        integrated = integrated.joined(with: vector)
        waiting = waiting.filter { !hasIntegrated($0.key) }
        return drainReady()
    }

    /// Takes `event` in and returns the events now ready, in the order to integrate them, marking them
    /// integrated.
    mutating func accept(_ event: Event) -> [Event] {
        highestGlobalCount = max(highestGlobalCount, event.meta.globalCount)
        guard !hasIntegrated(event.id), waiting[event.id] == nil else { return [] }
        waiting[event.id] = event
        // Nothing else can have become ready: readiness changes only when something integrates.
        guard isReady(event.meta) else { return [] }
        return drainReady()
    }

    private mutating func drainReady() -> [Event] {
        var ready: [Event] = []
        // Lowest position first, so the result does not depend on dictionary order.
        while let next = waiting.values.filter({ isReady($0.meta) }).min(by: { $0.meta.position < $1.meta.position }) {
            waiting[next.id] = nil
            integrated[next.id.store] = next.id.revision
            ready.append(next)
        }
        return ready
    }
}
