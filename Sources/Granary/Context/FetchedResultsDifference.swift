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
///   (a longest such run; of several, the one with the fewest objects the event reported changed, and
///   of those, the one whose objects come first in the new order) stay, every other surviving object
///   moves. An object whose section changed always moves. A moved object that also changed is
///   reported as a move only.
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
    /// `0..<bound`), ascending: the one with the greatest total of `weights` (all positive), and of
    /// several, the one whose positions come first (lexicographically smallest).
    ///
    /// The tie rule is the one that survives merging: when elements adjacent in both position and value
    /// are merged into one weighted element (`forOneSection`), every heaviest run takes each merged group
    /// whole or not at all, and the first such run of the merged sequence expands to the first of the
    /// full one. A Fenwick tree over the reversed values gives, from the last element back, the heaviest
    /// run starting at each element; the run is then read forwards, taking each time the first element
    /// that still completes a heaviest run.
    static func heaviestIncreasingRun(_ values: [Int], weights: [Int], bound: Int) -> [Int] {
        var tree = [Int](repeating: 0, count: bound + 1)
        var heaviestFrom = [Int](repeating: 0, count: values.count)
        var best = 0
        for i in values.indices.reversed() {
            // Slot `bound - value` holds runs starting at `value`: a prefix of slots is the runs above it.
            var above = 0
            var k = bound - values[i] - 1
            while k > 0 {
                above = max(above, tree[k])
                k -= k & -k
            }
            let total = above + weights[i]
            heaviestFrom[i] = total
            best = max(best, total)
            k = bound - values[i]
            while k <= bound {
                tree[k] = max(tree[k], total)
                k += k & -k
            }
        }
        var run: [Int] = []
        var remaining = best
        var floor = Int.min
        var i = 0
        while remaining > 0 && i < values.count {
            if values[i] > floor && heaviestFrom[i] == remaining {
                run.append(i)
                remaining -= weights[i]
                floor = values[i]
            }
            i += 1
        }
        return run
    }
}

extension FetchedResultsDifference {
    /// An object of a one-section list that was taken out and put back by the sort: its old and new
    /// index, and whether the event reported it changed.
    struct Replaced {
        var old: Int
        var new: Int
        var isChanged: Bool
    }

    /// The difference `between(old:new:changed:)` gives for one section (named the same before and
    /// after) whose objects all kept their relative order except the few named: `deleted` (old indexes)
    /// left, `inserted` (new indexes) arrived, `replaced` were put in place again. No other object may be
    /// one the event reported changed. Work is proportional to the named objects, plus the objects that
    /// move; the per-object changes carry old indexes for deletions and new indexes otherwise as `id`.
    ///
    /// The unnamed objects fall into blocks that no named object splits, in the old order or in the new:
    /// each block moves or stays whole (see `heaviestIncreasingRun`), so the run is found on the blocks
    /// and the named objects alone, each block weighing as much as its objects together.
    static func forOneSection(oldCount: Int, deleted: [Int], inserted: [Int], replaced: [Replaced])
        -> (difference: FetchedResultsDifference, changes: [ObjectChange<Int>])
    {
        let fixedCount = oldCount - deleted.count - replaced.count
        // Old and new indexes of the named objects, ascending: the gaps between them are the fixed objects.
        let oldNamed = (deleted + replaced.map(\.old)).sorted()
        let newNamed = (inserted + replaced.map(\.new)).sorted()
        /// How many of `sorted` are below `index`.
        func count(below index: Int, in sorted: [Int]) -> Int {
            var low = 0
            var high = sorted.count
            while low < high {
                let mid = (low + high) / 2
                if sorted[mid] < index { low = mid + 1 } else { high = mid }
            }
            return low
        }
        // Fixed objects are numbered 0..<fixedCount in their (common) order; a replaced object sits after
        // `fixedBefore` of them in the old order, and after `fixedAfter` of them in the new.
        let fixedBefore = replaced.map { $0.old - count(below: $0.old, in: oldNamed) }
        let fixedAfter = replaced.map { $0.new - count(below: $0.new, in: newNamed) }
        let cuts = Array(Set(fixedBefore + fixedAfter + [0, fixedCount])).sorted()
        let blocks = zip(cuts, cuts.dropFirst()).map { $0..<$1 }.filter { !$0.isEmpty }

        // Elements: blocks first (0..<blocks.count), then the replaced objects. A replaced object with
        // `s` fixed objects before it comes before the block starting at `s`.
        let elementCount = blocks.count + replaced.count
        func key(_ e: Int, _ fixed: [Int], _ index: (Replaced) -> Int) -> (Int, Int, Int) {
            e < blocks.count ? (blocks[e].lowerBound, 1, 0) : (fixed[e - blocks.count], 0, index(replaced[e - blocks.count]))
        }
        let oldOrder = (0..<elementCount).sorted { key($0, fixedBefore, \.old) < key($1, fixedBefore, \.old) }
        let newOrder = (0..<elementCount).sorted { key($0, fixedAfter, \.new) < key($1, fixedAfter, \.new) }
        var oldRank = [Int](repeating: 0, count: elementCount)
        for (rank, e) in oldOrder.enumerated() { oldRank[e] = rank }
        // The weights `between` gives each candidate, summed over a block.
        let length = fixedCount + replaced.count + 1
        let weights = newOrder.map { e in
            e < blocks.count ? blocks[e].count * (length + 1) : (replaced[e - blocks.count].isChanged ? length : length + 1)
        }
        var staying = [Bool](repeating: false, count: elementCount)
        for i in heaviestIncreasingRun(newOrder.map { oldRank[$0] }, weights: weights, bound: elementCount) { staying[newOrder[i]] = true }

        var moves: [ObjectChange<Int>] = []
        var updates: [ObjectChange<Int>] = []
        for (r, object) in replaced.enumerated() {
            if !staying[blocks.count + r] {
                moves.append(ObjectChange(id: object.new, type: .move, old: IndexPath(item: object.old, section: 0),
                                          new: IndexPath(item: object.new, section: 0)))
            } else if object.isChanged {
                updates.append(ObjectChange(id: object.new, type: .update, old: IndexPath(item: object.old, section: 0),
                                            new: IndexPath(item: object.new, section: 0)))
            }
        }
        for (b, block) in blocks.enumerated() where !staying[b] {
            // The fixed object numbered j is the j-th index not named, in each order.
            var o = count(below: block.lowerBound, in: oldNamed)
            var n = count(below: block.lowerBound, in: newNamed)
            for j in block {
                while o < oldNamed.count && oldNamed[o] <= j + o { o += 1 }
                while n < newNamed.count && newNamed[n] <= j + n { n += 1 }
                moves.append(ObjectChange(id: j + n, type: .move, old: IndexPath(item: j + o, section: 0), new: IndexPath(item: j + n, section: 0)))
            }
        }
        moves.sort { $0.id < $1.id }
        updates.sort { $0.id < $1.id }
        let deletes = deleted.sorted().map { ObjectChange(id: $0, type: .delete, old: IndexPath(item: $0, section: 0), new: nil) }
        let inserts = inserted.sorted().map { ObjectChange(id: $0, type: .insert, old: nil, new: IndexPath(item: $0, section: 0)) }

        var difference = FetchedResultsDifference()
        difference.deleted = deletes.map { $0.old! }
        difference.inserted = inserts.map { $0.new! }
        difference.moved = moves.map { Move(from: $0.old!, to: $0.new!) }
        difference.updated = updates.map { $0.new! }
        return (difference, deletes + inserts + moves + updates)
    }
}
