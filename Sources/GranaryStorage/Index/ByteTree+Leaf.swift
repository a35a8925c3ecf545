extension ByteTree {
    /// A node of either kind. The tree's height says which kind a node is (leaves at level 0), so the code
    /// casts with `unsafeDowncast` instead of testing types at run time.
    class Node {
        init() {}
    }

    /// A leaf: entries in one byte arena, ordered through a sorted array of slots pointing into it.
    ///
    /// Inserting appends the entry to the arena and inserts its slot; an update appends and repoints
    /// (or overwrites in place when the size is unchanged); a removal drops the slot and counts the bytes
    /// as dead. The arena is compacted when dead bytes pass half of it, or when an append would otherwise
    /// push it past the budget. Capacity grows in `arenaSlack` steps, never by doubling.
    ///
    /// The stored arrays opt out of dynamic exclusivity checking: a leaf is read through `withView`
    /// scopes on every lookup, and the runtime's access tracking cost more than the search itself (a
    /// lookup took 3x as long). No code writes a leaf while a view of that same leaf is open: views are
    /// closed before the leaf's own arrays change, and `assemble` reads one leaf while filling another.
    final class Leaf: Node {
        /// Entries back to back, in the order they were written; dead ones stay until compaction.
        @exclusivity(unchecked) var arena: [UInt8] = []
        /// One per live entry, in key order. The low 32 bits are the entry's arena offset, or with
        /// `Layout.largeFlag` set its index in `large`. The high 32 bits are its *head*: the four key bytes
        /// after `prefixLength` (see `Entry.head`), which lets a search skip most arena reads.
        @exclusivity(unchecked) var slots: [UInt64] = [] {
            didSet { refreshHint() }
        }
        /// Entries too heavy for the arena.
        @exclusivity(unchecked) var large: [LargeEntry] = []
        /// Arena bytes no live slot points to.
        var deadBytes = 0
        /// Every key in the leaf starts with the first `prefixLength` (at most 8) bytes of `prefix`
        /// (big-endian, zero-padded). May be shorter than the longest shared prefix, never longer.
        var prefixLength = 0
        var prefix: UInt64 = 0
        /// A copy of the slot count and of the first and last heads (`first << 32 | last`), kept in the
        /// node itself so that a search can compute its interpolation probe as soon as the node is loaded,
        /// without first waiting for the slot array's header and ends to arrive from memory.
        private(set) var hintCount = 0
        private(set) var hintHeads: UInt64 = 0

        override init() { super.init() }

        private func refreshHint() {
            hintCount = slots.count
            hintHeads = slots.isEmpty ? 0 : (slots[0] >> 32) << 32 | slots[slots.count - 1] >> 32
        }

        var count: Int { slots.count }
        var liveArenaBytes: Int { arena.count - deadBytes }
        /// What the budget limits: live entry bytes plus a fixed cost per entry.
        var weight: Int {
            liveArenaBytes + slots.count * Layout.slotWeight + large.count * (Layout.largeEntryWeight - Layout.slotWeight)
        }

        // MARK: Building

        /// A new leaf holding, in order, the entries of each part, with arena room for `arenaCapacity` bytes
        /// and room for `extraSlots` more slots. Parts must be given in key order.
        static func assemble(_ parts: [(leaf: Leaf, range: Range<Int>)], arenaCapacity: Int, extraSlots: Int) -> Leaf {
            let result = Leaf()
            let parts = parts.filter { !$0.range.isEmpty }
            result.arena.reserveCapacity(arenaCapacity)
            result.slots.reserveCapacity(parts.reduce(extraSlots) { $0 + $1.range.count })
            if let first = parts.first, let last = parts.last {
                // Keys are in order, so the prefix all of them share is the one the first and last share.
                let (a, aCount) = first.leaf.withView { v in
                    let key = v.key(first.range.lowerBound)
                    return (Entry.prefix(of: key, length: 8), key.count)
                }
                let (b, bCount) = last.leaf.withView { v in
                    let key = v.key(last.range.upperBound - 1)
                    return (Entry.prefix(of: key, length: 8), key.count)
                }
                let differing = a ^ b
                result.prefixLength = min(aCount, bCount, differing == 0 ? 8 : differing.leadingZeroBitCount / 8)
                result.prefix = a & (result.prefixLength == 0 ? 0 : ~0 << (64 - 8 * result.prefixLength))
            }
            for (leaf, range) in parts {
                leaf.withView { view in
                    for slot in range {
                        let location: UInt32
                        if view.isLarge(slot) {
                            result.large.append(view.large[view.largeIndex(slot)])
                            location = Layout.largeFlag | UInt32(result.large.count - 1)
                        } else {
                            location = UInt32(result.arena.count)
                            result.arena.append(contentsOf: UnsafeRawBufferPointer(start: view.entry(slot), count: view.size(slot)))
                        }
                        let head = Entry.head(of: view.key(slot), after: result.prefixLength)
                        result.slots.append(UInt64(head) << 32 | UInt64(location))
                    }
                }
            }
            return result
        }

        /// Takes over `other`'s storage (used to rebuild this leaf in place, keeping its identity).
        func adopt(_ other: Leaf) {
            arena = other.arena
            slots = other.slots
            large = other.large
            deadBytes = other.deadBytes
            prefixLength = other.prefixLength
            prefix = other.prefix
        }

        func copy(layout: Layout) -> Leaf {
            Self.assemble([(self, 0..<count)], arenaCapacity: layout.roomyCapacity(liveArenaBytes), extraSlots: max(4, count / 8))
        }

        /// Rewrites the arena without dead bytes.
        func compact(arenaCapacity: Int) {
            if count == 0 {
                adopt(Leaf())
                return
            }
            adopt(Self.assemble([(self, 0..<count)], arenaCapacity: arenaCapacity, extraSlots: slots.capacity - count))
        }

        /// The slot at which `weights` (of consecutive entries) splits most evenly: the left part gets
        /// `weights[..<m]`, with `1 <= m < weights.count`.
        static func balancedSplit(_ weights: [Int]) -> Int {
            let total = weights.reduce(0, +)
            var best = 1
            var bestImbalance = Int.max
            var prefix = 0
            for m in 1..<weights.count {
                prefix += weights[m - 1]
                let imbalance = abs(2 * prefix - total)
                if imbalance < bestImbalance {
                    best = m
                    bestImbalance = imbalance
                }
            }
            return best
        }

        /// The separator to put between adjacent leaves `left` and `right`, both non-empty.
        static func separator(between left: Leaf, and right: Leaf) -> [UInt8] {
            left.withView { l in right.withView { r in Entry.shortestSeparator(l.key(l.count - 1), r.key(0)) } }
        }

        // MARK: Reading

        func scan(
            lower: Bound?, upper: Bound?, reverse: Bool,
            _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
        ) rethrows -> Bool {
            try withView { view in
                var start = 0
                var end = view.count
                if let lower {
                    let (slot, found) = lower.key.withUnsafeBytes { view.find($0) }
                    start = found && !lower.isInclusive ? slot + 1 : slot
                }
                if let upper {
                    let (slot, found) = upper.key.withUnsafeBytes { view.find($0) }
                    end = found && upper.isInclusive ? slot + 1 : slot
                }
                guard start < end else { return true }
                if reverse {
                    for slot in stride(from: end - 1, through: start, by: -1) {
                        let e = Entry.decode(at: view.entry(slot))
                        if try !body(e.key, e.value) { return false }
                    }
                } else {
                    for slot in start..<end {
                        let e = Entry.decode(at: view.entry(slot))
                        if try !body(e.key, e.value) { return false }
                    }
                }
                return true
            }
        }

        // MARK: Writing

        /// Inserts or replaces the entry for `key`.
        ///
        /// - Returns: whether the key was new, and the new right sibling if the leaf had to split.
        func upsert(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, layout: Layout) -> (isNew: Bool, split: Split?) {
            let (slot, found) = withView { $0.find(key) }
            let size = Entry.size(keyCount: key.count, valueCount: value.count)
            let (entryWeight, isLarge) = layout.weight(ofEntrySize: size)
            if found {
                let isOverwritable = withView { !$0.isLarge(slot) && $0.size(slot) == size }
                if isOverwritable && !isLarge {
                    overwriteValue(inSlot: slot, with: value)
                    return (false, nil)
                }
                releaseStorage(ofSlot: slot)
                slots.remove(at: slot)
            }
            if weight + entryWeight <= layout.leafBytes {
                insertEntry(key: key, value: value, size: size, isLarge: isLarge, at: slot, layout: layout)
                if deadBytes * 2 > arena.count { compact(arenaCapacity: layout.roomyCapacity(liveArenaBytes)) }
                return (!found, nil)
            }
            let split = splitInserting(key: key, value: value, size: size, isLarge: isLarge, weight: entryWeight, at: slot, layout: layout)
            return (!found, split)
        }

        /// Removes the entry for `key`; returns whether there was one.
        func remove(key: UnsafeRawBufferPointer, layout: Layout) -> Bool {
            let (slot, found) = withView { $0.find(key) }
            guard found else { return false }
            releaseStorage(ofSlot: slot)
            slots.remove(at: slot)
            if deadBytes * 2 > arena.count { compact(arenaCapacity: layout.roomyCapacity(liveArenaBytes)) }
            return true
        }

        /// Adds an entry at `slot`; the caller has checked that it fits the budget.
        func insertEntry(
            key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, size: Int, isLarge: Bool, at slot: Int, layout: Layout
        ) {
            let location: UInt32
            if isLarge {
                large.append(LargeEntry(key: key, value: value))
                location = Layout.largeFlag | UInt32(large.count - 1)
            } else {
                reserveArena(size, layout: layout)  // may compact, which moves entries: take the offset after
                location = UInt32(arena.count)
                Entry.append(key: key, value: value, to: &arena)
            }
            let head = admit(key)
            if slots.count == slots.capacity { slots.reserveCapacity(slots.count + max(4, slots.count / 8)) }
            slots.insert(UInt64(head) << 32 | UInt64(location), at: slot)
        }

        /// Shortens the shared prefix if `key` doesn't start with it (recomputing every head), and returns
        /// the key's head.
        private func admit(_ key: UnsafeRawBufferPointer) -> UInt32 {
            if slots.isEmpty {
                prefixLength = min(8, key.count)
                prefix = Entry.prefix(of: key, length: prefixLength)
            } else if key.count < prefixLength || Entry.prefix(of: key, length: prefixLength) != prefix {
                let differing = Entry.prefix(of: key, length: prefixLength) ^ prefix
                prefixLength = min(key.count, differing == 0 ? prefixLength : differing.leadingZeroBitCount / 8)
                prefix = Entry.prefix(of: key, length: prefixLength)
                let heads = withView { view in (0..<view.count).map { Entry.head(of: view.key($0), after: prefixLength) } }
                for (i, head) in heads.enumerated() { slots[i] = UInt64(head) << 32 | (slots[i] & 0xFFFF_FFFF) }
            }
            return Entry.head(of: key, after: prefixLength)
        }

        /// Makes room to append `size` bytes, growing by a step or compacting.
        private func reserveArena(_ size: Int, layout: Layout) {
            guard arena.count + size > arena.capacity else { return }
            if deadBytes > 0 && (arena.count + size > layout.leafBytes || deadBytes * 2 >= arena.count) {
                compact(arenaCapacity: layout.roomyCapacity(liveArenaBytes + size))
            } else {
                arena.reserveCapacity(layout.roomyCapacity(arena.count + size))
            }
        }

        private func overwriteValue(inSlot slot: Int, with value: UnsafeRawBufferPointer) {
            let offset = Int(UInt32(truncatingIfNeeded: slots[slot]))
            arena.withUnsafeMutableBytes { a in
                let entry = Entry.decode(at: UnsafeRawPointer(a.baseAddress! + offset))
                if let source = value.baseAddress, value.count > 0 {
                    UnsafeMutableRawPointer(mutating: entry.value.baseAddress!).copyMemory(from: source, byteCount: value.count)
                }
            }
        }

        /// Frees what the entry in `slot` occupies (arena bytes or its large entry); the slot stays.
        private func releaseStorage(ofSlot slot: Int) {
            let location = UInt32(truncatingIfNeeded: slots[slot])
            if location & Layout.largeFlag == 0 {
                deadBytes += withView { $0.size(slot) }
                return
            }
            // Swap-remove, then repoint the one slot that referred to the moved last entry.
            let index = Int(location & ~Layout.largeFlag)
            let last = large.count - 1
            if index != last {
                large.swapAt(index, last)
                let moved = Layout.largeFlag | UInt32(last)
                let movedSlot = slots.firstIndex { UInt32(truncatingIfNeeded: $0) == moved }!
                slots[movedSlot] = slots[movedSlot] & ~0xFFFF_FFFF | UInt64(Layout.largeFlag | UInt32(index))
            }
            large.removeLast()
        }

        /// Splits this leaf to make room for a new entry at `slot`; this leaf keeps the left part.
        ///
        /// Normally the entries, new one included, are split evenly by weight. When the new entry goes at
        /// either end (keys arriving in ascending or descending order) the new leaf on that side starts
        /// with just the minimum weight and the other keeps the rest in an exactly-sized arena, so a
        /// sequentially filled tree ends up with nearly full leaves instead of half-full ones.
        private func splitInserting(
            key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, size: Int, isLarge: Bool, weight newWeight: Int,
            at slot: Int, layout: Layout
        ) -> Split {
            let n = count
            var weights = withView { view in (0..<n).map { view.weight($0) } }
            weights.insert(newWeight, at: slot)
            // The left part is weights[..<m], the right part weights[m...], with 1 <= m <= n.
            let m: Int
            if slot == n {
                var i = n + 1
                var tail = 0
                while tail < layout.minLeafWeight && i > 1 {
                    i -= 1
                    tail += weights[i]
                }
                m = i
            } else if slot == 0 {
                var i = 0
                var head = 0
                while head < layout.minLeafWeight && i < n {
                    head += weights[i]
                    i += 1
                }
                m = i
            } else {
                m = Self.balancedSplit(weights)
            }
            let goesLeft = slot < m
            let leftCount = goesLeft ? m - 1 : m  // existing entries staying here
            let newArenaBytes = isLarge ? 0 : size
            let (leftBytes, rightBytes) = withView { ($0.arenaBytes(0..<leftCount), $0.arenaBytes(leftCount..<n)) }
            let leftCapacity: Int
            let rightCapacity: Int
            if slot == n {
                (leftCapacity, rightCapacity) = (leftBytes, layout.leafBytes)
            } else if slot == 0 {
                (leftCapacity, rightCapacity) = (layout.leafBytes, rightBytes)
            } else {
                leftCapacity = layout.roomyCapacity(leftBytes + (goesLeft ? newArenaBytes : 0))
                rightCapacity = layout.roomyCapacity(rightBytes + (goesLeft ? 0 : newArenaBytes))
            }
            let right = Self.assemble([(self, leftCount..<n)], arenaCapacity: rightCapacity, extraSlots: slot == 0 ? 0 : 4)
            adopt(Self.assemble([(self, 0..<leftCount)], arenaCapacity: leftCapacity, extraSlots: slot == n ? 0 : 4))
            if goesLeft {
                insertEntry(key: key, value: value, size: size, isLarge: isLarge, at: slot, layout: layout)
            } else {
                right.insertEntry(key: key, value: value, size: size, isLarge: isLarge, at: slot - leftCount, layout: layout)
            }
            return Split(separator: Self.separator(between: self, and: right), node: right)
        }

        /// Two adjacent leaves' entries in one leaf.
        static func merged(_ left: Leaf, _ right: Leaf, layout: Layout) -> Leaf {
            assemble(
                [(left, 0..<left.count), (right, 0..<right.count)],
                arenaCapacity: layout.roomyCapacity(left.liveArenaBytes + right.liveArenaBytes), extraSlots: 4)
        }

        /// Two adjacent leaves' entries spread evenly by weight over two new leaves, and their separator.
        static func redistributed(_ left: Leaf, _ right: Leaf, layout: Layout, exact: Bool = false) -> (Leaf, Leaf, [UInt8]) {
            let nl = left.count
            let nr = right.count
            var weights = left.withView { view in (0..<nl).map { view.weight($0) } }
            weights += right.withView { view in (0..<nr).map { view.weight($0) } }
            let m = balancedSplit(weights)
            let leftParts: [(leaf: Leaf, range: Range<Int>)] = m <= nl ? [(left, 0..<m)] : [(left, 0..<nl), (right, 0..<m - nl)]
            let rightParts: [(leaf: Leaf, range: Range<Int>)] = m < nl ? [(left, m..<nl), (right, 0..<nr)] : [(right, m - nl..<nr)]
            func build(_ parts: [(leaf: Leaf, range: Range<Int>)]) -> Leaf {
                let bytes = parts.reduce(0) { total, part in total + part.leaf.withView { $0.arenaBytes(part.range) } }
                return assemble(parts, arenaCapacity: exact ? bytes : layout.roomyCapacity(bytes), extraSlots: exact ? 0 : 4)
            }
            let a = build(leftParts)
            let b = build(rightParts)
            return (a, b, separator(between: a, and: b))
        }
    }
}
