extension ByteTree {
    /// Sorts keys into the order a `Builder` needs, comparing eight bytes at a time: the generic
    /// lexicographic comparison is several times slower, and index builds sort millions of keys.
    static func sortKeys(_ keys: inout [[UInt8]]) {
        keys.sort { a, b in a.withUnsafeBytes { x in b.withUnsafeBytes { y in Entry.compare(x, y) < 0 } } }
    }

    /// Builds a tree from entries in strictly increasing key order in O(n), bottom up.
    ///
    /// Use it when loading a snapshot: leaves are filled to `fillFactor` of the budget with exactly sized
    /// arenas, so a loaded tree takes less memory than one built by inserts and still has room for a few
    /// inserts per leaf before splitting.
    ///
    /// Not copyable: it owns the leaf being filled, which two copies would both write.
    struct Builder: ~Copyable {
        private let layout: Layout
        private let leafTarget: Int
        private let childTarget: Int
        private var leaves: [Leaf] = []
        /// `separators[i]` lies between `leaves[i]` and `leaves[i + 1]`.
        private var separators: [[UInt8]] = []
        /// The leaf being filled, with a full budget of arena capacity that is reused for every leaf.
        private var current = Leaf()
        private var lastKey: [UInt8] = []
        private var count = 0

        /// - Parameter fillFactor: how full to make each node, in `0.5...1`.
        init(leafBytes: Int = 8192, fanout: Int = 96, fillFactor: Double = 0.9) {
            precondition((0.5...1).contains(fillFactor), "ByteTree.Builder fillFactor must be in 0.5...1")
            layout = Layout(leafBytes: leafBytes, fanout: fanout)
            leafTarget = Int(Double(leafBytes) * fillFactor)
            childTarget = max(layout.minChildren, min(fanout, Int(Double(fanout) * fillFactor)))
            current.arena.reserveCapacity(leafBytes)
        }

        /// Appends an entry whose key is greater than every key appended so far.
        ///
        /// - Throws: `StorageError.invalidArgument` if the key is not greater than the previous one.
        mutating func append(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws {
            if count > 0 && Entry.compare(lastKey, key) >= 0 {
                throw StorageError.invalidArgument(
                    "ByteTree.Builder needs strictly increasing keys, but key \(ByteTree.hex(key)) came after \(ByteTree.hex(lastKey))")
            }
            precondition(key.count < Int(Int32.max) && value.count < Int(Int32.max), "ByteTree entries must be smaller than 2 GiB")
            let size = Entry.size(keyCount: key.count, valueCount: value.count)
            let (weight, isLarge) = layout.weight(ofEntrySize: size)
            if current.count > 0 && current.weight + weight > leafTarget {
                closeCurrentLeaf()
                lastKey.withUnsafeBytes { separators.append(Entry.shortestSeparator($0, key)) }
            }
            current.insertEntry(key: key, value: value, size: size, isLarge: isLarge, at: current.count, layout: layout)
            lastKey.removeAll(keepingCapacity: true)
            lastKey.append(contentsOf: key)
            count += 1
        }

        mutating func append(key: [UInt8], value: [UInt8]) throws {
            try key.withUnsafeBytes { k in try value.withUnsafeBytes { v in try append(key: k, value: v) } }
        }

        private mutating func closeCurrentLeaf() {
            leaves.append(Leaf.assemble([(current, 0..<current.count)], arenaCapacity: current.liveArenaBytes, extraSlots: 0))
            current.arena.removeAll(keepingCapacity: true)
            current.slots.removeAll(keepingCapacity: true)
            current.large.removeAll()
        }

        /// The finished tree.
        consuming func finish() -> ByteTree {
            if current.count > 0 { closeCurrentLeaf() }
            guard !leaves.isEmpty else { return ByteTree(layout: layout) }
            // Only the last leaf can be underfull: fold it into or even it out with its neighbour.
            let n = leaves.count
            if n >= 2 && leaves[n - 1].weight < layout.minLeafWeight {
                let (a, b) = (leaves[n - 2], leaves[n - 1])
                if a.weight + b.weight <= layout.leafBytes {
                    leaves[n - 2] = Leaf.assemble(
                        [(a, 0..<a.count), (b, 0..<b.count)], arenaCapacity: a.liveArenaBytes + b.liveArenaBytes, extraSlots: 0)
                    leaves.removeLast()
                    separators.removeLast()
                } else {
                    let (newA, newB, separator) = Leaf.redistributed(a, b, layout: layout, exact: true)
                    leaves[n - 2] = newA
                    leaves[n - 1] = newB
                    separators[n - 2] = separator
                }
            }
            var level: [Node] = leaves
            var levelSeparators = separators
            var height = 0
            while level.count > 1 {
                (level, levelSeparators) = buildParents(of: level, separators: levelSeparators)
                height += 1
            }
            return ByteTree(layout: layout, root: level[0], height: height, count: count)
        }

        /// Groups one level's nodes under new inner nodes, as evenly as possible: as many groups as the
        /// fill target asks for, but enough that none exceeds the fanout. Both bounds keep every group at
        /// or above `minChildren` (see the tests for small fanouts).
        private func buildParents(of nodes: [Node], separators: [[UInt8]]) -> ([Node], [[UInt8]]) {
            let n = nodes.count
            let groups = max(1, (n + layout.fanout - 1) / layout.fanout, n / childTarget)
            let base = n / groups
            let extra = n % groups
            var parents: [Node] = []
            var parentSeparators: [[UInt8]] = []
            parents.reserveCapacity(groups)
            parentSeparators.reserveCapacity(groups - 1)
            var start = 0
            for g in 0..<groups {
                let size = base + (g < extra ? 1 : 0)
                let end = start + size
                parents.append(Inner(separators: Array(separators[start..<(end - 1)]), children: Array(nodes[start..<end])))
                if end < n { parentSeparators.append(separators[end - 1]) }
                start = end
            }
            return (parents, parentSeparators)
        }
    }
}
