import Foundation
import Granary
import GranaryConnect
import GranaryStack
import PropertyBased
import Testing

/// The merge of a feed in key order, walked beside the store: the same outcome as the unsorted merge.
@Suite struct SortedFeedMergeTests {
    /// A random scenario: a stored listing, then a feed drawn from a small key pool (so that keys repeat,
    /// vanish and appear), merged sorted on one store and unsorted on another, with a subset.
    @Test func aSortedFeedMergesAsTheUnsortedMergeDoes() async {
        await propertyCheck(count: 25, input: Gen.int(in: 0...Int.max)) { seed in
            do {
                var random = SplitMixRandom(seed: UInt64(truncatingIfNeeded: seed))
                func records(_ count: Int, _ edition: Int) -> [[String: Any]] {
                    (0..<count).map { _ in
                        let k = Int.random(in: 0..<60, using: &random)
                        return ["uuid": "k\(k)", "name": "n\(k)-\(Int.random(in: 0..<3, using: &random) + edition)", "score": k % 7]
                    }
                }
                let first = records(Int.random(in: 0..<50, using: &random), 0)
                let second = records(Int.random(in: 0..<50, using: &random), 1)
                let subset: FetchPredicate? = Bool.random(using: &random) ? FetchPredicate.key("score") < 4 : nil
                let batch = Int.random(in: 1...8, using: &random)
                let sortedConnect = try ConnectTestModel.makeConnect(label: "sorted")
                let plainConnect = try ConnectTestModel.makeConnect(label: "plain")
                defer { try? sortedConnect.close(); try? plainConnect.close() }
                func sorted(_ feed: [[String: Any]]) -> [[String: Any]] {
                    // Stable, so that of two records with one key the later stays later (and wins).
                    feed.enumerated().sorted { a, b in
                        let x = Array((a.element["uuid"] as! String).utf8), y = Array((b.element["uuid"] as! String).utf8)
                        return x.lexicographicallyPrecedes(y) || (x == y && a.offset < b.offset)
                    }.map(\.element)
                }
                let box = FeedMergeTests.FeedBox(first), box2 = FeedMergeTests.FeedBox(second), sortedBox = FeedMergeTests.FeedBox(sorted(first)),
                    sortedBox2 = FeedMergeTests.FeedBox(sorted(second))
                let reports = Recorder<FeedMergeReport>()
                _ = try await plainConnect.run(CustomerAction { context, _ in
                    _ = try context.merge(box.records, batchSize: batch)
                    reports.append(try context.merge(box2.records, subsetFilter: subset, batchSize: batch))
                })
                _ = try await sortedConnect.run(CustomerAction { context, _ in
                    _ = try context.merge(sortedByKey: sortedBox.records, batchSize: batch)
                    reports.append(try context.merge(sortedByKey: sortedBox2.records, subsetFilter: subset, batchSize: batch))
                })
                let a = try await FeedMergeTests.customers(plainConnect).mapValues { "\($0.name)/\($0.score)" }
                let b = try await FeedMergeTests.customers(sortedConnect).mapValues { "\($0.name)/\($0.score)" }
                #expect(a == b, "seed \(seed)")
                let (plain, walked) = (reports.all[0], reports.all[1])
                let counts: [Int] = [plain.inserted, plain.updated, plain.deleted]
                let walkedCounts: [Int] = [walked.inserted, walked.updated, walked.deleted]
                #expect(counts == walkedCounts, "seed \(seed): \(plain) against \(walked)")
            } catch {
                Issue.record("seed \(seed): \(error)")
            }
        }
    }

    @Test func aFeedOutOfKeyOrderIsATypedErrorAndNothingIsSaved() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let proxy = try await connect.run(CustomerAction { context, _ in
            _ = try context.merge(sortedByKey: [["uuid": "b"], ["uuid": "a"]])
        })
        guard case .invalidFeedRecord("Customer", 1, let reason)? = proxy.error as? ConnectError else {
            Issue.record("expected invalidFeedRecord, got \(String(describing: proxy.error))")
            return
        }
        #expect(reason.contains("not in key order"))
        #expect(try await FeedMergeTests.customers(connect).isEmpty)
    }

    @Test func aLazyFeedIsReadAsItComesAndCompositeKeysWalkInOrder() async throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        let rows = Recorder<String>()
        let proxy = try await connect.run(PurchaseAction { context in
            // Generated as it is read: never an array.
            let feed = (0..<300).lazy.map { i -> [String: Any] in ["customerID": "c\(i / 100)", "number": i % 100, "total": Double(i)] }
            let first = try context.merge(sortedByKey: feed, batchSize: 32)
            rows.append("\(first.inserted)")
            let again = (0..<300).lazy.filter { $0 % 3 != 0 }.map { i -> [String: Any] in
                ["customerID": "c\(i / 100)", "number": i % 100, "total": i % 2 == 0 ? Double(i) : -1]
            }
            let second = try context.merge(sortedByKey: again, batchSize: 32)
            rows.append("\(second.updated)/\(second.deleted)/\(second.inserted)")
        })
        #expect(proxy.error == nil, "\(String(describing: proxy.error))")
        #expect(rows.all == ["300", "100/100/0"])
    }
}

/// A seeded generator for the scenarios (SplitMix64).
struct SplitMixRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
