import GranaryStorage

/// The groups of a grouped fetch: each distinct combination of grouped values, numbered in the order
/// its first row was read.
///
/// Rows read still encoded (the usual case) are grouped by the bytes of their values, kept in one
/// buffer and found through an open-addressing table of cheap hashes (`EncodedValue.hashed(into:)`): a
/// row costs a hash of a few bytes and a comparison, and no allocation, where a `Value` key made a
/// `String` and hashed it with `Hasher` for every row. Decoded rows (a residual predicate, a key path
/// through a relationship) are grouped by their `Value`s. One table takes rows of one kind only.
struct GroupTable {
    /// How many values tell a group apart.
    let width: Int
    /// Each group's values, by group number.
    private(set) var keys: [[Value]] = []

    // Encoded rows: group g's values are `encodings[starts[g]..<starts[g + 1]]`.
    private var encodings: [UInt8] = []
    private var starts: [Int] = [0]
    private var hashes: [UInt64] = []
    /// Group numbers by hash position, -1 where free; a power of two, at most half full.
    private var table = [Int](repeating: -1, count: 64)

    // Decoded rows.
    private var byValue: [Value: Int] = [:]
    private var byValues: [[Value]: Int] = [:]

    /// A table of groups told apart by `width` values; with none, the one group every row falls in
    /// exists from the start, so that an aggregate over no rows still has its result.
    init(width: Int) {
        self.width = width
        if width == 0 { keys = [[]] }
    }

    var count: Int { keys.count }

    /// The number of the group of a row read encoded, whose grouped values are `values[i]` for `i` in
    /// `positions`; made if it is new.
    mutating func group(of values: [EncodedValue], at positions: [Int]) -> Int {
        var hash: UInt64 = 0x243F_6A88_85A3_08D3
        for i in positions { hash = values[i].hashed(into: hash) }
        let mask = table.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while case let found = table[slot], found >= 0 {
            if hashes[found] == hash && isKey(of: found, values, positions) { return found }
            slot = (slot + 1) & mask
        }
        let number = keys.count
        for i in positions { values[i].append(to: &encodings) }
        starts.append(encodings.count)
        hashes.append(hash)
        keys.append(positions.map { values[$0].value })
        table[slot] = number
        if keys.count * 2 > table.count { rehash() }
        return number
    }

    private func isKey(of group: Int, _ values: [EncodedValue], _ positions: [Int]) -> Bool {
        var offset = starts[group]
        for i in positions {
            guard values[i].isEncoded(in: encodings, at: offset) else { return false }
            offset += values[i].encodedCount
        }
        return offset == starts[group + 1]
    }

    private mutating func rehash() {
        table = [Int](repeating: -1, count: table.count * 2)
        let mask = table.count - 1
        for (group, hash) in hashes.enumerated() {
            var slot = Int(truncatingIfNeeded: hash) & mask
            while table[slot] >= 0 { slot = (slot + 1) & mask }
            table[slot] = group
        }
    }

    /// The number of the group of one grouped value of a decoded row (`width` 1), made if it is new.
    mutating func group(of value: Value) -> Int {
        if let found = byValue[value] { return found }
        let number = keys.count
        byValue[value] = number
        keys.append([value])
        return number
    }

    /// The number of the group of several grouped values of a decoded row, made if it is new.
    mutating func group(of values: [Value]) -> Int {
        if let found = byValues[values] { return found }
        let number = keys.count
        byValues[values] = number
        keys.append(values)
        return number
    }
}
