import Foundation

/// One event as the merge reads it: its identity, order and causal past, and its object changes.
struct Event: Hashable, Sendable, Codable {
    var meta: EventMeta
    /// When the event was made, for diagnostics only: no merge rule reads it (M4).
    var timestamp: Date
    var changes: [ObjectChange]

    init(meta: EventMeta, timestamp: Date = Date(timeIntervalSinceReferenceDate: 0), changes: [ObjectChange]) {
        self.meta = meta
        self.timestamp = timestamp
        self.changes = changes
    }

    var id: EventID { meta.id }
}
