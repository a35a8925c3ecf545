extension ByteTree {
    /// Verifies the tree's structure: sorted keys inside the bounds their separators give, uniform depth,
    /// node sizes within the layout, consistent arena bookkeeping and the entry count.
    ///
    /// Use it in tests after every mutation and in integrity checks; it reads every byte, O(size).
    /// - Throws: `StorageError.corruption(file: "index", offset: 0, reason:)` naming the node path and the
    ///   broken rule.
    func checkInvariants() throws {
        guard let root else {
            if count != 0 || height != 0 { throw Self.corruption("the tree has no root but a count of \(count) and height \(height)") }
            return
        }
        var entries = 0
        try check(root, level: height, path: [], lower: nil, upper: nil, entries: &entries)
        if entries != count { throw Self.corruption("the tree counts \(count) entries but its leaves hold \(entries)") }
    }

    /// Up to 32 bytes in hex, for error messages.
    static func hex<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        let digits = Array("0123456789abcdef")
        var s = "0x"
        for byte in bytes.prefix(32) {
            s.append(digits[Int(byte >> 4)])
            s.append(digits[Int(byte & 0xF)])
        }
        if bytes.count > 32 { s += "…(\(bytes.count) bytes)" }
        if bytes.isEmpty { s = "<empty>" }
        return s
    }

    private static func corruption(_ reason: String) -> StorageError {
        .corruption(file: "index", offset: 0, reason: reason)
    }

    private static func describe(_ path: [Int]) -> String {
        path.isEmpty ? "the root" : "the node at child path /" + path.map(String.init).joined(separator: "/")
    }

    private func check(_ node: Node, level: Int, path: [Int], lower: [UInt8]?, upper: [UInt8]?, entries: inout Int) throws {
        let place = Self.describe(path)
        if level == 0 {
            guard let leaf = node as? Leaf else {
                throw Self.corruption("\(place) is an inner node at depth \(path.count), where the tree's leaves are")
            }
            entries += leaf.count
            try check(leaf, place: place, isRoot: path.isEmpty, lower: lower, upper: upper)
            return
        }
        guard let inner = node as? Inner else {
            throw Self.corruption("\(place) is a leaf at depth \(path.count), but the tree's leaves are at depth \(height)")
        }
        let n = inner.children.count
        if inner.separators.count != n - 1 {
            throw Self.corruption("\(place) has \(n) children but \(inner.separators.count) separators")
        }
        if n > layout.fanout { throw Self.corruption("\(place) has \(n) children, more than the fanout \(layout.fanout)") }
        if path.isEmpty && n < 2 { throw Self.corruption("the root is an inner node with \(n) child(ren)") }
        if !path.isEmpty && n < layout.minChildren {
            throw Self.corruption("\(place) is underfull: \(n) children, fewer than \(layout.minChildren)")
        }
        for (i, separator) in inner.separators.enumerated() {
            if inner.prefixes.count != n - 1 || inner.prefixes[i] != separator.withUnsafeBytes({ Entry.prefix(of: $0, length: 8) }) {
                throw Self.corruption("\(place): the search prefix of separator \(i) does not match \(Self.hex(separator))")
            }
            let previous = i == 0 ? lower : inner.separators[i - 1]
            if let previous, previous.lexicographicallyPrecedes(separator) == false {
                throw Self.corruption("\(place): separator \(i) \(Self.hex(separator)) is not above \(Self.hex(previous))")
            }
        }
        if let upper, let last = inner.separators.last, !last.lexicographicallyPrecedes(upper) {
            throw Self.corruption("\(place): last separator \(Self.hex(last)) is not below the upper bound \(Self.hex(upper))")
        }
        for i in 0..<n {
            try check(
                inner.children[i], level: level - 1, path: path + [i],
                lower: i == 0 ? lower : inner.separators[i - 1], upper: i == n - 1 ? upper : inner.separators[i],
                entries: &entries)
        }
    }

    private func check(_ leaf: Leaf, place: String, isRoot: Bool, lower: [UInt8]?, upper: [UInt8]?) throws {
        if leaf.count == 0 { throw Self.corruption("\(place) is an empty leaf") }
        if leaf.hintCount != leaf.count || leaf.hintHeads >> 32 != leaf.slots[0] >> 32
            || leaf.hintHeads & 0xFFFF_FFFF != leaf.slots[leaf.count - 1] >> 32
        {
            throw Self.corruption("\(place): the search hint does not match the slots")
        }
        if leaf.deadBytes < 0 || leaf.deadBytes * 2 > leaf.arena.count {
            throw Self.corruption("\(place) counts \(leaf.deadBytes) dead bytes in an arena of \(leaf.arena.count)")
        }
        var previousKey = lower
        var inlineBytes = 0
        var usedLarge = Set<Int>()
        var extents: [(start: Int, end: Int)] = []
        for slot in 0..<leaf.count {
            let offset = UInt32(truncatingIfNeeded: leaf.slots[slot])
            let what = "\(place), entry \(slot)"
            // Parse through ByteReader so that damage is reported rather than read out of bounds.
            let entry: (key: [UInt8], size: Int) = try leaf.arena.withUnsafeBytes { arena in
                if offset & Layout.largeFlag != 0 {
                    let index = Int(offset & ~Layout.largeFlag)
                    guard index < leaf.large.count, usedLarge.insert(index).inserted else {
                        throw Self.corruption("\(what) points to large entry \(index), which is missing or shared")
                    }
                    let large = leaf.large[index]
                    return try Self.parseEntry(UnsafeRawBufferPointer(start: large.bytes, count: large.size), what: what)
                }
                guard Int(offset) < arena.count else {
                    throw Self.corruption("\(what) has offset \(offset) beyond the arena's \(arena.count) bytes")
                }
                let parsed = try Self.parseEntry(UnsafeRawBufferPointer(rebasing: arena[Int(offset)...]), what: what)
                extents.append((Int(offset), Int(offset) + parsed.size))
                return parsed
            }
            let (weight, isLarge) = layout.weight(ofEntrySize: entry.size)
            if isLarge != (offset & Layout.largeFlag != 0) {
                throw Self.corruption("\(what) weighs \(weight) bytes but is stored \(isLarge ? "inline" : "out of line")")
            }
            if !isLarge { inlineBytes += entry.size }
            try entry.key.withUnsafeBytes { key in
                if key.count < leaf.prefixLength || Entry.prefix(of: key, length: leaf.prefixLength) != leaf.prefix {
                    throw Self.corruption("\(what): key \(Self.hex(entry.key)) lacks the leaf's \(leaf.prefixLength)-byte shared prefix")
                }
                if leaf.slots[slot] >> 32 != UInt64(Entry.head(of: key, after: leaf.prefixLength)) {
                    throw Self.corruption("\(what): the slot's head does not match key \(Self.hex(entry.key))")
                }
            }
            // The lower bound is inclusive: a separator may equal the first key of the child to its right.
            if let previousKey, slot == 0 ? entry.key.lexicographicallyPrecedes(previousKey) : !previousKey.lexicographicallyPrecedes(entry.key) {
                let rule = slot == 0 ? "below the lower bound" : "not above the previous key"
                throw Self.corruption("\(what): key \(Self.hex(entry.key)) is \(rule) \(Self.hex(previousKey))")
            }
            previousKey = entry.key
        }
        if let upper, let last = previousKey, !last.lexicographicallyPrecedes(upper) {
            throw Self.corruption("\(place): last key \(Self.hex(last)) is not below the upper bound \(Self.hex(upper))")
        }
        if usedLarge.count != leaf.large.count {
            throw Self.corruption("\(place) holds \(leaf.large.count) large entries but its slots use \(usedLarge.count)")
        }
        extents.sort { $0.start < $1.start }
        for (a, b) in zip(extents, extents.dropFirst()) where a.end > b.start {
            throw Self.corruption("\(place): entries at arena offsets \(a.start) and \(b.start) overlap")
        }
        if inlineBytes != leaf.liveArenaBytes {
            throw Self.corruption(
                "\(place): live entries take \(inlineBytes) arena bytes, but the arena has \(leaf.arena.count) with \(leaf.deadBytes) dead")
        }
        if leaf.weight > layout.leafBytes {
            throw Self.corruption("\(place) weighs \(leaf.weight) bytes, over the budget of \(layout.leafBytes)")
        }
        if !isRoot && leaf.weight < layout.minLeafWeight {
            throw Self.corruption("\(place) is underfull: \(leaf.weight) bytes, under the minimum \(layout.minLeafWeight)")
        }
    }

    private static func parseEntry(_ bytes: UnsafeRawBufferPointer, what: String) throws -> (key: [UInt8], size: Int) {
        var reader = ByteReader(bytes, context: "index")
        do {
            let key = Array(try reader.readLengthPrefixed())
            _ = try reader.readLengthPrefixed()
            return (key, reader.offset)
        } catch {
            throw corruption("\(what) is malformed: \(error)")
        }
    }

    // MARK: Memory

    /// Bytes allocated for the tree's nodes: arena and array capacities, entries stored out of line,
    /// separators, and a 16-byte object header for every allocation, each rounded up to 16 bytes as
    /// `malloc` does. Nodes shared with other versions are counted in full.
    ///
    /// Used by the benchmark to report bytes per row.
    var memoryFootprint: Int {
        root.map { Self.footprint(of: $0, level: height) } ?? 0
    }

    private static func allocation(_ bytes: Int) -> Int { (bytes + 15) & ~15 }

    /// An array's heap buffer: object header, count and capacity, then the elements.
    private static func arrayStorage<T>(_ array: [T]) -> Int {
        array.capacity == 0 ? 0 : allocation(32 + array.capacity * MemoryLayout<T>.stride)
    }

    private static func footprint(of node: Node, level: Int) -> Int {
        if level == 0 {
            let leaf = unsafeDowncast(node, to: Leaf.self)
            // Header, three array references, then dead bytes, prefix length, prefix and the two hint words.
            var total = allocation(16 + 24 + 40) + arrayStorage(leaf.arena) + arrayStorage(leaf.slots) + arrayStorage(leaf.large)
            for large in leaf.large { total += allocation(16 + 16) + allocation(large.size) }
            return total
        }
        let inner = unsafeDowncast(node, to: Inner.self)
        var total = allocation(16 + 24) + arrayStorage(inner.separators) + arrayStorage(inner.prefixes) + arrayStorage(inner.children)
        for separator in inner.separators { total += arrayStorage(separator) }
        for child in inner.children { total += footprint(of: child, level: level - 1) }
        return total
    }
}
