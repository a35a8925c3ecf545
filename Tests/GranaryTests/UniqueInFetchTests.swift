import Foundation
import Testing
@testable import Granary

/// `IN` lists on a uniquely constrained attribute (how imports find their objects by ID) are answered
/// by probing the unique index for every value at once: the rows must be those one index scan per
/// value finds, in the same order, with values that match nothing and values given twice.
@Suite struct UniqueInFetchTests {
    @Test func anInListOnAUniqueAttributeFindsTheRowsOfItsValuesInListOrder() throws {
        let (coordinator, context) = try makeStack(.durable)
        try context.performAndWait {
            for i in 0..<40 {
                let person: Person = i % 4 == 0 ? Contractor(context: context) : Employee(context: context)
                person.name = "P\(i)"
                person.email = "p\(i)@example.com"
            }
            let noEmail = Employee(context: context)
            noEmail.name = "None"
            try context.save()

            let wanted = [31, 2, 999, 17, 2, 8, 500]
            var request = FetchRequest<ManagedObject>(entityName: "Person")
            request.filter = .isIn(["email"], wanted.map { .string("p\($0)@example.com") })
            let before = coordinator.fetchStatistics
            let found = try context.fetch(request).compactMap { ($0 as? Person)?.name }
            let after = coordinator.fetchStatistics
            #expect(after.fullScans == before.fullScans, "an IN list on a unique index scanned the table")

            // What one scan per value gives: the same rows, in the order of the plan's scans.
            guard case .indexUnion(let scans)? = after.lastFetchPlan?.access else {
                Issue.record("the IN list was not planned as scans of the unique index: \(String(describing: after.lastFetchPlan))")
                return
            }
            let order: [String] = scans.compactMap { scan in
                guard case .index(_, let equal, _, _, _) = scan, case .string(let email)? = equal.first else { return nil }
                return email
            }
            let expected = order.compactMap { email -> String? in
                guard let i = Int(email.dropFirst().prefix { $0.isNumber }), i < 40 else { return nil }
                return "P\(i)"
            }
            #expect(found == expected)
            #expect(Set(found) == ["P31", "P2", "P17", "P8"])
            #expect(after.rowsExamined - before.rowsExamined == found.count)
        }
    }
}
