/// For each store, the highest revision of its events that are known: the vector clock that decides
/// which events happen before which (M5).
///
/// Absent stores count as revision 0 and zero entries are never kept, so two vectors that cover the same
/// events are equal as values.
struct RevisionVector: Hashable, Sendable, Codable, CustomStringConvertible {
    private(set) var revisions: [StoreID: Int64]

    /// The empty vector: no event of any store.
    init() { revisions = [:] }

    /// A vector of the given revisions; entries of 0 or less are dropped.
    init(_ revisions: [StoreID: Int64]) {
        self.revisions = revisions.filter { $0.value > 0 }
    }

    /// The revision known of `store`, 0 when none.
    subscript(store: StoreID) -> Int64 {
        get { revisions[store] ?? 0 }
        set { revisions[store] = newValue > 0 ? newValue : nil }
    }

    /// Whether every event this vector covers is covered by `other` too.
    func isCovered(by other: RevisionVector) -> Bool {
        revisions.allSatisfy { other[$0.key] >= $0.value }
    }

    /// Whether `other` covers everything this vector does and more: the strict causal order.
    func happensBefore(_ other: RevisionVector) -> Bool {
        self != other && isCovered(by: other)
    }

    /// Whether neither vector covers the other: the events they stand for happened without knowledge of
    /// each other.
    func isConcurrent(with other: RevisionVector) -> Bool {
        !isCovered(by: other) && !other.isCovered(by: self)
    }

    /// The least vector covering both: what a device knows after integrating both sides.
    func joined(with other: RevisionVector) -> RevisionVector {
        var result = self
        for (store, revision) in other.revisions where revision > result[store] { result[store] = revision }
        return result
    }

    /// The greatest vector covered by both: what every one of two devices is known to have.
    func met(with other: RevisionVector) -> RevisionVector {
        var result: [StoreID: Int64] = [:]
        for (store, revision) in revisions { result[store] = min(revision, other[store]) }
        return RevisionVector(result)
    }

    var description: String {
        "[" + revisions.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "]"
    }

    // Encoded as a JSON object from store ID to revision; sorted keys make the bytes deterministic.
    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let raw = try container.decode([String: Int64].self)
        var revisions: [StoreID: Int64] = [:]
        for (key, revision) in raw {
            guard let store = StoreID(canonical: key) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(key.prefix(64))' in a revision vector is not a store ID")
            }
            guard revision > 0 else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "revision \(revision) of \(key) in a revision vector is not positive")
            }
            revisions[store] = revision
        }
        self.revisions = revisions
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(Dictionary(uniqueKeysWithValues: revisions.map { ($0.key.description, $0.value) }))
    }
}
