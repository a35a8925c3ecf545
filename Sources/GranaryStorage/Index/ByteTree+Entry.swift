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
        /// `nil` only when the arena is empty, and then no offset points into it.
        let arena: UnsafeRawPointer?
        let offsets: UnsafeBufferPointer<UInt32>
        let large: UnsafeBufferPointer<ByteTree.LargeEntry>

        var count: Int { offsets.count }

        @inline(__always)
        func isLarge(_ slot: Int) -> Bool { offsets[slot] & ByteTree.Layout.largeFlag != 0 }

        @inline(__always)
        func largeIndex(_ slot: Int) -> Int { Int(offsets[slot] & ~ByteTree.Layout.largeFlag) }

        /// Where the entry in `slot` (in key order) starts.
        @inline(__always)
        func entry(_ slot: Int) -> UnsafeRawPointer {
            let offset = offsets[slot]
            if offset & ByteTree.Layout.largeFlag == 0 { return arena.unsafelyUnwrapped + Int(offset) }
            return UnsafeRawPointer(large[Int(offset & ~ByteTree.Layout.largeFlag)].bytes)
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
        @inline(__always)
        func find(_ key: UnsafeRawBufferPointer) -> (slot: Int, found: Bool) {
            var low = 0
            var high = offsets.count
            while low < high {
                let mid = (low &+ high) >> 1
                let c = ByteTree.Entry.compare(self.key(mid), key)
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
    }

    /// Runs `body` with raw access to this leaf's arrays, which must not change meanwhile.
    @inline(__always)
    func withView<R>(_ body: (View) throws -> R) rethrows -> R {
        try arena.withUnsafeBytes { a in
            try offsets.withUnsafeBufferPointer { o in
                try large.withUnsafeBufferPointer { l in
                    try body(View(arena: a.baseAddress, offsets: o, large: l))
                }
            }
        }
    }
}
