import PropertyBased
import Testing

@testable import GranaryStorage

/// The tree tests' generator is the package's seeded one (TemporaryDirectory.swift).
typealias SplitMix64 = SeededGenerator

/// The plain model the tree is compared with.
private struct Model {
    var entries: [[UInt8]: [UInt8]] = [:]

    var sorted: [Entry] {
        entries.map { Entry(key: $0.key, value: $0.value) }.sorted { $0.key.lexicographicallyPrecedes($1.key) }
    }
}

private struct Entry: Equatable, CustomStringConvertible {
    var key: [UInt8]
    var value: [UInt8]
    var description: String { "\(key)=\(value.count)B" }
}

private func contents(of tree: ByteTree, from lower: ByteTree.Bound? = nil, to upper: ByteTree.Bound? = nil, reverse: Bool = false) -> [Entry] {
    var result: [Entry] = []
    tree.scan(from: lower, to: upper, reverse: reverse) { key, value in
        result.append(Entry(key: Array(key), value: Array(value)))
        return true
    }
    return result
}

private func expectTree(_ tree: ByteTree, matches model: Model, _ step: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    try tree.checkInvariants()
    #expect(tree.count == model.entries.count, "count after \(step)", sourceLocation: sourceLocation)
    let actual = contents(of: tree)
    #expect(actual == model.sorted, "contents after \(step)", sourceLocation: sourceLocation)
}

private func key(_ n: Int) -> [UInt8] { [UInt8(n >> 8), UInt8(n & 0xFF)] }

private func allNodes(_ tree: ByteTree) -> [ObjectIdentifier] {
    var result: [ObjectIdentifier] = []
    func visit(_ node: ByteTree.Node, _ level: Int) {
        result.append(ObjectIdentifier(node))
        if level > 0 { for child in (node as! ByteTree.Inner).children { visit(child, level - 1) } }
    }
    if let root = tree.root { visit(root, tree.height) }
    return result
}

@Suite struct ByteTreeTests {
    // MARK: Random sequences against a dictionary

    /// Keys from a small alphabet rich in 0x00/0xFF and in prefixes of each other; values mostly small,
    /// some heavier than the tiny leaves' inline limit, a few larger than a whole leaf.
    private static func randomKey(_ rng: inout SplitMix64) -> [UInt8] {
        let alphabet: [UInt8] = [0x00, 0x01, 0x7F, 0x80, 0xFE, 0xFF]
        return (0..<Int.random(in: 0...8, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }
    }

    private static func randomValue(_ rng: inout SplitMix64) -> [UInt8] {
        let roll = Int.random(in: 0..<100, using: &rng)
        let length = roll < 85 ? Int.random(in: 0...20, using: &rng) : roll < 97 ? Int.random(in: 21...90, using: &rng) : Int.random(in: 200...3000, using: &rng)
        return (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    @Test(arguments: [(64, 4, 1), (128, 5, 2), (256, 4, 3), (512, 5, 4), (200, 6, 5)])
    func randomOperationsMatchADictionary(leafBytes: Int, fanout: Int, seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        var tree = ByteTree(leafBytes: leafBytes, fanout: fanout)
        var model = Model()
        var growing = true
        var maxDepth = 0
        var emptiedAfterGrowth = false
        for step in 0..<3000 {
            if model.entries.count > 200 { growing = false }
            if model.entries.isEmpty && !growing {
                emptiedAfterGrowth = true
                growing = true
            }
            let roll = Int.random(in: 0..<100, using: &rng)
            let existing = model.entries.keys.randomElement(using: &rng)
            let description: String
            if roll < (growing ? 80 : 25) {
                let k = roll % 3 == 0 && existing != nil ? existing! : Self.randomKey(&rng)
                let v = Self.randomValue(&rng)
                let isNew = model.entries.updateValue(v, forKey: k) == nil
                #expect(tree.insert(key: k, value: v) == isNew)
                description = "step \(step): insert \(k) (\(v.count) bytes)"
            } else if let k = existing, roll < 95 {
                model.entries[k] = nil
                let removed = tree.remove(key: k)
                #expect(removed)
                description = "step \(step): remove \(k)"
            } else {
                let k = Self.randomKey(&rng)
                let wasPresent = model.entries.removeValue(forKey: k) != nil
                #expect(tree.remove(key: k) == wasPresent)
                description = "step \(step): remove maybe-missing \(k)"
            }
            try expectTree(tree, matches: model, description)
            let probe = Self.randomKey(&rng)
            #expect(tree.value(forKey: probe) == model.entries[probe], "lookup after \(description)")
            #expect(tree.contains(probe) == (model.entries[probe] != nil))
            maxDepth = max(maxDepth, tree.depth)
        }
        #expect(maxDepth >= 3, "the sequence should have grown a tree of several levels")
        #expect(emptiedAfterGrowth, "the sequence should have shrunk the tree back to empty")
    }

    @Test func shrinkingPropertySequencesMatchADictionary() async {
        // Each operation is a number: bits 0-5 pick one of 64 keys, bit 6 chooses remove over insert,
        // bits 7-11 the value length.
        await propertyCheck(count: 60, input: Gen.int(in: 0...4095).array(of: 1...400)) { operations in
            var tree = ByteTree(leafBytes: 64, fanout: 4)
            var model = Model()
            for op in operations {
                let k: [UInt8] = op & 1 == 0 ? [UInt8(op & 63)] : [UInt8(op & 63), 0]
                if op & 64 != 0 {
                    #expect(tree.remove(key: k) == (model.entries.removeValue(forKey: k) != nil))
                } else {
                    let v = [UInt8](repeating: UInt8(truncatingIfNeeded: op), count: (op >> 7) & 31)
                    #expect(tree.insert(key: k, value: v) == (model.entries.updateValue(v, forKey: k) == nil))
                }
                #expect(throws: Never.self) { try expectTree(tree, matches: model, "op \(op)") }
            }
        }
    }

    // MARK: Splits and merges at node boundaries

    /// With 1-byte keys and 16-byte values every entry is 19 bytes and weighs 27 (with its 8-byte slot).
    private static let value16 = [UInt8](repeating: 7, count: 16)

    @Test func leafSplitsExactlyWhenAnInsertWouldExceedTheBudget() throws {
        var tree = ByteTree(leafBytes: 256, fanout: 4)
        for k in stride(from: 0, through: 16, by: 2) { tree.insert(key: [UInt8(k)], value: Self.value16) }
        #expect(tree.depth == 1)
        #expect((tree.root as! ByteTree.Leaf).weight == 9 * 27)  // 243: one more entry would be 270
        tree.insert(key: [5], value: Self.value16)
        try tree.checkInvariants()
        #expect(tree.depth == 2)
        let root = try #require(tree.root as? ByteTree.Inner)
        #expect(root.children.count == 2)
        #expect(root.leaf(0).count == 5 && root.leaf(1).count == 5, "a middle insert splits evenly by weight")
        #expect(root.separators == [[8]], "the separator is the shortest key above 6 and not above 8")

        // A leaf filled to exactly its budget does not split: 8 entries of 32 bytes.
        var exact = ByteTree(leafBytes: 256, fanout: 4)
        let value21 = [UInt8](repeating: 1, count: 21)
        for k in 0..<8 { exact.insert(key: [UInt8(k)], value: value21) }
        #expect(exact.depth == 1 && (exact.root as! ByteTree.Leaf).weight == 256)
        exact.insert(key: [8], value: value21)
        #expect(exact.depth == 2)
        try exact.checkInvariants()
    }

    @Test func appendingSplitLeavesTheLeftLeafFullAndExactlySized() throws {
        var tree = ByteTree(leafBytes: 256, fanout: 4)
        for k in 0..<10 { tree.insert(key: [UInt8(k)], value: Self.value16) }
        try tree.checkInvariants()
        let root = try #require(tree.root as? ByteTree.Inner)
        // The right leaf starts with the fewest entries reaching a quarter of the budget (3 × 27 ≥ 64).
        #expect(root.leaf(0).count == 7 && root.leaf(1).count == 3)
        #expect(root.leaf(0).arena.capacity < 7 * 19 + 32, "the finished left leaf keeps no spare arena")

        // Descending inserts mirror it.
        var descending = ByteTree(leafBytes: 256, fanout: 4)
        for k in (0..<10).reversed() { descending.insert(key: [UInt8(k)], value: Self.value16) }
        let droot = try #require(descending.root as? ByteTree.Inner)
        #expect(droot.leaf(0).count == 3 && droot.leaf(1).count == 7)
        try descending.checkInvariants()
    }

    @Test func underfullLeafMergesWithASiblingThatHasRoom() throws {
        var tree = ByteTree(leafBytes: 256, fanout: 4)
        for k in stride(from: 0, through: 16, by: 2) { tree.insert(key: [UInt8(k)], value: Self.value16) }
        tree.insert(key: [5], value: Self.value16)  // leaves of 5 + 5 entries, 135 bytes each
        tree.remove(key: [16])  // 108
        tree.remove(key: [14])  // 81: still at least 64
        #expect(tree.depth == 2)
        tree.remove(key: [12])  // 54 < 64, and 135 + 54 fits in 256: merge, and the root gives way
        #expect(tree.depth == 1)
        #expect(tree.count == 7)
        try tree.checkInvariants()
    }

    @Test func underfullLeafBorrowsFromASiblingTooFullToMerge() throws {
        var tree = ByteTree(leafBytes: 256, fanout: 4)
        for k in 0..<10 { tree.insert(key: [UInt8(k)], value: Self.value16) }  // 7 + 3 entries
        tree.insert(key: [6, 1], value: Self.value16)  // 2-byte keys weigh 28: left leaf 217
        tree.insert(key: [6, 2], value: Self.value16)  // 245
        var root = try #require(tree.root as? ByteTree.Inner)
        #expect(root.leaf(0).weight == 245 && root.leaf(1).weight == 81)
        tree.remove(key: [9])  // right leaf 54 < 64, and 245 + 54 > 256: even the two out
        try tree.checkInvariants()
        root = try #require(tree.root as? ByteTree.Inner)
        #expect(root.children.count == 2)
        let (left, right) = (root.leaf(0).weight, root.leaf(1).weight)
        #expect(left + right == 299 && abs(left - right) <= 28, "weights \(left) and \(right) should be even")
        #expect(contents(of: tree).map(\.key) == [[0], [1], [2], [3], [4], [5], [6], [6, 1], [6, 2], [7], [8]])
    }

    @Test func rootGrowsThenCollapsesToEmpty() throws {
        var tree = ByteTree(leafBytes: 64, fanout: 4)
        var rng = SplitMix64(seed: 42)
        var depths: [Int] = []
        for n in (0..<600).shuffled(using: &rng) {
            tree.insert(key: key(n), value: [UInt8(n & 0xFF)])
            if depths.last != tree.depth { depths.append(tree.depth) }
        }
        #expect(depths == Array(1...depths.count), "the tree grows one level at a time, at the root")
        #expect(tree.depth >= 5)
        try tree.checkInvariants()
        var previousDepth = tree.depth
        for (i, n) in (0..<600).shuffled(using: &rng).enumerated() {
            let removed = tree.remove(key: key(n))
            #expect(removed)
            #expect(tree.depth <= previousDepth)
            previousDepth = tree.depth
            if i % 7 == 0 { try tree.checkInvariants() }
        }
        #expect(tree.count == 0 && tree.depth == 0 && tree.root == nil)
        #expect(tree.memoryFootprint == 0)
        try tree.checkInvariants()
        let removedFromEmpty = tree.remove(key: key(1))
        #expect(!removedFromEmpty)
        tree.insert(key: key(1), value: [1])
        #expect(tree.value(forKey: key(1)) == [1] && tree.count == 1)
    }

    @Test func keysAndValuesLargerThanALeafWork() throws {
        var tree = ByteTree(leafBytes: 128, fanout: 4)
        var model = Model()
        let big = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let bigKey = [UInt8](repeating: 0x42, count: 500)
        func set(_ k: [UInt8], _ v: [UInt8]) throws {
            tree.insert(key: k, value: v)
            model.entries[k] = v
            try expectTree(tree, matches: model, "set \(k.count)-byte key to \(v.count) bytes")
        }
        try set([1], big)
        #expect((tree.root as! ByteTree.Leaf).large.count == 1, "a value larger than the leaf lives out of line")
        try set(bigKey, big)
        try set(bigKey + [0], [1, 2, 3])
        for k in 0..<40 { try set(key(k), [UInt8(k)]) }
        try set([1], [9])  // big → small
        try set(key(5), big)  // small → big
        try set(key(6), big + [1])
        #expect(tree.value(forKey: key(5)) == big)
        #expect(tree.value(forKey: bigKey) == big)
        for k in [key(5), bigKey, [1], key(6)] {
            tree.remove(key: k)
            model.entries[k] = nil
            try expectTree(tree, matches: model, "remove \(k.count)-byte key")
        }
    }

    @Test func sameSizeUpdatesOverwriteInPlaceAndOtherUpdatesCompact() throws {
        var tree = ByteTree(leafBytes: 512, fanout: 4)
        for k in 0..<5 { tree.insert(key: [UInt8(k)], value: [0, 0, 0, 0]) }
        let leaf = try #require(tree.root as? ByteTree.Leaf)
        let arenaCount = leaf.arena.count
        let isNew = tree.insert(key: [2], value: [1, 2, 3, 4])
        #expect(!isNew)
        #expect(leaf.arena.count == arenaCount && leaf.deadBytes == 0, "a same-size update writes in place")
        for round in 0..<50 {
            tree.insert(key: [2], value: [UInt8](repeating: UInt8(round), count: round % 2 == 0 ? 30 : 10))
            try tree.checkInvariants()  // includes: dead bytes never exceed half the arena
        }
        #expect(tree.value(forKey: [2]) == [UInt8](repeating: 49, count: 10))
    }

    // MARK: Lookups in full-size leaves

    /// Default-sized leaves hold hundreds of entries, where lookups start with an interpolation probe;
    /// check it against keys that are dense, sparse, or strings sharing long prefixes, and against
    /// absent neighbours, truncations and extensions of every key.
    @Test(arguments: ["dense", "sparse", "strings", "mixed lengths"])
    func lookupsInFullSizeLeavesFindEveryKeyAndNothingElse(population: String) throws {
        var rng = SplitMix64(seed: 17)
        var keys = Set<[UInt8]>()
        while keys.count < 4000 {
            switch population {
            case "dense": keys.insert(IndexKey.primaryKey(Int64(keys.count) - 2000))
            case "sparse": keys.insert(IndexKey.primaryKey(Int64.random(in: .min ... .max, using: &rng) >> Int.random(in: 0...60, using: &rng)))
            case "strings":
                var k = Array("customer/".utf8) + [UInt8.random(in: 0...3, using: &rng)]
                k += (0..<Int.random(in: 0...12, using: &rng)).map { _ in UInt8.random(in: 0x61...0x64, using: &rng) }
                keys.insert(k)
            default: keys.insert((0..<Int.random(in: 0...10, using: &rng)).map { _ in [0x00, 0x10, 0xFF].randomElement(using: &rng)! })
            }
        }
        var tree = ByteTree()
        for k in keys.shuffled(using: &rng) { tree.insert(key: k, value: k.reversed()) }
        var builder = ByteTree.Builder()
        for k in keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) { try builder.append(key: k, value: k.reversed()) }
        let built = builder.finish()
        for t in [tree, built] {
            try t.checkInvariants()
            for k in keys {
                #expect(t.value(forKey: k) == k.reversed())
                var probes: [[UInt8]] = [k + [0], k + [0xFF], Array(k.dropLast())]
                if let last = k.last {
                    probes.append(k.dropLast() + [last &+ 1])
                    probes.append(k.dropLast() + [last &- 1])
                }
                for probe in probes { #expect(t.contains(probe) == keys.contains(probe), "probe \(probe)") }
            }
        }
    }

    /// The staged lookup of many keys answers as one lookup per key does, in the order asked, for
    /// trees of one leaf and of many levels, groups that end mid-way, repeated and absent keys.
    @Test func lookingUpManyKeysAtOnceMatchesALookupPerKey() async {
        await propertyCheck(count: 80, input: Gen.int(in: 0...3000), Gen.int(in: -50...3100).array(of: 0...70), Gen.int(in: 0...2)) { population, probes, shape in
            let layouts = [(leafBytes: 8192, fanout: 96), (leafBytes: 128, fanout: 4), (leafBytes: 512, fanout: 8)]
            var tree = ByteTree(leafBytes: layouts[shape].leafBytes, fanout: layouts[shape].fanout)
            // Every other key present, so that half of the probes inside the range miss.
            for k in stride(from: 0, to: population, by: 2) {
                tree.insert(key: IndexKey.primaryKey(Int64(k)), value: Array("row \(k)".utf8))
            }
            let keys = probes.flatMap { IndexKey.primaryKey(Int64($0)) }
            var answers: [(Int, [UInt8]?)] = []
            keys.withUnsafeBytes { raw in
                tree.withValues(forKeys: raw, width: IndexKey.primaryKeyLength) { i, value in answers.append((i, value.map { Array($0) })) }
            }
            #expect(answers.map(\.0) == Array(probes.indices))
            for (i, probe) in probes.enumerated() {
                #expect(answers[i].1 == tree.value(forKey: IndexKey.primaryKey(Int64(probe))), "key \(probe) of \(population)")
            }
        }
    }

    // MARK: Scans

    @Test func scanHonoursEveryBoundCombination() throws {
        var tree = ByteTree(leafBytes: 64, fanout: 4)
        var all: [[UInt8]] = []
        for n in stride(from: 0, to: 400, by: 2) {
            tree.insert(key: key(n), value: [UInt8(n & 0xFF)])
            all.append(key(n))
        }
        #expect(tree.depth >= 3)
        let candidates: [[UInt8]?] = [nil, [], [0], key(0), key(100), key(101), key(398), key(399), [0x01], [0x01, 0x00, 0x00], [0xFF, 0xFF, 0xFF]]
        func satisfies(_ k: [UInt8], lower: ByteTree.Bound?, upper: ByteTree.Bound?) -> Bool {
            if let lower {
                if k.lexicographicallyPrecedes(lower.key) || (!lower.isInclusive && k == lower.key) { return false }
            }
            if let upper {
                if upper.key.lexicographicallyPrecedes(k) || (!upper.isInclusive && k == upper.key) { return false }
            }
            return true
        }
        var combinations = 0
        for lowerKey in candidates {
            for lowerInclusive in [true, false] {
                let lower = lowerKey.map { ByteTree.Bound(key: $0, isInclusive: lowerInclusive) }
                for upperKey in candidates {
                    for upperInclusive in [true, false] {
                        let upper = upperKey.map { ByteTree.Bound(key: $0, isInclusive: upperInclusive) }
                        let expected = all.filter { satisfies($0, lower: lower, upper: upper) }
                        #expect(contents(of: tree, from: lower, to: upper).map(\.key) == expected, "\(String(describing: lower))...\(String(describing: upper))")
                        #expect(contents(of: tree, from: lower, to: upper, reverse: true).map(\.key) == expected.reversed())
                        combinations += 1
                    }
                }
            }
        }
        #expect(combinations == 22 * 22)
    }

    @Test func scanStopsWhenTheClosureReturnsFalse() {
        var tree = ByteTree(leafBytes: 64, fanout: 4)
        for n in 0..<100 { tree.insert(key: key(n), value: []) }
        for reverse in [false, true] {
            var seen: [[UInt8]] = []
            tree.scan(from: .exclusive(key(10)), reverse: reverse) { k, _ in
                seen.append(Array(k))
                return seen.count < 5
            }
            #expect(seen == (reverse ? (95..<100).reversed().map(key) : (11..<16).map(key)))
        }
    }

    @Test func prefixSuccessorBoundsAPrefixScan() {
        #expect(ByteTree.prefixSuccessor([]) == nil)
        #expect(ByteTree.prefixSuccessor([0xFF]) == nil)
        #expect(ByteTree.prefixSuccessor([0xFF, 0xFF, 0xFF]) == nil)
        #expect(ByteTree.prefixSuccessor([0x00]) == [0x01])
        #expect(ByteTree.prefixSuccessor([0x01, 0x02]) == [0x01, 0x03])
        #expect(ByteTree.prefixSuccessor([0x01, 0xFF]) == [0x02])
        #expect(ByteTree.prefixSuccessor([0x01, 0xFE, 0xFF, 0xFF]) == [0x01, 0xFF])

        var tree = ByteTree(leafBytes: 64, fanout: 4)
        var rng = SplitMix64(seed: 7)
        var keys: Set<[UInt8]> = []
        for _ in 0..<500 {
            let k = Self.randomKey(&rng)
            keys.insert(k)
            tree.insert(key: k, value: [])
        }
        for prefix in [[0x00], [0x01, 0xFF], [0xFF], [0xFF, 0xFF], [0x7F, 0x80, 0x00], [0x80]] as [[UInt8]] {
            let expected = keys.filter { $0.starts(with: prefix) }.sorted { $0.lexicographicallyPrecedes($1) }
            let upper = ByteTree.prefixSuccessor(prefix).map { ByteTree.Bound.exclusive($0) }
            #expect(contents(of: tree, from: .inclusive(prefix), to: upper).map(\.key) == expected, "prefix \(prefix)")
        }
    }

    // MARK: Bulk loading

    @Test(arguments: [0, 1, 2, 7, 100, 3000])
    func builderMatchesIncrementalInserts(count: Int) throws {
        var rng = SplitMix64(seed: UInt64(count) + 11)
        var model = Model()
        while model.entries.count < count { model.entries[Self.randomKey(&rng) + key(model.entries.count)] = Self.randomValue(&rng) }
        let sorted = model.sorted
        for (leafBytes, fanout, fill) in [(64, 4, 0.9), (128, 5, 1.0), (256, 4, 0.5), (8192, 96, 0.9)] {
            var builder = ByteTree.Builder(leafBytes: leafBytes, fanout: fanout, fillFactor: fill)
            var incremental = ByteTree(leafBytes: leafBytes, fanout: fanout)
            for entry in sorted {
                try builder.append(key: entry.key, value: entry.value)
                incremental.insert(key: entry.key, value: entry.value)
            }
            var built = builder.finish()
            try expectTree(built, matches: model, "bulk load of \(count) into \(leafBytes)/\(fanout)/\(fill)")
            #expect(contents(of: built) == contents(of: incremental))
            // A loaded tree with exactly sized arenas keeps working under mutation.
            var mutated = model
            for entry in sorted.prefix(50) {
                built.insert(key: entry.key + [0], value: entry.value)
                mutated.entries[entry.key + [0]] = entry.value
            }
            for entry in sorted.suffix(50) {
                built.remove(key: entry.key)
                mutated.entries[entry.key] = nil
            }
            try expectTree(built, matches: mutated, "mutating a bulk-loaded tree")
        }
    }

    @Test func builderRejectsKeysOutOfOrder() throws {
        var builder = ByteTree.Builder(leafBytes: 64, fanout: 4)
        try builder.append(key: [1, 0], value: [])
        #expect(throws: StorageError.self) { try builder.append(key: [1], value: []) }
        #expect(throws: StorageError.self) { try builder.append(key: [1, 0], value: []) }
        do {
            try builder.append(key: [0], value: [])
            Issue.record("a smaller key was accepted")
        } catch let StorageError.invalidArgument(message) {
            #expect(message.contains("strictly increasing"))
        }
        try builder.append(key: [1, 0, 0], value: [5])
        let tree = builder.finish()
        #expect(contents(of: tree) == [Entry(key: [1, 0], value: []), Entry(key: [1, 0, 0], value: [5])])
    }

    @Test func builderFillsLeavesToTheFillFactor() throws {
        var builder = ByteTree.Builder(leafBytes: 1000, fanout: 4, fillFactor: 0.9)
        for n in 0..<1000 { try builder.append(key: key(n), value: Self.value16) }
        let tree = builder.finish()
        try tree.checkInvariants()
        // 2-byte keys: 20-byte entries weighing 28; 900 / 28 → 32 per leaf.
        var leafCounts: [Int] = []
        func visit(_ node: ByteTree.Node, _ level: Int) {
            if level == 0 { leafCounts.append((node as! ByteTree.Leaf).count) } else { (node as! ByteTree.Inner).children.forEach { visit($0, level - 1) } }
        }
        visit(tree.root!, tree.height)
        #expect(leafCounts.dropLast(2).allSatisfy { $0 == 32 }, "\(leafCounts)")
    }

    // MARK: Copy on write

    @Test func aCopyIsASnapshotUnaffectedByLaterMutations() throws {
        var rng = SplitMix64(seed: 99)
        var tree = ByteTree(leafBytes: 128, fanout: 4)
        var model = Model()
        for _ in 0..<800 {
            let k = Self.randomKey(&rng) + key(Int.random(in: 0..<5000, using: &rng))
            let v = Self.randomValue(&rng)
            tree.insert(key: k, value: v)
            model.entries[k] = v
        }
        var snapshots: [(ByteTree, [Entry])] = [(tree, model.sorted)]
        for step in 0..<1500 {
            let k = model.entries.keys.randomElement(using: &rng)!
            switch Int.random(in: 0..<3, using: &rng) {
            case 0: tree.remove(key: k); model.entries[k] = nil
            case 1: let v = Self.randomValue(&rng); tree.insert(key: k, value: v); model.entries[k] = v
            default:
                let k2 = Self.randomKey(&rng) + key(Int.random(in: 0..<5000, using: &rng))
                let v = Self.randomValue(&rng)
                tree.insert(key: k2, value: v)
                model.entries[k2] = v
            }
            if step % 300 == 0 { snapshots.append((tree, model.sorted)) }
        }
        try expectTree(tree, matches: model, "mutations after snapshots")
        for (i, (snapshot, expected)) in snapshots.enumerated() {
            try snapshot.checkInvariants()
            #expect(contents(of: snapshot) == expected, "snapshot \(i) changed")
            #expect(snapshot.count == expected.count)
        }
        // The other way round: writing to a snapshot leaves the tree alone.
        var first = snapshots[0].0
        for entry in snapshots[0].1.prefix(200) { first.remove(key: entry.key) }
        try expectTree(tree, matches: model, "mutating a snapshot")
    }

    @Test func mutatingAUniquelyHeldTreeCopiesNoNode() throws {
        var tree = ByteTree(leafBytes: 128, fanout: 4)
        for n in 0..<300 { tree.insert(key: key(n * 2), value: [1, 2, 3]) }
        #expect(tree.depth >= 3)
        let nodes = allNodes(tree)
        for n in 0..<300 { tree.insert(key: key(n * 2), value: [4, 5, 6]) }  // same-size updates
        #expect(allNodes(tree) == nodes, "no node was replaced")

        let rootID = ObjectIdentifier(tree.root!)
        let depth = tree.depth
        for n in 0..<200 {
            tree.insert(key: key(n * 2 + 1), value: [7])
            if tree.depth == depth { #expect(ObjectIdentifier(tree.root!) == rootID) }
        }

        // With a snapshot alive the first write copies exactly the path it touches.
        let snapshot = tree
        let before = Set(allNodes(snapshot))
        tree.insert(key: key(0), value: [9, 9, 9])
        let after = allNodes(tree)
        #expect(ObjectIdentifier(tree.root!) != ObjectIdentifier(snapshot.root!))
        #expect(after.filter { !before.contains($0) }.count == tree.depth, "one new node per level")
        #expect(snapshot.value(forKey: key(0)) == [4, 5, 6])
        #expect(tree.value(forKey: key(0)) == [9, 9, 9])
    }

    @Test func removingAMissingKeyFromASharedTreeCopiesNothing() {
        var tree = ByteTree(leafBytes: 128, fanout: 4)
        for n in 0..<300 { tree.insert(key: key(n * 2), value: [1]) }
        let snapshot = tree
        let removed = tree.remove(key: key(3))
        #expect(!removed)
        #expect(ObjectIdentifier(tree.root!) == ObjectIdentifier(snapshot.root!))
    }

    // MARK: Integrity checking

    private func expectCorruption(_ tree: ByteTree, mentioning phrase: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(sourceLocation: sourceLocation) {
            try tree.checkInvariants()
        } throws: { error in
            guard case StorageError.corruption(file: "index", offset: 0, let reason) = error else { return false }
            return reason.contains(phrase)
        }
    }

    private func twoLeafTree() -> ByteTree {
        var tree = ByteTree(leafBytes: 256, fanout: 4)
        for k in stride(from: 0, through: 18, by: 2) { tree.insert(key: [UInt8(k)], value: Self.value16) }
        return tree
    }

    @Test func checkInvariantsNamesTheDamage() throws {
        let healthy = twoLeafTree()
        try healthy.checkInvariants()
        let layout = healthy.layout
        func damaged(_ damage: (ByteTree.Inner) -> Void) -> ByteTree {
            var tree = twoLeafTree()
            tree.insert(key: [1], value: [])  // a private copy of every node on the way to the first leaf
            let root = tree.root as! ByteTree.Inner
            root.children[1] = ByteTree.copy(root.children[1], level: 0, layout: layout)
            damage(root)
            return tree
        }
        expectCorruption(damaged { $0.leaf(0).slots.swapAt(0, 1) }, mentioning: "is not above the previous key")
        expectCorruption(damaged { $0.separators[0] = [0] }, mentioning: "not below the upper bound")
        expectCorruption(damaged { $0.separators[0] = [0xFF] }, mentioning: "below the lower bound")
        expectCorruption(damaged { $0.leaf(1).deadBytes += 1 }, mentioning: "live entries take")
        expectCorruption(damaged { $0.leaf(1).slots[0] ^= 1 << 40 }, mentioning: "head does not match")
        expectCorruption(damaged { $0.leaf(1).slots[0] |= UInt64(ByteTree.Layout.largeFlag) }, mentioning: "large entry")
        expectCorruption(damaged { $0.leaf(1).arena[0] = 0xFF }, mentioning: "malformed")

        let root = healthy.root as! ByteTree.Inner
        expectCorruption(ByteTree(layout: layout, root: root, height: 1, count: healthy.count + 1), mentioning: "leaves hold")
        expectCorruption(ByteTree(layout: layout, root: root, height: 2, count: healthy.count), mentioning: "is a leaf at depth")

        var single = ByteTree(leafBytes: 256, fanout: 4)
        single.insert(key: [100], value: [])
        let tooLight = ByteTree.Inner(separators: [[100]], children: [root.leaf(0), single.root!])
        expectCorruption(ByteTree(layout: layout, root: tooLight, height: 1, count: root.leaf(0).count + 1), mentioning: "underfull")
        let lonely = ByteTree.Inner(separators: [], children: [root.leaf(0)])
        expectCorruption(ByteTree(layout: layout, root: lonely, height: 1, count: root.leaf(0).count), mentioning: "1 child")
    }

    // MARK: Memory

    @Test func memoryFootprintStaysWithinTwiceTheEncodedRows() throws {
        // 8-byte primary keys and 40-byte rows, loaded three ways.
        let n = 20_000
        let value = [UInt8](repeating: 0x5A, count: 40)
        var builder = ByteTree.Builder()
        var sequential = ByteTree()
        var random = ByteTree()
        var rng = SplitMix64(seed: 5)
        for k in 0..<Int64(n) {
            try builder.append(key: IndexKey.primaryKey(k), value: value)
            sequential.insert(key: IndexKey.primaryKey(k), value: value)
        }
        for k in (0..<Int64(n)).shuffled(using: &rng) { random.insert(key: IndexKey.primaryKey(k), value: value) }
        let built = builder.finish()
        for (name, tree) in [("bulk", built), ("sequential", sequential), ("random", random)] {
            try tree.checkInvariants()
            let perEntry = Double(tree.memoryFootprint) / Double(n)
            #expect(perEntry < 80, "\(name): \(perEntry) bytes per 48-byte entry")
            #expect(perEntry > 58, "\(name): \(perEntry) is below the entry bytes themselves")
        }
    }
}
