import Foundation
import Granary
import GranaryRecords
import GranaryStack
import Synchronization
import Testing

// services.md §4.2 (CorePersistence-equivalent), statement by statement, and the test that checks it.
// F: behaviour CorePersistence users rely on; B: done better than the original.
//
// Writes
// - F  one serial writer; two updates back to back apply in order; the main context sees them
//        → StoreManagerWriteTests.twoEnqueuedUpdatesApplyInOrder,
//          StoreManagerWriteTests.concurrentWritesRunOneAtATimeOnTheirContextQueue, WriterPropertyTests
// - F  create(updateIfEntityExists: true) on an existing ID: updated, count stays 1
//        → StoreManagerWriteTests.createWithExistingIDUpdatesInPlaceRunningTheClosureOnce
// - F  …with false: the existing row untouched, the new values discarded
//        → StoreManagerWriteTests.createWithoutUpdateOfAnExistingIDFailsAndWritesNothing
// - B  the update runs the closure once; discarding surfaces an error
//        → the two tests above, StoreManagerWriteTests.closureCreateReportsTheExistingIDToItsCompletion
// - F  init(entityID:context:) returns the existing object or a new one with only the ID; twice, the same
//        → StoreManagerWriteTests.findOrCreateReturnsTheExistingOrOneNewObject
// - B  on the view context it throws → StoreManagerWriteTests.findOrCreateOnTheViewContextThrows
// - F  createTemporary persists nothing, stubs included
//        → StoreManagerWriteTests.createTemporaryPersistsNothing, StoreManagerXcodeModelTests.closureCreateTemporarySavesNothing
// - F  delete(with: predicate, offset) removes exactly the matching rows under the sort
//        → StoreManagerWriteTests.deleteWithPredicateSortAndOffsetRemovesExactlyThoseRows,
//          PersistableKeyPathQueryTests.readsAndDeletesTakeKeyPathPredicatesAndClauses
// - B  every live context observes the deletion → StoreManagerWriteTests.deletionReachesEveryLiveContext
//        (every context the manager made, `newBackgroundContext()`, and the view context)
// - B  the completion reports success or failure → StoreManagerWriteTests.deletingAnObjectAlreadyGoneReportsFailure
//
// Parsing
// - F  40,000 objects partly stored: updated in place, the rest inserted, one save, no duplicates
//        → ChecklistTests.fortyThousandObjectsPartlyStoredImportInOneSaveWithoutDuplicates,
//          ParsingImportTests.aLargeArrayWithExistingIDsLeavesNoDuplicates, ParsingPropertyTests
// - F  the same ID twice in one array: one object, the last entry wins
//        → ParsingImportTests.insertsUpdatesInPlaceAndTheLaterDuplicateWins
// - B  existing IDs fetched in IN queries of ≤ 1,000 IDs, not one fetch per element
//        → ChecklistTests.existingIDsAreFetchedInINQueriesOfAtMostAThousand
//      …within a time budget: measured in the Benchmarks package (J1–J3), not a test
// - F  an element without an ID, or with an unconvertible one, is skipped and the rest import; B: the
//      skipped indices are reported. Granary's default fails the whole call instead (issue 20: nothing is
//      written), and `parseSkippingInvalid` is the original's behaviour with the report
//        → ParsingErrorTests.theSkippingModeImportsTheRestAndReportsTheBadIndices,
//          ParsingErrorTests.missingIDsAndIDsOfTheWrongType, ParsingStoreManagerTests.aFailingCallWritesNothing
// - F  the completion receives the view context's objects; B: in input order
//        → ChecklistTests.theCompletionGetsTheViewContextsObjectsInInputOrder,
//          ParsingStoreManagerTests.theClosureFormDeliversMainContextObjectsInInputOrder
// - F  jsonKey defaults to the ID property's name; a custom key and dotted paths work
//        → ParsingImportTests.jsonKeyDefaultsToTheIDPropertyAndMayBeCustomOrDotted
// - (issue 20) two imports racing on two contexts leave no duplicate
//        → ParsingRaceTests.twoImportsRacingOnTwoContextsLeaveOneObjectPerIDWithTheLaterImportsValues
//
// The `<-` operator
// - F  absent key: optional and non-optional unchanged; null: optional nil, non-optional unchanged
//        → MappingConversionTests.absentKeysAndNulls
// - B  an absent key does not clear a non-optional array or dictionary → MappingConversionTests.arraysAndDictionaries
// - F  the conversion table ("27.0" → 27, 1 → true, "true" → true, 42 → "42", Int16/32, Double, enums)
//        → MappingConversionTests.integersFromNumbersAndNumericStrings, .floatingPointAndDecimal,
//          .boolsFromOneZeroAndStrings, .stringsFromStringsAndNumbers, .enumsByRawValue, .valuesFromJSONSerialization
// - B  "abc" or 3.7 into Int: a reported failure, the property unchanged
//        → MappingConversionTests.unconvertibleIntegersAreTypedErrorsAndLeaveTheValue,
//          ParsingErrorTests.anUnconvertibleValueFailsTheCallWithIndexKeyAndValue
// - B  Int64, Float, Decimal, UUID, URL, Data → MappingConversionTests.integersFromNumbersAndNumericStrings,
//          .floatingPointAndDecimal, .uuidURLAndBase64Data, ParsingImportTests.everyAttributeTypeFromJSONData
// - F  dates with dateFormats; a string failing every format leaves the date unchanged; B: POSIX locale
//      and UTC; B: ISO 8601 and epoch numbers → MappingConversionTests.datesFromISO8601UnixSecondsAndFormats
// - F  to-one from a nested object (find-or-create, recursive), a bare ID or a one-element array; null
//      clears → ParsingImportTests.toOneFromANestedObjectAnIDOrAOneElementArray
// - F  to-many from objects, IDs, one object or one ID replaces the set; null empties
//        → ParsingImportTests.toManyReplacesTheSetFromObjectsIDsOrASingleOne
// - B  ordered to-many → ParsingImportTests.orderedToManyKeepsTheJSONOrder
// - B  a non-object intermediate of a dotted path is a missing key
//        → MappingConversionTests.dottedPathsAndIntermediatesThatAreNotObjects
//
// Predicates, sorting and live results
// - F  ==, !=, <, <=, >, >=, === (IN), &&, ||, ! give the rows of the format strings; clauses sort as
//      sort descriptors → KeyPathQueryTests.eachOperatorGivesTheRowsOfItsFormatString,
//          .randomKeyPathPredicatesMatchAReferenceFilterOnADurableStore, .clausesSortAsSortKeys,
//          .randomClausesSortAsAReferenceSort
// - F  Results: one callback per save with every change, its type and index paths; applied to a mirror
//      it equals toArray() → ResultsTests.randomSavesAndMergesKeepAMirroredArrayEqualToTheResults,
//          ResultsTests.theChangesStreamCarriesAMergedBatch
// - B  filterBy and sortBy keep the registration; numberOfObjectsInFirstSection on an empty result is 0
//        → ResultsTests.filterAndSortKeepTheRegistrationAlive
// - B  writer work runs inside its context's executor; the CRUD suite under TSan
//        → StoreManagerWriteTests.concurrentWritesRunOneAtATimeOnTheirContextQueue, and the records
//          suites run under `--sanitize=thread`
// - B  an incompatible store is never deleted silently; deleting is opt-in and removes every file
//        → StoreManagerSetupTests.anIncompatibleStoreIsRecreatedOnlyWhenAskedTo,
//          StoreManagerSetupTests.aMigratableStoreIsMigratedNotRecreated
// - B  a pluggable logger with levels; failures returned as errors
//        → StoreManagerSetupTests.messagesGoToThePluggedHandlerAtTheLevelSet, and every test that expects a throw

/// The §4.2 statements no test of a feature's own file covered.
@Suite struct ChecklistTests {
    /// Counts the saves of the contexts of one coordinator.
    final class SaveCounter: @unchecked Sendable {
        // @unchecked: `token` is set once in init and read only in deinit.
        private final class Count: Sendable {
            let value = Mutex(0)
        }
        private let count = Count()
        private var token: (any NSObjectProtocol)?

        init(_ coordinator: PersistentStoreCoordinator) {
            token = NotificationCenter.default.addObserver(forName: .managedObjectContextDidSave, object: nil, queue: nil) {
                [count, weak coordinator] note in
                guard let coordinator, (note.object as? ManagedObjectContext)?.persistentStoreCoordinator === coordinator else { return }
                count.value.withLock { $0 += 1 }
            }
        }

        deinit { token.map { NotificationCenter.default.removeObserver($0) } }

        var saves: Int { count.value.withLock { $0 } }
    }

    // F: a JSON array of 40,000 objects whose IDs partly exist updates those in place, inserts the rest,
    // saves once and leaves no duplicate.
    @Test func fortyThousandObjectsPartlyStoredImportInOneSaveWithoutDuplicates() async throws {
        let manager = try RecordsTestModel.makeManager()
        try await User.parse(jsonArray: (0..<15_000).map { ["uuid": "u\($0)", "name": "old", "number_of_orders": $0] }, in: manager)
        let counter = SaveCounter(manager.stack.persistentStoreCoordinator)
        // Every third element names a stored ID; the rest are new.
        let json: [Any] = (0..<40_000).map { n in
            let id = n % 3 == 0 ? n / 3 : 15_000 + n
            return ["uuid": "u\(id)", "name": "new", "number_of_orders": -n]
        }
        let ids = try await User.parse(jsonArray: json, in: manager)
        #expect(counter.saves == 1)
        #expect(Set(ids).count == 40_000)
        let context = manager.newBackgroundContext()
        let (count, distinct, updated, untouched, sample) = try await context.perform { () throws -> (Int, Int, Int, Int, Int?) in
            let users = try context.fetch(FetchRequest<User>())
            let byID = Dictionary(users.map { ($0.uuid, $0) }, uniquingKeysWith: { a, _ in a })
            return (users.count, byID.count, users.filter { $0.name == "new" }.count, users.filter { $0.name == "old" }.count,
                    byID["u4000"]?.numberOfOrders)
        }
        // 15,000 stored; 13,334 of them named again (IDs 0…13,333); 26,666 new.
        #expect(count == 41_666 && distinct == count)
        #expect(updated == 40_000 && untouched == 1_666)
        #expect(sample == -12_000)      // u4000 is element 12,000: updated in place, not inserted again
    }

    // B: existing IDs are fetched in IN queries of at most 1,000 IDs, never one fetch per element.
    @Test func existingIDsAreFetchedInINQueriesOfAtMostAThousand() throws {
        let (_, coordinator, context) = try makeParsingStack()
        try context.performAndWait {
            try PUser.parse(jsonArray: (0..<3_000).map { ["uuid": "u\($0)", "age": $0] }, in: context)
            try context.save()
        }
        func lastPlan(importing count: Int) throws -> (plan: String, fullScans: Int, indexScans: Int) {
            let before = coordinator.fetchStatistics
            try context.performAndWait {
                // Each ID twice: a repeated ID is looked up once.
                let ids = (0..<count).map { "u\($0 * 3 % 3_500)" }
                try PUser.parse(jsonArray: (ids + ids).map { ["uuid": $0, "age": -1] }, in: context)
                try context.save()
            }
            let after = coordinator.fetchStatistics
            return (after.lastPlan ?? "", after.fullScans - before.fullScans, after.indexScans - before.indexScans)
        }
        // 2,500 IDs: queries of 1,000, 1,000 and 500 (the last one's plan is what the store reports last).
        let big = try lastPlan(importing: 2_500)
        #expect(big.plan.hasPrefix("UNION OF 500 SCANS"), "\(big.plan.prefix(80))")
        #expect(big.fullScans == 0 && big.indexScans == 2_500)
        // 1,001 IDs: 1,000 then 1, so never more than 1,000 in one query.
        let justOver = try lastPlan(importing: 1_001)
        #expect(!justOver.plan.hasPrefix("UNION OF 1001"), "\(justOver.plan.prefix(80))")
        #expect(justOver.fullScans == 0 && justOver.indexScans == 1_001)
    }

    // F + B: the closure form's completion gets the view context's objects, in input order.
    @Test func theCompletionGetsTheViewContextsObjectsInInputOrder() async throws {
        let manager = try RecordsTestModel.makeManager()
        try await User.parse(jsonArray: [["uuid": "b", "name": "stored"]], in: manager)
        let outcome: [String] = await withCheckedContinuation { continuation in
            User.parse(jsonArray: [["uuid": "c"], ["uuid": "a"], ["uuid": "b", "name": "again"], ["uuid": "c"]], in: manager) { result in
                let users = (try? result.get()) ?? []
                let inMain = users.allSatisfy { $0.managedObjectContext === manager.mainContext }
                continuation.resume(returning: users.map { "\($0.uuid)/\($0.name)" } + ["\(inMain) \(users.count)",
                                                                                       "\(users.first === users.last)"])
            }
        }
        #expect(outcome == ["c/", "a/", "b/again", "c/", "true 4", "true"])
        // An empty array: an empty result, through the same path (the seed answered it synchronously).
        let empty: Int = await withCheckedContinuation { continuation in
            User.parse(jsonArray: [], in: manager) { continuation.resume(returning: (try? $0.get())?.count ?? -1) }
        }
        #expect(empty == 0)
        #expect(try await User.parse(jsonArray: [], in: manager).isEmpty)
    }
}
