/// Where an `ObjectTable` keeps its slot numbers: a dictionary, or for a context's registry an
/// `IDSlotMap`.
protocol SlotMap {
    associatedtype Key
    init()
    var count: Int { get }
    subscript(key: Key) -> Int? { get }
    /// The slot under `key`, as the subscript, for a caller that may let the map remember where it
    /// looked.
    mutating func lookUp(_ key: Key) -> Int?
    /// Files `slot` under `key`, returning the slot it replaced.
    mutating func updateValue(_ slot: Int, forKey key: Key) -> Int?
    mutating func removeValue(forKey key: Key) -> Int?
    mutating func reserveCapacity(_ n: Int)
    /// Whether the map keeps much more room than its keys need: a sweep then rebuilds it.
    var isSparse: Bool { get }
}

extension Dictionary: SlotMap where Value == Int {
    var isSparse: Bool { false }
    func lookUp(_ key: Key) -> Int? { self[key] }
}

/// Slot numbers by object ID, for a context's registry.
///
/// A dictionary of IDs files each one at a random place in a table of several megabytes: registering
/// the 100,000 objects of a fetch cost a cache miss each, a quarter of the fetch. Row keys are mostly
/// consecutive, and a scan returns them in order, so here IDs are filed in blocks of 8 consecutive
/// numbers of one scope: the blocks sit in one array in the order they were first used, a scan fills
/// them front to back, and only the first ID of a block looks its block up by hash (the block in use
/// is remembered). IDs scattered over a table take a block each, 32 bytes. Blocks are not freed one by
/// one: `isSparse` tells the registry's sweep when to rebuild.
struct IDSlotMap: SlotMap {
    private static let blockShift: Int64 = 3
    private static let blockSize = 1 << blockShift

    /// One run of `blockSize` numbers of one scope.
    private struct BlockKey: Equatable {
        let scope: ObjectIdentifier
        let run: Int64
        var address: UInt { UInt(bitPattern: scope) }
    }

    /// Slot + 1 for each number, `blockSize` per block; 0 for none, so that a new block is zeroed
    /// memory.
    private var entries: [Int32] = []
    private var blocks = BlockTable()
    /// The block used last and where its entries start: a scan stays in one block for 8 IDs.
    private var lastKey: BlockKey?
    private var lastStart = 0
    private(set) var count = 0

    init() {}

    /// Every block holds at least one ID until its IDs leave; past twice that many entries, at least
    /// half the blocks are empty and a rebuild frees them.
    var isSparse: Bool { entries.count > 2 * Self.blockSize * count + 4096 }

    subscript(id: ManagedObjectID) -> Int? {
        let key = Self.blockKey(id)
        let start = key == lastKey ? lastStart : blocks.find(scope: key.address, run: key.run)
        return start.flatMap { slot(at: $0 + Self.offset(id)) }
    }

    mutating func lookUp(_ id: ManagedObjectID) -> Int? {
        position(of: id, creating: false).flatMap(slot(at:))
    }

    private func slot(at i: Int) -> Int? {
        let entry = entries[i]
        return entry == 0 ? nil : Int(entry) - 1
    }

    mutating func updateValue(_ slot: Int, forKey id: ManagedObjectID) -> Int? {
        let i = position(of: id, creating: true)!
        let old = self.slot(at: i)
        entries[i] = Int32(slot + 1)
        if old == nil { count += 1 }
        return old
    }

    mutating func removeValue(forKey id: ManagedObjectID) -> Int? {
        guard let i = position(of: id, creating: false), let old = slot(at: i) else { return nil }
        entries[i] = 0
        count -= 1
        return old
    }

    /// Room for `n` more IDs: entries for consecutive ones (a scan's), and blocks for up to 4,096
    /// scattered ones (an index query's), so that a registry that refills after each sweep does not
    /// rehash its blocks on every cycle.
    mutating func reserveCapacity(_ n: Int) {
        entries.reserveCapacity(entries.count + n + Self.blockSize)
        blocks.reserveCapacity(blocks.count + Swift.min(n, 4096) + n / Self.blockSize + 1)
    }

    /// Where the entry for `id` is, making its block when `creating`; nil when it has none.
    private mutating func position(of id: ManagedObjectID, creating: Bool) -> Int? {
        let key = Self.blockKey(id)
        let offset = Self.offset(id)
        if key == lastKey { return lastStart + offset }
        let start: Int
        if creating {
            // One probe to find or file the block: no block starts at the end of the entries, so
            // finding that start there means the block is new.
            let end = entries.count
            start = blocks.findOrInsert(scope: key.address, run: key.run, start: end)
            if start == end { entries.append(contentsOf: repeatElement(0, count: Self.blockSize)) }
        } else {
            guard let found = blocks.find(scope: key.address, run: key.run) else { return nil }
            start = found
        }
        lastKey = key
        lastStart = start
        return start + offset
    }

    private static func blockKey(_ id: ManagedObjectID) -> BlockKey {
        BlockKey(scope: ObjectIdentifier(id.scope), run: id.number >> blockShift)
    }

    private static func offset(_ id: ManagedObjectID) -> Int { Int(id.number & Int64(blockSize - 1)) }
}
