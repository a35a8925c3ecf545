/// An ordered map from byte strings to byte strings: an in-memory copy-on-write B+tree.
///
/// It is the engine's one data structure. Each table's rows live in one tree (key: the 8-byte
/// `IndexKey.primaryKey`, value: the encoded row) and each secondary index is one tree (key: the encoded
/// index key followed by the primary key, value: empty). Keys are ordered by unsigned byte comparison, as
/// `memcmp` orders them, with a proper prefix first.
///
/// Copying the struct is O(1) and gives a snapshot: a reader keeps its copy as a consistent version while
/// the single writer mutates its own. A mutation copies only the nodes on the path from the root to the
/// leaf it changes, and only those still shared with another copy (`isKnownUniquelyReferenced`); nodes have
/// no parent pointers, so one node can belong to many versions.
///
/// Layout (see `Leaf` and `Inner`):
/// - A leaf keeps its entries in one byte arena, `[varint keyLength][key][varint valueLength][value]`,
///   plus a key-sorted array of 8-byte slots: a `UInt32` arena offset and the next four key bytes after
///   the prefix all the leaf's keys share. A search starts with one interpolation probe and compares
///   those heads, reading the arena only on a tie. A leaf's *weight* is its live entry bytes plus 8 bytes
///   per slot; it splits when an insert would take the weight past `leafBytes` (evenly, or 3:1 when keys
///   arrive in order, so sequential loads leave leaves nearly full). Arenas grow in eighth-of-budget
///   steps, never by doubling.
/// - An entry heavier than a quarter of `leafBytes` lives in its own allocation (a `LargeEntry`) and
///   weighs a fixed 16 bytes in its leaf, so a value of any size fits and a leaf always splits into two
///   halves that respect the budget.
/// - Inner nodes hold up to `fanout` children, the separator keys between them (the shortest key that
///   separates two leaves) and the separators' first 8 bytes side by side for the search.
/// - After a deletion, or an update to a shorter value, a non-root leaf lighter than a quarter of the
///   budget or an inner node with fewer than `fanout / 2` children merges with a sibling when the two fit
///   in one node, and otherwise takes entries from it; a root with one child gives way to that child.
///
// `@unchecked Sendable` is sound because a node is only ever written while the tree being mutated is its
// sole owner: every mutation checks `isKnownUniquelyReferenced` on each node along its path and copies the
// node when the check fails. Once a copy of the tree exists, all nodes it reaches are shared, so the writer
// copies them rather than writing them, and readers on other threads see frozen nodes. (The usual rule for
// any variable still applies: don't copy a tree on one thread while another thread mutates that variable.)
struct ByteTree: @unchecked Sendable {
    /// The number of entries. O(1).
    private(set) var count = 0
    /// `nil` when the tree is empty; a `Leaf` when `height == 0`, else an `Inner`.
    var root: Node?
    /// Levels below the root: 0 when the root is a leaf. All leaves sit at this depth.
    var height = 0
    let layout: Layout

    /// Creates an empty tree whose leaves weigh at most `leafBytes` and whose inner nodes have at most
    /// `fanout` children.
    ///
    /// Use the defaults except in tests, where tiny sizes force many splits and merges.
    init(leafBytes: Int = 8192, fanout: Int = 96) {
        layout = Layout(leafBytes: leafBytes, fanout: fanout)
    }

    init(layout: Layout) {
        self.layout = layout
    }

    /// A tree around nodes built elsewhere (by `Builder`).
    init(layout: Layout, root: Node, height: Int, count: Int) {
        self.layout = layout
        self.root = root
        self.height = height
        self.count = count
    }

    var isEmpty: Bool { count == 0 }

    /// Levels from the root to the leaves: 0 for an empty tree, 1 when the root is a leaf.
    var depth: Int { root == nil ? 0 : height + 1 }

    // MARK: Lookup

    /// Calls `body` with the value stored under `key` and returns its result, or returns `nil` when the key
    /// is absent.
    ///
    /// The buffer is valid only inside `body`. This is the allocation-free lookup; `value(forKey:)` copies.
    func withValue<R>(
        forKey key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R
    ) rethrows -> R? {
        let result: R?? = try withLeaf(for: key) { leaf in
            try leaf.withView { view in
                let (slot, found) = view.find(key)
                return found ? try body(view.value(slot)) : nil
            }
        }
        return result ?? nil
    }

    /// The value stored under `key`, copied into an array, or `nil`.
    func value(forKey key: [UInt8]) -> [UInt8]? {
        key.withUnsafeBytes { k in withValue(forKey: k) { Array($0) } }
    }

    func contains(_ key: UnsafeRawBufferPointer) -> Bool {
        withLeaf(for: key) { leaf in leaf.withView { $0.find(key).found } } ?? false
    }

    func contains(_ key: [UInt8]) -> Bool {
        key.withUnsafeBytes { contains($0) }
    }

    /// Calls `body` with the leaf whose key range holds `key`, or returns `nil` for an empty tree.
    ///
    /// The descent holds nodes unretained: `self` keeps the root alive, every node keeps its children
    /// alive, and nothing can change them meanwhile (`self` is a non-mutating copy). Retaining and
    /// releasing each node took about as long as the searches.
    @inline(__always)
    func withLeaf<R>(for key: UnsafeRawBufferPointer, _ body: (Leaf) throws -> R) rethrows -> R? {
        guard let root else { return nil }
        var node = Unmanaged.passUnretained(root)
        var level = height
        let prefix = Entry.prefix(of: key, length: 8)
        while level > 0 {
            node = node._withUnsafeGuaranteedRef { node in
                let inner = unsafeDowncast(node, to: Inner.self)
                let i = inner.childIndex(for: key, prefix: prefix)
                return inner.children.withUnsafeBufferPointer { Unmanaged.passUnretained($0[i]) }
            }
            level -= 1
        }
        return try node._withUnsafeGuaranteedRef { try body(unsafeDowncast($0, to: Leaf.self)) }
    }

    // MARK: Mutation

    /// Stores `value` under `key`, replacing any value already there.
    ///
    /// - Returns: `true` if the key was new.
    @discardableResult
    mutating func insert(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> Bool {
        precondition(key.count < Int(Int32.max) && value.count < Int(Int32.max), "ByteTree entries must be smaller than 2 GiB")
        guard root != nil else {
            let leaf = Leaf()
            _ = leaf.upsert(key: key, value: value, layout: layout)
            root = leaf
            count = 1
            return true
        }
        makeRootUnique()
        let (isNew, split): (Bool, Split?)
        if height == 0 {
            (isNew, split) = unsafeDowncast(root!, to: Leaf.self).upsert(key: key, value: value, layout: layout)
        } else {
            (isNew, split) = unsafeDowncast(root!, to: Inner.self).insert(key: key, value: value, level: height, layout: layout)
        }
        if let split {
            root = Inner(separators: [split.separator], children: [root!, split.node])
            height += 1
        } else if !isNew {
            collapseRoot()
        }
        if isNew { count += 1 }
        return isNew
    }

    @discardableResult
    mutating func insert(key: [UInt8], value: [UInt8]) -> Bool {
        key.withUnsafeBytes { k in value.withUnsafeBytes { v in insert(key: k, value: v) } }
    }

    /// Removes the entry stored under `key`.
    ///
    /// - Returns: `true` if there was one.
    @discardableResult
    mutating func remove(key: UnsafeRawBufferPointer) -> Bool {
        // Looking first keeps a miss from path-copying nodes shared with a snapshot.
        guard contains(key) else { return false }
        makeRootUnique()
        if height == 0 {
            let leaf = unsafeDowncast(root!, to: Leaf.self)
            _ = leaf.remove(key: key, layout: layout)
            if leaf.count == 0 { root = nil }
        } else {
            _ = unsafeDowncast(root!, to: Inner.self).remove(key: key, level: height, layout: layout)
            collapseRoot()
        }
        count -= 1
        return true
    }

    @discardableResult
    mutating func remove(key: [UInt8]) -> Bool {
        key.withUnsafeBytes { remove(key: $0) }
    }

    mutating func removeAll() {
        root = nil
        height = 0
        count = 0
    }

    /// An inner root left with one child (after merges below it) gives way to that child.
    private mutating func collapseRoot() {
        while height > 0 {
            let inner = unsafeDowncast(root!, to: Inner.self)
            guard inner.children.count == 1 else { return }
            root = inner.children[0]
            height -= 1
        }
    }

    private mutating func makeRootUnique() {
        if !isKnownUniquelyReferenced(&root), let shared = root {
            root = Self.copy(shared, level: height, layout: layout)
        }
    }

    /// A private copy of `node` for a writer; `level` says whether it is a leaf (0) or an inner node.
    static func copy(_ node: Node, level: Int, layout: Layout) -> Node {
        if level == 0 { return unsafeDowncast(node, to: Leaf.self).copy(layout: layout) }
        let inner = unsafeDowncast(node, to: Inner.self)
        return Inner(separators: inner.separators, children: inner.children)
    }

    // MARK: Scanning

    /// One end of a key range.
    struct Bound: Sendable, Hashable {
        var key: [UInt8]
        var isInclusive: Bool

        init(key: [UInt8], isInclusive: Bool) {
            self.key = key
            self.isInclusive = isInclusive
        }

        static func inclusive(_ key: [UInt8]) -> Bound { Bound(key: key, isInclusive: true) }
        static func exclusive(_ key: [UInt8]) -> Bound { Bound(key: key, isInclusive: false) }
    }

    /// Visits entries in key order (or reverse) between optional bounds; the closure returns `false` to stop.
    ///
    /// The buffers are valid only during each call. Don't mutate this tree from the closure (the scan
    /// reads a copy, so a mutation would not be seen anyway).
    func scan(
        from lower: Bound? = nil, to upper: Bound? = nil, reverse: Bool = false,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) rethrows {
        guard let root else { return }
        _ = try Self.scan(root, level: height, lower: lower, upper: upper, reverse: reverse, body)
    }

    /// Scans one subtree; `lower` and `upper` are passed only to the children at the range's edges, since
    /// every child between them lies wholly inside the range. Returns `false` once `body` asked to stop.
    private static func scan(
        _ node: Node, level: Int, lower: Bound?, upper: Bound?, reverse: Bool,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
    ) rethrows -> Bool {
        if level == 0 {
            return try unsafeDowncast(node, to: Leaf.self).scan(lower: lower, upper: upper, reverse: reverse, body)
        }
        let inner = unsafeDowncast(node, to: Inner.self)
        let first = lower.map { b in b.key.withUnsafeBytes { inner.childIndex(for: $0) } } ?? 0
        let last = upper.map { b in b.key.withUnsafeBytes { inner.childIndex(for: $0) } } ?? inner.children.count - 1
        guard first <= last else { return true }
        if reverse {
            for i in stride(from: last, through: first, by: -1) {
                let ok = try scan(
                    inner.children[i], level: level - 1, lower: i == first ? lower : nil,
                    upper: i == last ? upper : nil, reverse: true, body)
                if !ok { return false }
            }
        } else {
            for i in first...last {
                let ok = try scan(
                    inner.children[i], level: level - 1, lower: i == first ? lower : nil,
                    upper: i == last ? upper : nil, reverse: false, body)
                if !ok { return false }
            }
        }
        return true
    }

    /// Smallest key that is greater than every key having `prefix` as a prefix (nil if none: all 0xFF).
    ///
    /// Use it as the exclusive upper bound of a prefix scan: `scan(from: .inclusive(p), to: .exclusive(s))`.
    static func prefixSuccessor(_ prefix: [UInt8]) -> [UInt8]? {
        guard let last = prefix.lastIndex(where: { $0 != 0xFF }) else { return nil }
        var successor = Array(prefix[...last])
        successor[last] += 1
        return successor
    }

    // MARK: Node sizing

    /// The size limits of one tree, fixed when it is created.
    struct Layout: Sendable, Equatable {
        /// Each slot costs this much in a leaf's weight (its size).
        static let slotWeight = 8
        /// What an out-of-line entry weighs in its leaf: its slot plus its reference in the `large` array.
        static let largeEntryWeight = slotWeight + 8
        /// Marks a slot location that indexes a leaf's `large` array instead of its arena.
        static let largeFlag: UInt32 = 1 << 31

        let leafBytes: Int
        let fanout: Int

        init(leafBytes: Int, fanout: Int) {
            precondition(leafBytes >= 64 && leafBytes <= 1 << 30, "ByteTree leafBytes must be in 64...2^30")
            precondition(fanout >= 4, "ByteTree fanout must be at least 4")
            self.leafBytes = leafBytes
            self.fanout = fanout
        }

        /// A non-root leaf lighter than this merges with or borrows from a sibling.
        var minLeafWeight: Int { leafBytes / 4 }
        /// Entries heavier than this go out of line. Keeping it at most `minLeafWeight` guarantees that a
        /// split or a redistribution can always leave both leaves between the minimum and the budget.
        var maxInlineWeight: Int { leafBytes / 4 }
        /// A non-root inner node with fewer children merges with or borrows from a sibling.
        var minChildren: Int { fanout / 2 }
        /// Arena growth step: grow in small steps rather than doubling, so a leaf never holds much more
        /// capacity than it uses.
        var arenaSlack: Int { max(32, leafBytes / 8) }

        /// Arena capacity for a leaf holding `live` bytes that may still grow.
        func roomyCapacity(_ live: Int) -> Int { max(live, min(leafBytes, live + arenaSlack)) }

        /// The weight of an entry with the given encoded size, and whether it goes out of line.
        func weight(ofEntrySize size: Int) -> (weight: Int, isLarge: Bool) {
            let inline = size + Self.slotWeight
            return inline > maxInlineWeight ? (Self.largeEntryWeight, true) : (inline, false)
        }
    }

    /// What a node hands its parent after splitting: the new right sibling and the key separating the two.
    struct Split {
        var separator: [UInt8]
        var node: Node
    }
}
