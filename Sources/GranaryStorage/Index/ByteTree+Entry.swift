// The tree's raw-pointer code lives here: the entry encoding, key comparison, out-of-line entries and the
// read-only view of a leaf that lookups and scans go through. Everything else works on these.

extension ByteTree {
    /// The encoding of one entry, `[varint keyLength][key][varint valueLength][value]`, with LEB128 varints
    /// as `ByteWriter` writes them, and the byte order keys are sorted by.
    enum Entry {
        static func varintSize(_ value: Int) -> Int {
            var v = UInt(value)
            var n = 1
            while v >= 0x80 {
                v >>= 7
                n += 1
            }
            return n
        }

        static func size(keyCount: Int, valueCount: Int) -> Int {
            varintSize(keyCount) + keyCount + varintSize(valueCount) + valueCount
        }

        /// Writes an entry at `p`, which must have room for `size(keyCount:valueCount:)` bytes.
        static func write(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, to p: UnsafeMutableRawPointer) {
            var i = writeVarint(key.count, to: p)
            if let k = key.baseAddress, key.count > 0 { (p + i).copyMemory(from: k, byteCount: key.count) }
            i += key.count
            i += writeVarint(value.count, to: p + i)
            if let v = value.baseAddress, value.count > 0 { (p + i).copyMemory(from: v, byteCount: value.count) }
        }

        /// Appends an entry to `arena`, whose capacity the caller has already made room in.
        static func append(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, to arena: inout [UInt8]) {
            appendVarint(key.count, to: &arena)
            arena.append(contentsOf: key)
            appendVarint(value.count, to: &arena)
            arena.append(contentsOf: value)
        }

        private static func appendVarint(_ value: Int, to bytes: inout [UInt8]) {
            var v = UInt(value)
            while v >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
                v >>= 7
            }
            bytes.append(UInt8(v))
        }

        private static func writeVarint(_ value: Int, to p: UnsafeMutableRawPointer) -> Int {
            var v = UInt(value)
            var i = 0
            while v >= 0x80 {
                p.storeBytes(of: UInt8(truncatingIfNeeded: v) | 0x80, toByteOffset: i, as: UInt8.self)
                v >>= 7
                i += 1
            }
            p.storeBytes(of: UInt8(v), toByteOffset: i, as: UInt8.self)
            return i + 1
        }

        /// Reads a varint at `p + offset` and advances `offset` past it. Entries are written by this file
        /// only, so the bytes are trusted.
        @inline(__always)
        static func readVarint(_ p: UnsafeRawPointer, _ offset: inout Int) -> Int {
            var byte = p.load(fromByteOffset: offset, as: UInt8.self)
            offset &+= 1
            if byte < 0x80 { return Int(byte) }
            var result = Int(byte & 0x7F)
            var shift = 7
            repeat {
                byte = p.load(fromByteOffset: offset, as: UInt8.self)
                offset &+= 1
                result |= Int(byte & 0x7F) << shift
                shift += 7
            } while byte >= 0x80
            return result
        }

        @inline(__always)
        static func key(at p: UnsafeRawPointer) -> UnsafeRawBufferPointer {
            var i = 0
            let n = readVarint(p, &i)
            return UnsafeRawBufferPointer(start: p + i, count: n)
        }

        /// The key and value of the entry at `p`, and its encoded size.
        @inline(__always)
        static func decode(at p: UnsafeRawPointer) -> (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, size: Int) {
            var i = 0
            let keyCount = readVarint(p, &i)
            let key = UnsafeRawBufferPointer(start: p + i, count: keyCount)
            i += keyCount
            let valueCount = readVarint(p, &i)
            let value = UnsafeRawBufferPointer(start: p + i, count: valueCount)
            return (key, value, i + valueCount)
        }

        /// Unsigned lexicographic comparison (`memcmp` order, a proper prefix first): negative, zero or
        /// positive. Compares eight bytes at a time as big-endian words, which for the common 8-byte
        /// primary keys is a single comparison.
        @inline(__always)
        static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
            let n = Swift.min(a.count, b.count)
            if n > 0 {
                let pa = a.baseAddress.unsafelyUnwrapped
                let pb = b.baseAddress.unsafelyUnwrapped
                var i = 0
                while i &+ 8 <= n {
                    let x = UInt64(bigEndian: pa.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                    let y = UInt64(bigEndian: pb.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                    if x != y { return x < y ? -1 : 1 }
                    i &+= 8
                }
                while i < n {
                    let x = pa.load(fromByteOffset: i, as: UInt8.self)
                    let y = pb.load(fromByteOffset: i, as: UInt8.self)
                    if x != y { return x < y ? -1 : 1 }
                    i &+= 1
                }
            }
            return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
        }

        /// The first `length` (at most 8) bytes of `key` as a big-endian integer, zero-padded when the key
        /// is shorter. If two such prefixes differ, the keys compare the same way; if equal, they may not be.
        @inline(__always)
        static func prefix(of key: UnsafeRawBufferPointer, length: Int) -> UInt64 {
            if length == 0 { return 0 }
            if key.count >= 8 {
                let word = UInt64(bigEndian: key.baseAddress.unsafelyUnwrapped.loadUnaligned(as: UInt64.self))
                return word & ~0 << (64 - 8 * length)
            }
            var result: UInt64 = 0
            for i in 0..<Swift.min(length, key.count) { result |= UInt64(key[i]) << (56 - 8 * i) }
            return result
        }

        /// The four bytes of `key` after its first `skip` as a big-endian integer, zero-padded; the same
        /// ordering property as `prefix(of:length:)`, for keys that share their first `skip` bytes.
        @inline(__always)
        static func head(of key: UnsafeRawBufferPointer, after skip: Int) -> UInt32 {
            let available = key.count - skip
            if available >= 4 {
                return UInt32(bigEndian: key.baseAddress.unsafelyUnwrapped.loadUnaligned(fromByteOffset: skip, as: UInt32.self))
            }
            var result: UInt32 = 0
            for i in 0..<Swift.max(0, available) { result |= UInt32(key[skip + i]) << (24 - 8 * i) }
            return result
        }

        /// Length of the common prefix of `a` and `b`, up to `limit`.
        static func commonPrefixLength(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer, limit: Int) -> Int {
            let n = Swift.min(limit, a.count, b.count)
            var i = 0
            while i < n && a[i] == b[i] { i += 1 }
            return i
        }

        static func compare(_ a: [UInt8], _ b: UnsafeRawBufferPointer) -> Int {
            a.withUnsafeBytes { compare($0, b) }
        }

        /// The shortest key `s` with `left < s <= right`, used as the separator between two nodes so that
        /// inner nodes hold short keys. Requires `left < right`.
        static func shortestSeparator(_ left: UnsafeRawBufferPointer, _ right: UnsafeRawBufferPointer) -> [UInt8] {
            var common = 0
            let n = Swift.min(left.count, right.count)
            while common < n && left[common] == right[common] { common += 1 }
            // `left < right`, so `right` is longer than the common prefix and its next byte is larger than
            // `left`'s (or `left` ends there).
            return Array(right[0...common])
        }
    }

    /// An entry too heavy for a leaf's arena, in its own allocation, encoded as in the arena.
    ///
    /// Immutable, so leaves of different versions share it freely; its bytes live as long as the object.
    final class LargeEntry {
        let bytes: UnsafeMutableRawPointer
        let size: Int

        init(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
            size = Entry.size(keyCount: key.count, valueCount: value.count)
            bytes = .allocate(byteCount: size, alignment: 8)
            Entry.write(key: key, value: value, to: bytes)
        }

        deinit { bytes.deallocate() }
    }
}

extension ByteTree.Leaf {
    /// Raw read access to a leaf, valid only inside `Leaf.withView`.
    struct View {
        /// `nil` only when the arena is empty, and then no slot points into it.
        let arena: UnsafeRawPointer?
        let slots: UnsafeBufferPointer<UInt64>
        let large: UnsafeBufferPointer<ByteTree.LargeEntry>
        let prefixLength: Int
        let prefix: UInt64
        let hintCount: Int
        let hintHeads: UInt64

        var count: Int { slots.count }

        @inline(__always)
        func location(_ slot: Int) -> UInt32 { UInt32(truncatingIfNeeded: slots[slot]) }

        @inline(__always)
        func isLarge(_ slot: Int) -> Bool { location(slot) & ByteTree.Layout.largeFlag != 0 }

        @inline(__always)
        func largeIndex(_ slot: Int) -> Int { Int(location(slot) & ~ByteTree.Layout.largeFlag) }

        /// Where the entry in `slot` (in key order) starts.
        @inline(__always)
        func entry(_ slot: Int) -> UnsafeRawPointer {
            let location = location(slot)
            if location & ByteTree.Layout.largeFlag == 0 { return arena.unsafelyUnwrapped + Int(location) }
            return UnsafeRawPointer(large[Int(location & ~ByteTree.Layout.largeFlag)].bytes)
        }

        @inline(__always)
        func key(_ slot: Int) -> UnsafeRawBufferPointer { ByteTree.Entry.key(at: entry(slot)) }

        func value(_ slot: Int) -> UnsafeRawBufferPointer { ByteTree.Entry.decode(at: entry(slot)).value }

        /// Encoded size of the entry in `slot`.
        func size(_ slot: Int) -> Int { ByteTree.Entry.decode(at: entry(slot)).size }

        /// What the entry in `slot` adds to the leaf's weight.
        func weight(_ slot: Int) -> Int {
            isLarge(slot) ? ByteTree.Layout.largeEntryWeight : size(slot) + ByteTree.Layout.slotWeight
        }

        /// Arena bytes taken by the inline entries in `range`.
        func arenaBytes(_ range: Range<Int>) -> Int {
            var total = 0
            for slot in range where !isLarge(slot) { total += size(slot) }
            return total
        }

        /// The first slot whose key is not less than `key`, and whether that key equals it.
        ///
        /// A key that doesn't start with the prefix all the leaf's keys share lies before or after all of
        /// them. Otherwise the search compares the 4-byte heads kept in the slots, which sit in a few cache
        /// lines, and reads an entry from the arena only when heads are equal. It starts with one
        /// interpolation probe between the first and last heads, then brackets the answer within 8 slots
        /// (one cache line) of it: for dense keys such as sequential primary keys that finds the slot
        /// with two or three cache misses where a plain binary search over a leaf takes five or six.
        /// Unevenly spread keys cost at most two probes more than a binary search.
        @inline(__always)
        func find(_ key: UnsafeRawBufferPointer) -> (slot: Int, found: Bool) {
            let keyPrefix = ByteTree.Entry.prefix(of: key, length: prefixLength)
            let keyHead = UInt64(ByteTree.Entry.head(of: key, after: Swift.min(prefixLength, key.count)))
            // The probe is computed from the hint alone, before anything is read from the slot array, so
            // that the processor can fetch its cache line in parallel with the array's header.
            let first = hintHeads >> 32
            let last = hintHeads & 0xFFFF_FFFF
            let guess = Self.interpolationGuess(keyHead: keyHead, hintCount: hintCount, hintHeads: hintHeads)

            let n = slots.count
            guard n > 0 else { return (0, false) }
            if keyPrefix != prefix { return keyPrefix < prefix ? (0, false) : (n, false) }
            if key.count < prefixLength { return (0, false) }  // a proper prefix of every key here

            @inline(__always) func compare(_ slot: Int) -> Int {
                let head = slots[slot] >> 32
                return head != keyHead ? (head < keyHead ? -1 : 1) : ByteTree.Entry.compare(self.key(slot), key)
            }

            var low = 0  // every slot below `low` holds a smaller key
            var high = n  // every slot from `high` on holds a larger key
            precondition(hintCount == n, "a leaf's search hint is out of date")
            if keyHead < first { return (0, false) }
            if keyHead > last { return (n, false) }
            if let guess {
                let c = compare(guess)
                if c == 0 { return (guess, true) }
                if c < 0 {
                    low = guess + 1
                    let probe = Swift.min(guess + 8, n - 1)
                    let d = compare(probe)
                    if d == 0 { return (probe, true) }
                    if d > 0 { high = probe } else { low = probe + 1 }
                } else {
                    high = guess
                    let probe = Swift.max(guess - 8, 0)
                    let d = compare(probe)
                    if d == 0 { return (probe, true) }
                    if d < 0 { low = probe + 1 } else { high = probe }
                }
            }
            while low < high {
                let mid = (low &+ high) >> 1
                let c = compare(mid)
                if c < 0 {
                    low = mid &+ 1
                } else if c > 0 {
                    high = mid
                } else {
                    return (mid, true)
                }
            }
            return (low, false)
        }

        /// The slot an interpolation between the leaf's first and last heads puts `keyHead` at, or `nil`
        /// when the leaf is too small or the head lies outside them. It needs only the leaf's hint, so a
        /// search (or `ByteTree.withValues`) can start loading that slot before anything else arrives.
        @inline(__always)
        static func interpolationGuess(keyHead: UInt64, hintCount: Int, hintHeads: UInt64) -> Int? {
            let first = hintHeads >> 32
            let last = hintHeads & 0xFFFF_FFFF
            guard hintCount > 16 && last > first && keyHead >= first && keyHead <= last else { return nil }
            return Int((keyHead - first) * UInt64(hintCount - 1) / (last - first))
        }
    }

    /// Runs `body` with raw access to this leaf's arrays, which must not change meanwhile.
    @inline(__always)
    func withView<R>(_ body: (View) throws -> R) rethrows -> R {
        try arena.withUnsafeBytes { a in
            try slots.withUnsafeBufferPointer { s in
                try large.withUnsafeBufferPointer { l in
                    try body(
                        View(
                            arena: a.baseAddress, slots: s, large: l, prefixLength: prefixLength, prefix: prefix,
                            hintCount: hintCount, hintHeads: hintHeads))
                }
            }
        }
    }
}
