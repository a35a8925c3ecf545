import Foundation
import GRDB
import Granary
import GranaryRecords
import RecordsFeed

// The records table's data: items from a web service, each linked by ID to one of 1,000 parents, as
// Granary `Parsable` classes (RecordsFeed) and as GRDB Codable records decoded by `JSONDecoder`.

enum RecordsModel {
    static let parents = FeedModel.parents
    static let model = FeedModel.model

    struct Parent: Codable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "feedParent"
        var id: Int64
        var name: String
    }

    struct Item: Codable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "feedItem"
        var id: Int64
        var name: String
        var score: Double
        var quantity: Int32
        var active: Bool
        var created: Date
        var parent: Int64
    }

    static let createSchema = """
        CREATE TABLE feedParent(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
        CREATE TABLE feedItem(id INTEGER PRIMARY KEY, name TEXT NOT NULL, score REAL NOT NULL, quantity INTEGER NOT NULL,
                              active BOOLEAN NOT NULL, created DATE NOT NULL, parent INTEGER NOT NULL REFERENCES feedParent(id));
        CREATE INDEX feedItemParent ON feedItem(parent);
        """

    /// The item with this ID in one of two editions (`edition` changes every value but the ID).
    static func item(_ id: Int, edition: Int) -> Item {
        Item(id: Int64(id), name: "item \(id) v\(edition)", score: Double(id % 1_000) / 8 + Double(edition),
             quantity: Int32((id &* 7 &+ edition) % 500), active: (id + edition) % 3 == 0,
             created: Date(timeIntervalSince1970: 1_700_000_000 + Double(id) * 37 + Double(edition) * 86_400),
             parent: Int64((id &* 31 &+ edition) % parents))
    }

    /// JSON text for the items `ids` in `edition`, as a web service sends it: dates as ISO 8601 text.
    static func json(_ ids: Range<Int>, edition: Int) throws -> Data {
        let formatter = ISO8601DateFormatter()
        let array: [[String: Any]] = ids.map { id in
            let item = item(id, edition: edition)
            return ["id": item.id, "name": item.name, "score": item.score, "quantity": item.quantity, "active": item.active,
                    "created": formatter.string(from: item.created), "parent": item.parent]
        }
        return try JSONSerialization.data(withJSONObject: array)
    }

    static func parentsJSON() throws -> Data {
        try JSONSerialization.data(withJSONObject: (0..<parents).map { ["id": $0, "name": "parent \($0)"] as [String: Any] })
    }

    static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }

    /// What every store must hold after J1–J3: Σ (quantity + parent) and the count, over `editions`
    /// (the newest edition of each ID).
    static func expected(_ editions: [Int: Int]) -> (count: Int, checksum: Int) {
        var sum = 0
        for (id, edition) in editions {
            let item = item(id, edition: edition)
            sum += Int(item.quantity) + Int(item.parent)
        }
        return (editions.count, sum)
    }
}
