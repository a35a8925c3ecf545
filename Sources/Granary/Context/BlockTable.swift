/// Where each block of an `IDSlotMap` starts, by the block's scope and run: an open-addressed table
/// with linear probing.
///
/// A `Dictionary` hashed each key with SipHash (seeding, combining and finalizing a `Hasher`): with
/// an index query's scattered IDs every lookup is the first of its block, and the hashing was a sixth
/// of registering a fetched object. These keys are a scope's address and a row number divided by 8,
/// which nobody outside chooses, so a multiplicative hash spreads them as well. Blocks are only
/// added: the registry rebuilds its map instead of removing them one by one.
struct BlockTable {
    /// The scope's address, 0 for an empty bucket (no object lives at address 0).
    private var scopes: [UInt] = []
    private var runs: [Int64] = []
    private var starts: [Int] = []
    /// Bits of the hash that index the buckets: 64 - log2(capacity).
    private var shift = 64
    private(set) var count = 0

    init() {}

    /// The start filed for the block, or nil.
    func find(scope: UInt, run: Int64) -> Int? {
        guard count > 0 else { return nil }
        let i = probe(scope: scope, run: run)
        return scopes[i] == 0 ? nil : starts[i]
    }

    /// The start filed for the block; when it has none, files `start` for it and returns that.
    mutating func findOrInsert(scope: UInt, run: Int64, start: Int) -> Int {
        precondition(scope != 0, "a block's scope has an address")
        if (count + 1) * 4 > scopes.count * 3 { grow(toHold: count + 1) }
        let i = probe(scope: scope, run: run)
        if scopes[i] != 0 { return starts[i] }
        file(scope: scope, run: run, start: start, at: i)
        count += 1
        return start
    }

    /// Room for `n` blocks in all without growing.
    mutating func reserveCapacity(_ n: Int) {
        if n * 4 > scopes.count * 3 { grow(toHold: n) }
    }

    /// The bucket holding the block, or the empty one where it belongs. The table is never full.
    private func probe(scope: UInt, run: Int64) -> Int {
        let mask = scopes.count - 1
        var i = bucket(scope: scope, run: run)
        while scopes[i] != 0 && !(scopes[i] == scope && runs[i] == run) { i = (i + 1) & mask }
        return i
    }

    private func bucket(scope: UInt, run: Int64) -> Int {
        // Fibonacci hashing: the high bits of the product depend on all bits of the key.
        let mixed = (scope ^ UInt(bitPattern: Int(truncatingIfNeeded: run)) &* 0xD6E8_FEB8_6659_FD93) &* 0x9E37_79B9_7F4A_7C15
        return shift >= 64 ? 0 : Int(truncatingIfNeeded: mixed >> UInt(shift))
    }

    private mutating func file(scope: UInt, run: Int64, start: Int, at i: Int) {
        scopes[i] = scope
        runs[i] = run
        starts[i] = start
    }

    /// Rehashes into a power-of-two capacity with room for `n` at most three quarters full, as
    /// `Dictionary` keeps its tables: probes stay short, and a registry of 100,000 objects takes no
    /// more memory for its blocks than the dictionary did (half full took 8 more bytes per object).
    private mutating func grow(toHold n: Int) {
        var capacity = 16
        while capacity * 3 < n * 4 { capacity *= 2 }
        let (oldScopes, oldRuns, oldStarts) = (scopes, runs, starts)
        scopes = [UInt](repeating: 0, count: capacity)
        runs = [Int64](repeating: 0, count: capacity)
        starts = [Int](repeating: 0, count: capacity)
        shift = 64 - capacity.trailingZeroBitCount
        // The old keys are distinct, so each probe ends at an empty bucket.
        for j in oldScopes.indices where oldScopes[j] != 0 {
            file(scope: oldScopes[j], run: oldRuns[j], start: oldStarts[j], at: probe(scope: oldScopes[j], run: oldRuns[j]))
        }
    }
}
