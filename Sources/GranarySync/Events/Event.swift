import Foundation

/// One event as the merge reads it: its identity, order and causal past, and its object changes.
struct Event: Hashable, Sendable, Codable {
    var meta: EventMeta
    /// When the event was made, for diagnostics only: no merge rule reads it (M4).
    var timestamp: Date
    var changes: [ObjectChange]
    /// The `versionHash` of the model the event was made with; a device that knows no model of this hash
    /// leaves the event waiting (§10.1). Nil (absent from the JSON) for events made without one, which
    /// every device reads.
    var modelHash: String?

    init(meta: EventMeta, timestamp: Date = Date(timeIntervalSinceReferenceDate: 0), changes: [ObjectChange],
         modelHash: String? = nil) {
        self.meta = meta
        self.timestamp = timestamp
        self.changes = changes
        self.modelHash = modelHash
    }

    var id: EventID { meta.id }
}
