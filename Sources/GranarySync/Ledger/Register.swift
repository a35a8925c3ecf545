/// A property's concurrent writes: a multi-value register read by position (M14, M16).
///
/// A write that happens before a newer one is dropped when the newer one arrives: anything eligible
/// through the older write's past is eligible through the newer one's too, and the newer one has the
/// higher position, so the older can never win again. Concurrent writes stay side by side, because which
/// of them counts depends on which incarnations are alive (M10), and that can change later.
struct Register<Value: Hashable & Sendable & Codable>: Hashable, Sendable, Codable {
    struct Write: Hashable, Sendable, Codable {
        var value: Value
        var op: EventMeta
    }

    private(set) var candidates: [Write] = []

    init() {}

    /// A register holding `candidates` as they are, already in position order (read back from storage).
    init(candidates: [Write]) { self.candidates = candidates }

    mutating func record(_ value: Value, by op: EventMeta) {
        guard !candidates.contains(where: { $0.op.id == op.id }) else { return }
        candidates.removeAll { $0.op.happensBefore(op) }
        // Kept by position, so that one set of events gives an equal register in any arrival order.
        let index = candidates.firstIndex { op.position < $0.op.position } ?? candidates.endIndex
        candidates.insert(Write(value: value, op: op), at: index)
    }
}
