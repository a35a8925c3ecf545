import Foundation
import Testing
@testable import GranarySync

/// The cutoff of a rebase (what every registered, active store has integrated) and when to rebase (§13).
@Suite struct RebaseCutoffTests {
    static let a = orderedStores[0], b = orderedStores[1], c = orderedStores[2]
    static let now = Date(timeIntervalSinceReferenceDate: 800_000_000)
    static let day: TimeInterval = 24 * 60 * 60

    @Test func theCutoffIsTheMinimumOfActiveStoresAndOwnIntegrated_M32() {
        let integrated = RevisionVector([Self.a: 9, Self.b: 5, Self.c: 4])
        let stores = [
            RebaseCutoff.Activity(store: Self.b, published: RevisionVector([Self.a: 6, Self.b: 5, Self.c: 4]), lastActive: Self.now - Self.day),
            RebaseCutoff.Activity(store: Self.c, published: RevisionVector([Self.a: 7, Self.b: 3, Self.c: 4]), lastActive: Self.now - 2 * Self.day),
        ]
        let cutoff = RebaseCutoff.vector(integrated: integrated, stores: stores, now: Self.now, inactiveAfter: 30 * Self.day)
        #expect(cutoff == RevisionVector([Self.a: 6, Self.b: 3, Self.c: 4]))
    }

    @Test func aStoreInactiveForThirtyDaysDoesNotHoldTheCutoffBack() {
        let integrated = RevisionVector([Self.a: 9, Self.b: 5])
        let active = RebaseCutoff.Activity(store: Self.b, published: RevisionVector([Self.a: 8, Self.b: 5]), lastActive: Self.now - Self.day)
        var stale = RebaseCutoff.Activity(store: Self.c, published: RevisionVector([Self.a: 1]), lastActive: Self.now - 31 * Self.day)
        let policy = RebasePolicy.default
        #expect(RebaseCutoff.vector(integrated: integrated, stores: [active, stale], now: Self.now, inactiveAfter: policy.inactiveAfter)
            == RevisionVector([Self.a: 8, Self.b: 5]))
        // The same store still active a day earlier holds it back to what it has.
        stale.lastActive = Self.now - 29 * Self.day
        #expect(RebaseCutoff.vector(integrated: integrated, stores: [active, stale], now: Self.now, inactiveAfter: policy.inactiveAfter)
            == RevisionVector([Self.a: 1]))
    }

    @Test func anActiveStoreWithNoKnownEventHoldsEverythingBack() {
        let integrated = RevisionVector([Self.a: 9])
        let silent = RebaseCutoff.Activity(store: Self.b, registered: Self.now - Self.day, newest: nil)
        #expect(RebaseCutoff.vector(integrated: integrated, stores: [silent], now: Self.now, inactiveAfter: 30 * Self.day) == RevisionVector())
    }

    @Test func aStoresPublishedVectorIsItsNewestEventsPlusItsOwnRevision() {
        let meta = EventMeta(id: EventID(store: Self.b, revision: 4), globalCount: 12, vector: RevisionVector([Self.a: 3]))
        let activity = RebaseCutoff.Activity(store: Self.b, registered: Self.now - 40 * Self.day, newest: (meta, Self.now - 2 * Self.day))
        #expect(activity.published == RevisionVector([Self.a: 3, Self.b: 4]))
        #expect(activity.lastActive == Self.now - 2 * Self.day)
    }

    @Test func theCutoffFromTheEventStoreUsesEachStoresNewestEvent() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let store = try EventStore.open(at: scratch.appendingPathComponent("events.granary"), creatingWith: Self.a)
        defer { try? store.close() }
        for _ in 0..<3 { try store.addLocalEvent([]) }
        for revision in 1...2 {
            let event = Event(meta: EventMeta(id: EventID(store: Self.b, revision: Int64(revision)), globalCount: Int64(revision) + 1,
                                              vector: RevisionVector([Self.a: Int64(revision)])),
                              timestamp: Self.now - 3 * Self.day, changes: [])
            try store.importEvent(event)
        }
        try store.commit(EventStoreStep(integrated: [EventID(store: Self.b, revision: 1), EventID(store: Self.b, revision: 2)]))
        let registrations = [Self.a: Self.now - 50 * Self.day, Self.b: Self.now - 50 * Self.day, Self.c: Self.now - 60 * Self.day]
        // C registered 60 days ago and never published: inactive, so B's newest event (B2 after A2) decides.
        let cutoff = try RebaseCutoff.vector(from: store, registrations: registrations, now: Self.now, inactiveAfter: 30 * Self.day)
        #expect(cutoff == RevisionVector([Self.a: 2, Self.b: 2]))
    }

    @Test func thePolicyFollowsItsThresholds() {
        let policy = RebasePolicy.default
        #expect(EnsembleConfiguration().rebase == policy)
        func facts(_ baseline: Bool, _ events: Int, _ covered: Int, _ bytes: Int64, _ last: Int64) -> RebasePolicy.Facts {
            .init(hasBaseline: baseline, eventCount: events, coveredEventCount: covered, coveredEventBytes: bytes, lastBaselineBytes: last)
        }
        #expect(!policy.shouldRebase(facts(false, 99, 99, 1000, 0)))
        #expect(policy.shouldRebase(facts(false, 100, 0, 0, 0)))
        #expect(!policy.shouldRebase(facts(true, 500, 200, 100, 1000)))
        #expect(policy.shouldRebase(facts(true, 500, 201, 100, 1000)))
        #expect(!policy.shouldRebase(facts(true, 50, 10, 4000, 1000)))
        #expect(policy.shouldRebase(facts(true, 50, 10, 4001, 1000)))
        #expect(policy.shouldRebase(facts(true, 0, 0, 0, 0), force: true))
        #expect(!policy.shouldRebase(facts(false, 1000, 1000, 1, 0), force: true, suppress: true))
    }

    @Test func theFactsOfAListingCountEventsOnceAndTheNewestBaselinesBytes() {
        let id1 = UUID(), id2 = UUID()
        let events: [(name: CloudFileName, size: Int64)] = [
            (.event(globalCount: 1, store: Self.a, revision: 1, part: nil), 100),
            (.event(globalCount: 2, store: Self.a, revision: 2, part: .init(index: 1, count: 2)), 300),
            (.event(globalCount: 2, store: Self.a, revision: 2, part: .init(index: 2, count: 2)), 200),
            (.event(globalCount: 3, store: Self.b, revision: 1, part: nil), 50),
        ]
        let baselines: [(name: CloudFileName, size: Int64)] = [
            (.baseline(globalCount: 1, id: id1, store: Self.a, part: nil), 1000),
            (.baseline(globalCount: 2, id: id2, store: Self.b, part: .init(index: 1, count: 2)), 70),
            (.baseline(globalCount: 2, id: id2, store: Self.b, part: .init(index: 2, count: 2)), 30),
        ]
        let facts = RebasePolicy.Facts(events: events, baselines: baselines, cutoff: RevisionVector([Self.a: 2]))
        #expect(facts == RebasePolicy.Facts(hasBaseline: true, eventCount: 3, coveredEventCount: 2, coveredEventBytes: 600,
                                            lastBaselineBytes: 100))
        #expect(RebasePolicy.default.shouldRebase(facts))
    }
}
