import Foundation
import PropertyBased
import Testing

@testable import Granary

/// Objects that faults load a batch at a time read the right values in any order: a relationship's
/// members or a batched fetch's objects, walked in the collection's order, sorted by a property,
/// reversed, or touched at random with repeats, with unsaved edits and refreshes along the way. A
/// reference dictionary of each employee's values is compared at every read, and the loads are
/// checked to stay within their bounds.
@Suite struct BatchFaultingPropertyTests {
    typealias Random = FetchingPlannerPropertyTests.Random

    /// Companies small and large next to the relationship batch size (512), and what they hold.
    static let sizes = [3, 40, 700, 1_600]

    struct Stored: Sendable {
        var salary: Int
        var hired: Date
        var company: String
    }

    static let store: (PersistentStoreCoordinator, [String: Stored]) = {
        let (coordinator, context) = try! makeStack()
        var stored: [String: Stored] = [:]
        var random = Random(state: 0xBA7C4)
        try! context.performAndWait {
            var serial = 0
            for (c, size) in sizes.enumerated() {
                let company = Company(context: context)
                company.name = "C\(c)"
                for _ in 0..<size {
                    let e = Employee(context: context)
                    e.name = "E\(serial)-\(random.int(1_000))"
                    e.salary = random.int(100_000)
                    e.hired = Date(timeIntervalSince1970: Double(random.int(1_000_000_000)))
                    e.company = company
                    stored[e.name] = Stored(salary: e.salary, hired: e.hired!, company: company.name)
                    serial += 1
                }
            }
            try context.save()
        }
        return (coordinator, stored)
    }()

    static func check(seed: Int) throws {
        let (coordinator, stored) = store
        var r = Random(state: UInt64(seed))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            var expected = stored
            // Held throughout, so that reading an employee's company never loads it again.
            let companies = try context.fetch(FetchRequest<Company>())
            let company = r.bool() ? r.pick(companies) : nil
            let batchSize = 1 + r.int(300)
            let objects: [Employee]
            var label = "seed \(seed): "
            if let company {
                // The members as the relationship hands them out, in the order its set iterates.
                objects = Array(company.employees)
                label += "members of \(company.name)"
            } else {
                var request = FetchRequest<Employee>(sortBy: r.bool() ? [SortDescriptor(\.salary)] : [])
                request.fetchBatchSize = batchSize
                objects = try context.fetch(request)
                label += "batched fetch, batch size \(batchSize)"
            }
            #expect(objects.count == expected.values.count { company == nil || $0.company == company!.name }, "\(label)")
            let order: [Employee]
            switch r.int(4) {
            case 0: order = objects
            case 1: order = objects.sorted { ($0.hired ?? .distantPast, $0.name) < ($1.hired ?? .distantPast, $1.name) }
            case 2: order = objects.reversed()
            default: order = objects.isEmpty ? [] : (0..<(2 * objects.count)).map { _ in r.pick(objects) }
            }
            label += ", order \(order.count)"
            let before = context.faultStatistics
            var refreshed = 0
            for e in order {
                switch r.int(40) {
                case 0:
                    e.salary += 1
                    expected[e.name]!.salary += 1
                case 1:
                    context.refresh(e, mergeChanges: false)
                    expected[e.name] = stored[e.name]
                    refreshed += 1
                default:
                    break
                }
                let want = try #require(expected[e.name], "\(label): unknown \(e.name)")
                #expect(e.salary == want.salary, "\(label): \(e.name)")
                #expect(e.hired == want.hired, "\(label): \(e.name)")
                #expect(e.company?.name == want.company, "\(label): \(e.name)")
            }
            let fulfilled = context.faultStatistics.fulfilledObjects - before.fulfilledObjects
            // Each refresh may cost one load of its own object.
            let bound = (company != nil ? objects.count : 3 * objects.count + batchSize) + refreshed
            #expect(fulfilled <= bound, "\(label): \(fulfilled) objects loaded for \(objects.count)")
            withExtendedLifetime(companies) {}
        }
    }

    @Test func valuesReadInAnyOrderAreRight() async {
        await propertyCheck(count: 40, input: Gen.int(in: 0...Int.max)) { seed in
            #expect(throws: Never.self) { try Self.check(seed: seed) }
        }
    }

    @Test func fixedSeedsStayGreen() throws {
        for seed in 0..<20 { try Self.check(seed: seed) }
    }
}
