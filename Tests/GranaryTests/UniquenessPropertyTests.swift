import Foundation
import PropertyBased
import Testing
@testable import Granary

final class Keyed: ManagedObject {
    @Managed var key: Int
    @Managed var value: Int
}

/// Random inserts and edits with colliding keys in two contexts, saved under random merge policies,
/// checked against a dictionary of what each policy promises: after every save the store holds each
/// key once, with the value the policy says.
@Suite struct UniquenessPropertyTests {
    typealias Random = FetchingPlannerPropertyTests.Random

    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(version: "1") {
            Entity("Keyed", as: Keyed.self) {
                Attribute("key", .integer64)
                Attribute("value", .integer64)
                Unique("key")
            }
        }
    }

    struct Pending {
        var inserts: [(key: Int, value: Int)] = []
        /// Key to the value read and the value written.
        var updates: [Int: (read: Int, new: Int)] = [:]
    }

    /// What a save under `type` leaves in the store, or nil when it must fail (`.error` with a conflict).
    static func expected(_ store: [Int: Int], _ pending: Pending, _ type: MergePolicyType) -> [Int: Int]? {
        var result = store
        for (key, update) in pending.updates.sorted(by: { $0.key < $1.key }) {
            let current = store[key]!
            if current == update.read {
                result[key] = update.new
                continue
            }
            switch type {
            case .error: return nil
            case .mergeByPropertyObjectTrump, .overwrite: result[key] = update.new
            case .mergeByPropertyStoreTrump, .rollback: result[key] = current
            }
        }
        var groups: [Int: [Int]] = [:]
        for insert in pending.inserts { groups[insert.key, default: []].append(insert.value) }
        for (key, values) in groups {
            let stored = result[key]
            if stored == nil && values.count == 1 {
                result[key] = values[0]
                continue
            }
            switch type {
            case .error: return nil
            case .mergeByPropertyObjectTrump, .overwrite: result[key] = values.last!
            case .mergeByPropertyStoreTrump, .rollback: result[key] = stored ?? values[0]
            }
        }
        return result
    }

    static func storeContents(_ coordinator: PersistentStoreCoordinator) throws -> [(key: Int, value: Int)] {
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        return try reader.performAndWait {
            try reader.fetch(FetchRequest<Keyed>(sortBy: [SortDescriptor(\.key)])).map { ($0.key, $0.value) }
        }
    }

    func run(seed: Int, steps: Int, type storeType: PersistentStore.StoreType) throws {
        var random = Random(state: UInt64(truncatingIfNeeded: seed))
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.model())
        let url = storeType == .durable ? scratchURL("uniqueness-\(seed)") : nil
        defer { if let url { try? FileManager.default.removeItem(at: url) } }
        try coordinator.addPersistentStore(type: storeType, at: url)
        let contexts = (0..<2).map { _ in ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator) }
        var pending = [Pending(), Pending()]
        var model: [Int: Int] = [:]
        var nextValue = 1
        let policies: [MergePolicyType] = [.error, .mergeByPropertyObjectTrump, .mergeByPropertyStoreTrump, .overwrite, .rollback]
        for _ in 0..<steps {
            let c = random.int(2)
            let context = contexts[c]
            switch random.int(10) {
            case 0..<5:
                let key = random.int(4)
                if pending[c].updates[key] != nil { continue }
                let value = nextValue
                nextValue += 1
                context.performAndWait {
                    let object = Keyed(context: context)
                    object.key = key
                    object.value = value
                }
                pending[c].inserts.append((key, value))
            case 5..<7:
                let key = random.int(4)
                guard model[key] != nil, pending[c].updates[key] == nil, !pending[c].inserts.contains(where: { $0.key == key }) else { continue }
                let value = nextValue
                nextValue += 1
                let read = try context.performAndWait {
                    let object = try #require(try context.fetch(FetchRequest<Keyed>(predicate: #Predicate { $0.key == key })).first)
                    context.refresh(object, mergeChanges: false)
                    let read = object.value
                    object.value = value
                    return read
                }
                #expect(read == model[key], "seed \(seed): context \(c) read \(read) for key \(key), the store holds \(String(describing: model[key]))")
                pending[c].updates[key] = (read, value)
            default:
                let type = random.pick(policies)
                context.mergePolicy = MergePolicy(merge: type)
                let promised = Self.expected(model, pending[c], type)
                let failure: Error? = context.performAndWait {
                    do {
                        try context.save()
                        return nil
                    } catch {
                        context.rollback()
                        return error
                    }
                }
                if let promised {
                    #expect(failure == nil, "seed \(seed): \(type) save failed: \(String(describing: failure))")
                    model = promised
                } else {
                    #expect(failure != nil, "seed \(seed): an .error save with conflicts succeeded")
                }
                pending[c] = Pending()
                context.performAndWait { #expect(!context.hasChanges) }
                let stored = try Self.storeContents(coordinator)
                #expect(Set(stored.map(\.key)).count == stored.count, "seed \(seed): duplicate keys \(stored)")
                #expect(Dictionary(uniqueKeysWithValues: stored.map { ($0.key, $0.value) }) == model,
                        "seed \(seed): after a \(type) save the store holds \(stored), the model \(model.sorted { $0.key < $1.key })")
                if Dictionary(uniqueKeysWithValues: stored.map { ($0.key, $0.value) }) != model { return }
            }
        }
    }

    @Test func collidingKeysInTwoContextsMatchThePolicies() async {
        await propertyCheck(count: 60, input: Gen.int(in: 0...Int.max)) { seed in
            #expect(throws: Never.self) { try run(seed: seed, steps: 40, type: .inMemory) }
        }
    }

    @Test func collidingKeysInADurableStoreMatchThePolicies() async {
        await propertyCheck(count: 15, input: Gen.int(in: 0...Int.max)) { seed in
            #expect(throws: Never.self) { try run(seed: seed, steps: 30, type: .durable) }
        }
    }
}
