/// A JSON object's members in the order the text gave them.
///
/// A mapping reads a handful of keys from each of thousands of small objects. Hashing each key (and
/// building a hash table for each object as it is read) cost more than finding it among a dozen
/// members by comparing strings, which for short keys is two machine words. Objects with many members
/// get an index, built once. A key given twice is read as its last occurrence, as a dictionary would
/// keep it.
struct JSONObject: Sequence, ExpressibleByDictionaryLiteral, Sendable {
    private let members: [(key: String, value: JSONNode)]
    /// The last position of each key, for objects too large to scan.
    private let index: [String: Int]?

    static let scanLimit = 16

    init(_ members: [(key: String, value: JSONNode)]) {
        self.members = members
        if members.count > Self.scanLimit {
            var index: [String: Int] = [:]
            index.reserveCapacity(members.count)
            for (i, member) in members.enumerated() { index[member.key] = i }
            self.index = index
        } else {
            index = nil
        }
    }

    init(_ dictionary: [String: JSONNode]) {
        self.init(dictionary.map { (key: $0.key, value: $0.value) })
    }

    init(dictionaryLiteral elements: (String, JSONNode)...) {
        self.init(elements.map { (key: $0.0, value: $0.1) })
    }

    /// Each distinct key once.
    var keys: [String] { map(\.key) }

    subscript(key: String) -> JSONNode? {
        if let index { return index[key].map { members[$0].value } }
        var i = members.count - 1
        while i >= 0 {
            if members[i].key == key { return members[i].value }
            i -= 1
        }
        return nil
    }

    /// Each distinct key once, with its last value, in the order of those last occurrences.
    func makeIterator() -> IndexingIterator<[(key: String, value: JSONNode)]> {
        guard members.count > 1 else { return members.makeIterator() }
        let distinct = members.indices.filter { position in
            if let index { return index[members[position].key] == position }
            return !members[(position + 1)...].contains { $0.key == members[position].key }
        }.map { members[$0] }
        return distinct.makeIterator()
    }
}
