// TEMPORARY stand-in for the real ByteTree (being written on branch `tree`); removed at merge.
import Foundation

@inline(__always) func memcmpLess(_ a: [UInt8], _ b: [UInt8]) -> Bool { a.lexicographicallyPrecedes(b) }

struct ByteTree: @unchecked Sendable {
    struct Bound { var key: [UInt8]; var isInclusive: Bool }
    private var keys: [[UInt8]] = []
    private var values: [[UInt8]] = []
    init(leafBytes: Int = 8192, fanout: Int = 96) {}
    var count: Int { keys.count }
    var depth: Int { 1 }
    var memoryFootprint: Int { keys.reduce(0) { $0 + $1.count + 48 } + values.reduce(0) { $0 + $1.count + 48 } }
    private func find(_ key: [UInt8]) -> (Int, Bool) {
        var lo = 0, hi = keys.count
        while lo < hi { let m = (lo + hi) / 2; if memcmpLess(keys[m], key) { lo = m + 1 } else { hi = m } }
        return (lo, lo < keys.count && keys[lo] == key)
    }
    func withValue<R>(forKey key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R? {
        let (i, found) = find(Array(key)); guard found else { return nil }
        return try values[i].withUnsafeBytes { try body($0) }
    }
    func value(forKey key: [UInt8]) -> [UInt8]? { let (i, f) = find(key); return f ? values[i] : nil }
    func contains(_ key: UnsafeRawBufferPointer) -> Bool { find(Array(key)).1 }
    func contains(_ key: [UInt8]) -> Bool { find(key).1 }
    @discardableResult mutating func insert(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> Bool {
        insert(key: Array(key), value: Array(value))
    }
    @discardableResult mutating func insert(key: [UInt8], value: [UInt8]) -> Bool {
        let (i, f) = find(key); if f { values[i] = value; return false }
        keys.insert(key, at: i); values.insert(value, at: i); return true
    }
    @discardableResult mutating func remove(key: UnsafeRawBufferPointer) -> Bool { remove(key: Array(key)) }
    @discardableResult mutating func remove(key: [UInt8]) -> Bool {
        let (i, f) = find(key); if !f { return false }
        keys.remove(at: i); values.remove(at: i); return true
    }
    func scan(from lower: Bound? = nil, to upper: Bound? = nil, reverse: Bool = false,
              _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool) rethrows {
        func ok(_ k: [UInt8]) -> Bool {
            if let l = lower { if memcmpLess(k, l.key) || (!l.isInclusive && k == l.key) { return false } }
            if let u = upper { if memcmpLess(u.key, k) || (!u.isInclusive && k == u.key) { return false } }
            return true
        }
        let idx = reverse ? Array(keys.indices.reversed()) : Array(keys.indices)
        for i in idx where ok(keys[i]) {
            let cont = try keys[i].withUnsafeBytes { k in try values[i].withUnsafeBytes { v in try body(k, v) } }
            if !cont { return }
        }
    }
    static func prefixSuccessor(_ prefix: [UInt8]) -> [UInt8]? {
        var p = prefix
        while let last = p.last { if last == 0xFF { p.removeLast() } else { p[p.count - 1] = last + 1; return p } }
        return nil
    }
    struct Builder {
        var tree = ByteTree()
        init(leafBytes: Int = 8192, fanout: Int = 96, fillFactor: Double = 0.9) {}
        mutating func append(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws {
            tree.keys.append(Array(key)); tree.values.append(Array(value))
        }
        mutating func append(key: [UInt8], value: [UInt8]) throws { tree.keys.append(key); tree.values.append(value) }
        consuming func finish() -> ByteTree { tree }
    }
    func checkInvariants() throws {}
}
