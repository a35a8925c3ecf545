extension ByteTree {
    /// Keys that advance through a stage of `withValues(forKeys:width:_:)` together: enough to keep a
    /// core's line-fill buffers (10 to 16 misses in flight on current cores) busy, few enough that a
    /// group's scratch stays in the first-level cache.
    static let lookupGroup = 16

    /// Calls `body` with each key's position in `keys` and the value stored under it (`nil` when the
    /// key is absent), in the order of `keys`. `keys` holds keys of `width` bytes each, back to back.
    ///
    /// The answers are those of `withValue(forKey:_:)`; the order of memory reads is not. In a tree
    /// larger than the cache, one lookup spends most of its time waiting for two misses in its leaf, one
    /// after the other: the slot its interpolation probe lands on, then the entry the slot points to.
    /// Looking up n keys one at a time waits for those 2n misses in a row. Here a group of keys goes
    /// through each stage together (find the leaves, load the probed slots, search and load the
    /// entries, hand them out), and the reads of one stage do not depend on each other, so the processor
    /// has the whole group's misses in flight at once. An index scan that reads its rows by primary key
    /// (one row per index entry, scattered over the table) spends most of its time here.
    ///
    /// The values are valid only inside `body`.
    func withValues(
        forKeys keys: UnsafeRawBufferPointer, width: Int, _ body: (_ index: Int, _ value: UnsafeRawBufferPointer?) throws -> Void
    ) rethrows {
        precondition(width > 0 && keys.count % width == 0, "withValues(forKeys:width:) takes keys of exactly `width` bytes each")
        let n = keys.count / width
        guard n > 0 else { return }
        guard root != nil else {
            for i in 0..<n { try body(i, nil) }
            return
        }
        @inline(__always) func key(_ i: Int) -> UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(start: keys.baseAddress.unsafelyUnwrapped + i * width, count: width)
        }
        let group = Self.lookupGroup
        try withUnsafeTemporaryAllocation(of: Unmanaged<Leaf>.self, capacity: group) { leaves in
            try withUnsafeTemporaryAllocation(of: UnsafeRawPointer?.self, capacity: group) { entries in
                var touched: UInt64 = 0
                var start = 0
                while start < n {
                    let count = Swift.min(group, n - start)
                    // The inner nodes above the leaves are few and stay cached: descending is cheap.
                    for j in 0..<count {
                        leaves[j] = withLeaf(for: key(start + j)) { Unmanaged.passUnretained($0) }.unsafelyUnwrapped
                    }
                    for j in 0..<count {
                        touched &+= leaves[j]._withUnsafeGuaranteedRef { $0.hintHeads }
                    }
                    for j in 0..<count {
                        touched &+= leaves[j]._withUnsafeGuaranteedRef { $0.probedSlot(for: key(start + j)) }
                    }
                    for j in 0..<count {
                        entries[j] = leaves[j]._withUnsafeGuaranteedRef { leaf in
                            leaf.withView { view in
                                let (slot, found) = view.find(key(start + j))
                                return found ? view.entry(slot) : nil
                            }
                        }
                    }
                    for j in 0..<count {
                        try body(start + j, entries[j].map { Entry.decode(at: $0).value })
                    }
                    start += count
                }
                Self.keep(touched)
            }
        }
    }

    /// Gives the staged lookup's warm-up loads a use, so that the optimizer keeps them.
    @inline(never) @_optimize(none)
    private static func keep(_ value: UInt64) {}
}

extension ByteTree.Leaf {
    /// The slot the search for `key` will probe first, read (its value is of no interest; reading it
    /// brings its cache line in). Zero when the search would not interpolate.
    @inline(__always)
    func probedSlot(for key: UnsafeRawBufferPointer) -> UInt64 {
        let keyHead = UInt64(ByteTree.Entry.head(of: key, after: Swift.min(prefixLength, key.count)))
        guard let guess = View.interpolationGuess(keyHead: keyHead, hintCount: hintCount, hintHeads: hintHeads) else { return 0 }
        return slots.withUnsafeBufferPointer { $0[guess] }
    }
}
