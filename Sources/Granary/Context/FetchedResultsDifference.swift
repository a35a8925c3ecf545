import Foundation

/// What one change event did to a fetched-results controller's sections and objects, as index paths that
/// turn a copy of the old results into the new ones.
///
/// Use it to update a view or any copy of the results incrementally. To apply it (what a table view's
/// batch update does):
/// 1. remove the objects at `deleted` and at every move's `from` (old coordinates);
/// 2. remove the sections at `deletedSections` (old indexes; step 1 has emptied them);
/// 3. insert empty sections at `insertedSections` (new indexes, in ascending order);
/// 4. insert the new objects at `inserted` and the moved ones at their move's `to` (new coordinates,
///    in ascending order);
/// 5. redisplay the objects at `updated` (new coordinates): they changed but kept their place.
///
/// Semantics:
/// - Moves are as few as possible: the surviving objects that kept their order relative to each other
///   (a longest such run; of several, the one with the fewest objects the event reported changed) stay,
///   every other surviving object moves. An object whose section changed always moves. A moved object
///   that also changed is reported as a move only.
/// - An update is an object the event reported as changed (edited, refreshed, merged) that survived
///   and stayed; its index path may still differ, by the inserts and deletes before it.
/// - Sections are identified by name (a name that occurs twice, by name and occurrence). A surviving
///   section whose order relative to the other surviving sections changed is deleted and inserted, and
///   its objects move. Every object of a deleted section is deleted or moved; every object of an
///   inserted section is inserted or moved.
/// - Every array is in ascending order (moves by destination).
public struct FetchedResultsDifference: Sendable, Hashable {
    /// An object that moved, from its old index path to its new one.
    public struct Move: Sendable, Hashable {
        /// Where the object was, in the old results.
        public var from: IndexPath
        /// Where it is, in the new results.
        public var to: IndexPath
        /// A move, for building expected differences in tests.
        public init(from: IndexPath, to: IndexPath) {
            self.from = from
            self.to = to
        }
    }

    /// A section that appeared or disappeared: its index (old for deletions, new for insertions) and name.
    public struct SectionChange: Sendable, Hashable {
        /// The section's index: old for deletions, new for insertions.
        public var index: Int
        /// The section's name.
        public var name: String
        /// A section change, for building expected differences in tests.
        public init(index: Int, name: String) {
            self.index = index
            self.name = name
        }
    }

    /// Sections gone, at their old indexes.
    public var deletedSections: [SectionChange] = []
    /// Sections new, at their new indexes.
    public var insertedSections: [SectionChange] = []
    /// Objects gone, at their old index paths.
    public var deleted: [IndexPath] = []
    /// Objects new, at their new index paths.
    public var inserted: [IndexPath] = []
    /// Objects that changed place (relative order or section).
    public var moved: [Move] = []
    /// Objects that changed in place, at their new index paths.
    public var updated: [IndexPath] = []

    /// An empty difference; the controller reports only non-empty ones.
    public init() {}

    /// Whether nothing changed.
    public var isEmpty: Bool {
        deletedSections.isEmpty && insertedSections.isEmpty && deleted.isEmpty && inserted.isEmpty && moved.isEmpty && updated.isEmpty
    }
}

extension FetchedResultsDifference {
    /// One object's change, with the index paths the delegate receives.
    struct ObjectChange<ID: Hashable> {
        var id: ID
        var type: FetchedResultsChangeType
        var old: IndexPath?
        var new: IndexPath?
    }

    private struct SectionKey: Hashable {
        var name: String
        var occurrence: Int
    }

    private struct Position {
        var flat: Int
        var path: IndexPath
        var section: SectionKey
    }

    /// The difference between two sectioned lists of distinct IDs, with the per-object changes in the
    /// order the delegate hears them: deletes, inserts, moves, updates.
    static func between<ID: Hashable>(old: [(name: String, items: [ID])], new: [(name: String, items: [ID])],
                                      changed: Set<ID>) -> (difference: FetchedResultsDifference, changes: [ObjectChange<ID>]) {
        func keys(_ sections: [(name: String, items: [ID])]) -> [SectionKey] {
            var seen: [String: Int] = [:]
            return sections.map { section in
                defer { seen[section.name, default: 0] += 1 }
                return SectionKey(name: section.name, occurrence: seen[section.name, default: 0])
            }
        }
        let oldKeys = keys(old)
        let newKeys = keys(new)
        let oldSectionIndex = Dictionary(uniqueKeysWithValues: oldKeys.enumerated().map { ($1, $0) })
        let common = newKeys.compactMap { key in oldSectionIndex[key].map { (key: key, oldIndex: $0) } }
        let kept = Set(heaviestIncreasingRun(common.map(\.oldIndex), weights: common.map { _ in 1 }, bound: oldKeys.count)
            .map { common[$0].key })

        var difference = FetchedResultsDifference()
        difference.deletedSections = oldKeys.enumerated().filter { !kept.contains($1) }.map { SectionChange(index: $0, name: $1.name) }
        difference.insertedSections = newKeys.enumerated().filter { !kept.contains($1) }.map { SectionChange(index: $0, name: $1.name) }

        func positions(_ sections: [(name: String, items: [ID])], _ keys: [SectionKey]) -> (order: [ID], positions: [ID: Position]) {
            var order: [ID] = []
            var positions: [ID: Position] = [:]
            for (s, section) in sections.enumerated() {
                for (i, id) in section.items.enumerated() {
                    positions[id] = Position(flat: order.count, path: IndexPath(item: i, section: s), section: keys[s])
                    order.append(id)
                }
            }
            return (order, positions)
        }
        let (oldOrder, oldPositions) = positions(old, oldKeys)
        let (newOrder, newPositions) = positions(new, newKeys)

        // Objects that may stay: present before and after, in the same surviving section. Of those, a
        // longest run in old order stays and the rest move; among the longest runs, the one with the most
        // unchanged objects, so that what was edited is what moves.
        var candidates: [ID] = []
        var candidateOldPositions: [Int] = []
        for id in newOrder {
            guard let o = oldPositions[id], let n = newPositions[id], o.section == n.section, kept.contains(n.section) else { continue }
            candidates.append(id)
            candidateOldPositions.append(o.flat)
        }
        let length = candidates.count + 1
        let weights = candidates.map { changed.contains($0) ? length : length + 1 }
        let staying = Set(heaviestIncreasingRun(candidateOldPositions, weights: weights, bound: oldOrder.count).map { candidates[$0] })

        var deletes: [ObjectChange<ID>] = []
        var inserts: [ObjectChange<ID>] = []
        var moves: [ObjectChange<ID>] = []
        var updates: [ObjectChange<ID>] = []
        for id in oldOrder where newPositions[id] == nil {
            deletes.append(ObjectChange(id: id, type: .delete, old: oldPositions[id]!.path, new: nil))
        }
        for id in newOrder {
            let n = newPositions[id]!.path
            guard let o = oldPositions[id]?.path else {
                inserts.append(ObjectChange(id: id, type: .insert, old: nil, new: n))
                continue
            }
            if !staying.contains(id) {
                moves.append(ObjectChange(id: id, type: .move, old: o, new: n))
            } else if changed.contains(id) {
                updates.append(ObjectChange(id: id, type: .update, old: o, new: n))
            }
        }
        difference.deleted = deletes.map { $0.old! }
        difference.inserted = inserts.map { $0.new! }
        difference.moved = moves.map { Move(from: $0.old!, to: $0.new!) }
        difference.updated = updates.map { $0.new! }
        return (difference, deletes + inserts + moves + updates)
    }

    /// The positions of a heaviest strictly increasing subsequence of `values` (distinct integers in
    /// `0..<bound`), ascending: the one with the greatest total of `weights`. A Fenwick tree over the values
    /// keeps, for each prefix of values, the heaviest run ending below it.
    static func heaviestIncreasingRun(_ values: [Int], weights: [Int], bound: Int) -> [Int] {
        var tree = [(weight: Int, position: Int)](repeating: (0, -1), count: bound + 1)
        var previous = [Int](repeating: -1, count: values.count)
        var best = (weight: 0, position: -1)
        for (i, value) in values.enumerated() {
            var below = (weight: 0, position: -1)
            var k = value
            while k > 0 {
                if tree[k].weight > below.weight { below = tree[k] }
                k -= k & -k
            }
            let total = below.weight + weights[i]
            previous[i] = below.position
            k = value + 1
            while k <= bound {
                if total > tree[k].weight { tree[k] = (total, i) }
                k += k & -k
            }
            if total > best.weight { best = (total, i) }
        }
        var run: [Int] = []
        var k = best.position
        while k >= 0 {
            run.append(k)
            k = previous[k]
        }
        return run.reversed()
    }
}
