import Foundation
import Granary
import GranaryRecords
import PropertyBased
import Testing

/// Random JSON batches (IDs from small pools, so collisions are frequent; random nesting, missing keys,
/// nulls and the odd bad element) imported into a durable store, checked against a plain reference
/// model after every call.
@Suite struct ParsingPropertyTests {
    struct SplitMix {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func int(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    }

    struct RefUser: Equatable { var age = 0; var firstName: String?; var addressID: String?; var managerID: String? }

    struct Reference {
        var users: [String: RefUser] = [:]
        var cities: [String: String?] = [:]

        /// What `PUser.mapValues` does, key by key in its order.
        mutating func apply(user json: [String: Any]) {
            guard let id = json["uuid"] as? String else { return }
            var u = users[id] ?? RefUser()
            users[id] = u
            if let v = json["first_name"] { u.firstName = v as? String }
            if let v = json["age"], !(v is NSNull) { u.age = (v as? Int) ?? Int(v as! String)! }
            users[id] = u
            if let v = json["address"] {
                if let nested = v as? [String: Any] {
                    let aid = nested["id"] as! String
                    if cities[aid] == nil { cities[aid] = .some(nil) }
                    if let c = nested["city"] { cities[aid] = .some(c as? String) }
                    users[id]!.addressID = aid
                } else if let aid = v as? String {
                    if cities[aid] == nil { cities[aid] = .some(nil) }
                    users[id]!.addressID = aid
                } else {
                    users[id]!.addressID = nil
                }
            }
            if let v = json["manager"] {
                if let nested = v as? [String: Any] {
                    apply(user: nested)
                    users[id]!.managerID = nested["uuid"] as? String
                } else if let mid = v as? String {
                    if users[mid] == nil { users[mid] = RefUser() }
                    users[id]!.managerID = mid
                } else {
                    users[id]!.managerID = nil
                }
            }
        }
    }

    static func user(_ r: inout SplitMix, depth: Int) -> [String: Any] {
        var json: [String: Any] = ["uuid": "u\(r.int(6))"]
        switch r.int(4) { case 0: json["first_name"] = "n\(r.int(5))"; case 1: json["first_name"] = NSNull(); default: break }
        switch r.int(5) { case 0: json["age"] = r.int(100); case 1: json["age"] = "\(r.int(100))"; case 2: json["age"] = NSNull(); default: break }
        switch r.int(5) {
        case 0: json["address"] = "a\(r.int(3))"
        case 1:
            var a: [String: Any] = ["id": "a\(r.int(3))"]
            if r.int(2) == 0 { a["city"] = r.int(3) == 0 ? NSNull() : "c\(r.int(4))" }
            json["address"] = a
        case 2: json["address"] = NSNull()
        default: break
        }
        if depth < 3 {
            switch r.int(6) {
            case 0: json["manager"] = "u\(r.int(6))"
            case 1: json["manager"] = user(&r, depth: depth + 1)
            case 2: json["manager"] = NSNull()
            default: break
            }
        }
        return json
    }

    struct Snapshot: Equatable { var users: [String: RefUser]; var cities: [String: String?] }

    static func stored(_ coordinator: PersistentStoreCoordinator) throws -> Snapshot {
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        return try reader.performAndWait {
            var users: [String: RefUser] = [:]
            for u in try reader.fetch(FetchRequest<PUser>()) {
                users[u.uuid] = RefUser(age: u.age, firstName: u.firstName, addressID: u.address?.id, managerID: u.manager?.uuid)
            }
            var cities: [String: String?] = [:]
            for a in try reader.fetch(FetchRequest<PAddress>()) { cities[a.id] = .some(a.city) }
            return Snapshot(users: users, cities: cities)
        }
    }

    func run(seed: Int) throws {
        var r = SplitMix(state: UInt64(truncatingIfNeeded: seed))
        let (url, coordinator, context) = try makeParsingStack()
        defer { try? FileManager.default.removeItem(at: url) }
        var reference = Reference()
        for call in 0..<8 {
            var batch: [Any] = (0..<(1 + r.int(6))).map { _ in Self.user(&r, depth: 0) }
            let bad = r.int(5) == 0
            if bad { batch.insert(["uuid": "u\(r.int(6))", "age": "abc"], at: r.int(batch.count + 1)) }
            let outcome: Result<[String], Error> = context.performAndWait {
                Result {
                    let objects = try PUser.parse(jsonArray: batch, in: context)
                    try context.save()
                    return objects.map(\.uuid)
                }
            }
            switch outcome {
            case .success(let ids):
                #expect(!bad, "seed \(seed) call \(call): a bad batch imported")
                #expect(ids == batch.map { ($0 as! [String: Any])["uuid"] as! String }, "seed \(seed) call \(call)")
                for element in batch { reference.apply(user: element as! [String: Any]) }
            case .failure(let error):
                #expect(bad, "seed \(seed) call \(call): \(error)")
                #expect((error as? ParsingError)?.key == "age", "seed \(seed) call \(call): \(error)")
            }
            let snapshot = try Self.stored(coordinator)
            #expect(snapshot.users == reference.users, "seed \(seed) call \(call): batch \(batch)")
            #expect(snapshot.cities == reference.cities, "seed \(seed) call \(call)")
            context.performAndWait { #expect(!context.hasChanges) }
        }
    }

    @Test func randomBatchesMatchAReferenceModel() async {
        await propertyCheck(count: 25, input: Gen.int(in: 0...Int.max)) { seed in
            #expect(throws: Never.self) { try run(seed: seed) }
        }
    }
}
