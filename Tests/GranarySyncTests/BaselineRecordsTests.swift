import Foundation
import Testing
@testable import GranarySync

/// The event store's `baseline` table and the baseline part of a merge's commit: records survive a
/// reopen and only move up in role; a joined baseline raises the integrated vector and the global count
/// (M2, M32) and integrates the downloaded events it covers, and only those.
@Suite struct BaselineRecordsTests {
    static let own = orderedStores[0], other = orderedStores[1]

    static func summary(_ vector: RevisionVector, count: Int64) -> BaselineSummary {
        BaselineSummary(id: UUID(), writer: other, globalCount: count, vector: vector)
    }

    @Test func recordsSurviveAReopenAndOnlyMoveUpInRole() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let directory = scratch.appendingPathComponent("events.granary")
        var store = try EventStore.open(at: directory, creatingWith: Self.own)
        let first = Self.summary(RevisionVector([Self.other: 2]), count: 5)
        try store.recordBaselines([BaselineRecord(summary: first, parts: 2, bytes: 900, role: .joined)])
        try store.recordBaselines([BaselineRecord(summary: first, parts: 2, bytes: 900, role: .seen)])
        try store.close()

        store = try EventStore.open(at: directory)
        defer { try? store.close() }
        let records = try store.baselineRecords()
        #expect(records.count == 1)
        #expect(records[first.stem] == BaselineRecord(summary: first, parts: 2, bytes: 900, role: .joined))
        // Also as JSON, for a merge's pending record.
        let record = try #require(records[first.stem])
        #expect(try EventPayloadCoding.decode(BaselineRecord.self, from: try EventPayloadCoding.encode(record), name: "pending") == record)
    }

    @Test func aJoinedBaselineRaisesTheCountersAndIntegratesTheDownloadedEventsItCovers_M2_M32() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let store = try EventStore.open(at: scratch.appendingPathComponent("events.granary"), creatingWith: Self.own)
        defer { try? store.close() }
        try store.addLocalEvent([])
        func remote(_ revision: Int64, count: Int64) -> Event {
            Event(meta: EventMeta(id: EventID(store: Self.other, revision: revision), globalCount: count, vector: RevisionVector()), changes: [])
        }
        for event in [remote(1, count: 2), remote(2, count: 3), remote(3, count: 9)] { try store.importEvent(event) }

        let baseline = Self.summary(RevisionVector([Self.other: 2]), count: 40)
        try store.commit(EventStoreStep(joinedBaselines: [BaselineRecord(summary: baseline, parts: 1, bytes: 100, role: .joined)]))
        let state = try store.state()
        #expect(state.integrated == RevisionVector([Self.own: 1, Self.other: 2]))
        #expect(state.maxGlobalCount == 40)
        #expect(state.baselineID == baseline.stem)
        #expect(try store.status(of: EventID(store: Self.other, revision: 1)) == .integrated)
        #expect(try store.status(of: EventID(store: Self.other, revision: 2)) == .integrated)
        #expect(try store.status(of: EventID(store: Self.other, revision: 3)) == .downloaded)
        #expect(try store.nextLocalMeta().globalCount == 41)
        #expect(try store.baselineRecords()[baseline.stem]?.role == .joined)
    }

    @Test func aRebaseCommitMarksOnlyExportedAndIntegratedEventsTheCutoffCovers() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let store = try EventStore.open(at: scratch.appendingPathComponent("events.granary"), creatingWith: Self.own)
        defer { try? store.close() }
        let local = try (0..<3).map { _ in try store.addLocalEvent([]) }
        try store.markExported([local[0].id, local[1].id])
        let downloaded = Event(meta: EventMeta(id: EventID(store: Self.other, revision: 1), globalCount: 7, vector: RevisionVector()), changes: [])
        try store.importEvent(downloaded)

        let summary = BaselineSummary(id: UUID(), writer: Self.own, globalCount: 3, vector: RevisionVector([Self.own: 3]))
        try store.commitRebase(BaselineRecord(summary: summary, parts: 1, bytes: 10, role: .written),
                               cutoff: RevisionVector([Self.own: 3, Self.other: 1]))
        #expect(try store.status(of: local[0].id) == .covered)
        #expect(try store.status(of: local[1].id) == .covered)
        // Not exported yet, or not integrated: never covered, whatever the cutoff says.
        #expect(try store.status(of: local[2].id) == .localUnexported)
        #expect(try store.status(of: downloaded.id) == .downloaded)
        #expect(try store.state().baselineID == summary.stem)
    }
}
