extension ByteTree {
    /// An inner node: `children.count - 1` separator keys, where child `i` holds the keys `k` with
    /// `separators[i - 1] <= k < separators[i]`.
    ///
    /// A separator need not be a stored key (leaf splits choose the shortest key between the two sides),
    /// and it stays valid when the keys around it are removed.
    ///
    /// Like `Leaf`, its arrays opt out of dynamic exclusivity checking, which would otherwise dominate
    /// the cost of a descent.
    final class Inner: Node {
        @exclusivity(unchecked) var separators: [[UInt8]] {
            didSet { prefixes = separators.map(Self.prefix) }
        }
        /// The first 8 bytes of each separator (`Entry.prefix`), side by side so that a search reads a few
        /// cache lines instead of one allocation per separator; only ties read the separators themselves.
        /// Rebuilt whenever `separators` changes, which happens only on splits and merges.
        @exclusivity(unchecked) private(set) var prefixes: [UInt64]
        @exclusivity(unchecked) var children: [Node]

        init(separators: [[UInt8]], children: [Node]) {
            self.separators = separators
            self.prefixes = separators.map(Self.prefix)
            self.children = children
        }

        private static func prefix(_ separator: [UInt8]) -> UInt64 {
            separator.withUnsafeBytes { Entry.prefix(of: $0, length: 8) }
        }

        /// The child whose range holds `key`: the number of separators not greater than it.
        @inline(__always)
        func childIndex(for key: UnsafeRawBufferPointer) -> Int {
            childIndex(for: key, prefix: Entry.prefix(of: key, length: 8))
        }

        /// `childIndex(for:)` given the key's 8-byte prefix, which a descent computes once for all levels.
        @inline(__always)
        func childIndex(for key: UnsafeRawBufferPointer, prefix keyPrefix: UInt64) -> Int {
            prefixes.withUnsafeBufferPointer { prefixes in
                var low = 0
                var high = prefixes.count
                while low < high {
                    let mid = (low &+ high) >> 1
                    let p = prefixes[mid]
                    let isNotAbove = p != keyPrefix ? p < keyPrefix : separators[mid].withUnsafeBytes { Entry.compare($0, key) } <= 0
                    if isNotAbove {
                        low = mid &+ 1
                    } else {
                        high = mid
                    }
                }
                return low
            }
        }

        func leaf(_ i: Int) -> Leaf { unsafeDowncast(children[i], to: Leaf.self) }
        func inner(_ i: Int) -> Inner { unsafeDowncast(children[i], to: Inner.self) }

        /// Path copying: replaces child `i` by a private copy unless this node is its only owner.
        private func makeChildUnique(_ i: Int, childLevel: Int, layout: Layout) {
            if !isKnownUniquelyReferenced(&children[i]) {
                children[i] = ByteTree.copy(children[i], level: childLevel, layout: layout)
            }
        }

        // MARK: Insertion

        /// Upserts into the subtree under this node, which sits at `level` (>= 1) and is uniquely owned.
        func insert(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, level: Int, layout: Layout) -> (isNew: Bool, split: Split?) {
            let i = childIndex(for: key)
            makeChildUnique(i, childLevel: level - 1, layout: layout)
            let (isNew, childSplit) =
                level == 1
                ? leaf(i).upsert(key: key, value: value, layout: layout)
                : inner(i).insert(key: key, value: value, level: level - 1, layout: layout)
            guard let childSplit else {
                // Replacing a value with a shorter one can leave the leaf, and after merges below, the
                // child, underfull.
                if !isNew { rebalanceChild(i, level: level, layout: layout) }
                return (isNew, nil)
            }
            separators.insert(childSplit.separator, at: i)
            children.insert(childSplit.node, at: i + 1)
            return (isNew, children.count > layout.fanout ? splitInHalf() : nil)
        }

        /// Moves the upper half of the children to a new sibling; the middle separator goes up.
        private func splitInHalf() -> Split {
            let mid = children.count / 2
            let right = Inner(separators: Array(separators[mid...]), children: Array(children[mid...]))
            let promoted = separators[mid - 1]
            separators.removeSubrange((mid - 1)...)
            children.removeSubrange(mid...)
            return Split(separator: promoted, node: right)
        }

        // MARK: Removal

        /// Removes `key` from the subtree under this node (at `level` >= 1, uniquely owned), then repairs
        /// the child it came from if that child became underfull.
        func remove(key: UnsafeRawBufferPointer, level: Int, layout: Layout) -> Bool {
            let i = childIndex(for: key)
            makeChildUnique(i, childLevel: level - 1, layout: layout)
            let removed =
                level == 1
                ? leaf(i).remove(key: key, layout: layout)
                : inner(i).remove(key: key, level: level - 1, layout: layout)
            if removed { rebalanceChild(i, level: level, layout: layout) }
            return removed
        }

        /// If child `i` is underfull, merges it with a sibling when the two fit in one node, else evens
        /// out the two. The siblings may be shared with snapshots, so the results are always new nodes.
        private func rebalanceChild(_ i: Int, level: Int, layout: Layout) {
            guard children.count > 1 else { return }
            if level == 1 {
                let weight = leaf(i).weight
                guard weight < layout.minLeafWeight else { return }
                if i > 0 && leaf(i - 1).weight + weight <= layout.leafBytes {
                    mergeLeaves(at: i - 1, layout: layout)
                } else if i + 1 < children.count && weight + leaf(i + 1).weight <= layout.leafBytes {
                    mergeLeaves(at: i, layout: layout)
                } else {
                    let j = i > 0 ? i - 1 : i
                    let (a, b, separator) = Leaf.redistributed(leaf(j), leaf(j + 1), layout: layout)
                    children[j] = a
                    children[j + 1] = b
                    separators[j] = separator
                }
            } else {
                let n = inner(i).children.count
                guard n < layout.minChildren else { return }
                if i > 0 && inner(i - 1).children.count + n <= layout.fanout {
                    mergeInners(at: i - 1)
                } else if i + 1 < children.count && n + inner(i + 1).children.count <= layout.fanout {
                    mergeInners(at: i)
                } else {
                    redistributeInners(at: i > 0 ? i - 1 : i)
                }
            }
        }

        private func mergeLeaves(at j: Int, layout: Layout) {
            children[j] = Leaf.merged(leaf(j), leaf(j + 1), layout: layout)
            children.remove(at: j + 1)
            separators.remove(at: j)
        }

        private func mergeInners(at j: Int) {
            let a = inner(j)
            let b = inner(j + 1)
            children[j] = Inner(separators: a.separators + [separators[j]] + b.separators, children: a.children + b.children)
            children.remove(at: j + 1)
            separators.remove(at: j)
        }

        /// Splits the children of `j` and `j + 1` evenly, rotating separators through this node.
        private func redistributeInners(at j: Int) {
            let a = inner(j)
            let b = inner(j + 1)
            let allChildren = a.children + b.children
            let allSeparators = a.separators + [separators[j]] + b.separators
            let half = allChildren.count / 2
            children[j] = Inner(separators: Array(allSeparators[..<(half - 1)]), children: Array(allChildren[..<half]))
            children[j + 1] = Inner(separators: Array(allSeparators[half...]), children: Array(allChildren[half...]))
            separators[j] = allSeparators[half - 1]
        }
    }
}
