import Foundation
import Granary
import GranaryRecords
import PropertyBased
import Testing

/// Random runs of writes, enqueued back to back without waiting, against a plain dictionary: the
/// writer applies them in order, and no ID is ever stored twice.
@Suite struct WriterPropertyTests {
    /// SplitMix64, so that one seed reproduces a whole run.
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        init(seed: Int) { state = UInt64(truncatingIfNeeded: seed) }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static func check(seed: Int) async throws {
        var random = SplitMix(seed: seed)
        let manager = try RecordsTestModel.makeManager("property\(seed)")
        var reference: [String: String] = [:]  // uuid → "name/numberOfOrders"
        // The closure forms (`complete: nil`) enqueue at once, without waiting for the write.
        for step in 0..<30 {
            let id = "u\(Int.random(in: 0..<4, using: &random))"
            switch Int.random(in: 0..<3, using: &random) {
            case 0:
                let name = "n\(step)"
                User.create(in: manager, update: { user, _ in user.uuid = id; user.name = name }, complete: nil)
                let orders = reference[id]?.split(separator: "/").last.map(String.init) ?? "0"
                reference[id] = "\(name)/\(orders)"
            case 1:
                let orders = Int.random(in: 1..<100, using: &random)
                User.create(in: manager, updateIfEntityExists: false, update: { user, _ in user.uuid = id; user.numberOfOrders = orders }, complete: nil)
                if reference[id] == nil { reference[id] = "/\(orders)" }
            default:
                User.delete(from: manager, with: DeleteOptions(predicate: FetchPredicate.key("uuid") == id), complete: nil)
                reference[id] = nil
            }
        }
        await manager.waitForWrites()
        let context = manager.newBackgroundContext()
        let stored = try await context.perform {
            try context.fetch(FetchRequest<User>(entityName: "User")).map { ($0.uuid, "\($0.name)/\($0.numberOfOrders)") }
        }
        #expect(Set(stored.map(\.0)).count == stored.count, "seed \(seed): an ID stored twice")
        #expect(Dictionary(stored, uniquingKeysWith: { a, _ in a }) == reference, "seed \(seed)")
        let main = manager.mainContext
        let seen = try await main.perform { try User.getAll(from: manager).count }
        #expect(seen == reference.count, "seed \(seed): the main context is behind")
    }

    @Test func randomWriteRunsMatchTheReference() async {
        await propertyCheck(count: 15, input: Gen.int(in: 0...Int.max)) { seed in
            await #expect(throws: Never.self) { try await Self.check(seed: seed) }
        }
    }

    @Test func fixedSeedsStayGreen() async throws {
        for seed in 0..<5 { try await Self.check(seed: seed) }
    }
}
