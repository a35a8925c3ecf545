import Foundation
import Testing
@testable import GranarySync

/// The joiner's one rule on hand-made cases (M32): an item one side holds and the other lacks survives
/// only if the other side's vector does not cover the event that made it.
@Suite struct BaselineJoinerTests {
    static let a = orderedStores[0], b = orderedStores[1]
    static let book = ObjectKey("Book", "b1"), tag = ObjectKey("Tag", "t1"), tag2 = ObjectKey("Tag", "t2")

    /// A1 inserts b1 with t1; then B (having A1) and A (alone) edit concurrently: B1 retitles b1 and
    /// removes t1, A2 adds t2. The baseline holds A1 and B1; the device holds A1 and A2.
    static func history() -> (a1: Event, a2: Event, b1: Event) {
        var deviceA = LedgerTestDevice(store: a), deviceB = LedgerTestDevice(store: b)
        let a1 = deviceA.record([.insert(book, ["title": .string("Solaris")], adds: ["tags": [.member(tag)]]),
                                 .insert(tag, ["name": .string("sf")]), .insert(tag2, ["name": .string("pl")])])
        deviceB.learn(a1)
        let b1 = deviceB.record([.update(book, ["title": .string("Solaris!")], removes: ["tags": [tag]])])
        let a2 = deviceA.record([.update(book, ["year": .integer(1961)], adds: ["tags": [.member(tag2)]])])
        return (a1, a2, b1)
    }

    @Test func writesSupersededAndAddsCancelledOnTheCoveringSideAreDropped_M32() {
        let (a1, a2, b1) = Self.history()
        let baseline = Baseline(writer: Self.b, globalCount: b1.meta.globalCount, vector: RevisionVector([Self.a: 1, Self.b: 1]),
                                ledger: integrated([a1, b1]).ledger)
        var device = integrated([a1, a2]).ledger
        let vector = BaselineJoiner.join(baseline, into: &device, integrated: RevisionVector([Self.a: 2]))
        #expect(vector == RevisionVector([Self.a: 2, Self.b: 1]))
        #expect(device == integrated([a1, a2, b1]).ledger)
        let object = device.object(Self.book)
        // A1's title, superseded by B1 on the baseline's side, is gone; A2's year, which B did not see, stays.
        #expect(object?.attributes["title"]?.candidates.map(\.op.id) == [b1.id])
        #expect(object?.attributes["year"]?.candidates.map(\.op.id) == [a2.id])
        // A1's add of t1, cancelled by B1, is gone; A2's add of t2 stays.
        #expect(object?.members["tags"]?[Self.tag] == nil)
        #expect(object?.members["tags"]?[Self.tag2]?.adds.map(\.op.id) == [a2.id])
    }

    @Test func anIncarnationMissingFromACoveringSideCountsAsKilled_M32() {
        var deviceA = LedgerTestDevice(store: Self.a), deviceB = LedgerTestDevice(store: Self.b)
        let a1 = deviceA.record([.insert(Self.book, ["title": .string("Solaris")])])
        deviceB.learn(a1)
        let b1 = deviceB.record([.delete(Self.book)])
        // A baseline whose writer collected the dead incarnation: its vector covers A1, its ledger lacks it.
        var collected = integrated([a1, b1]).ledger
        collected.update(Self.book) { $0.incarnations = [] }
        let baseline = Baseline(writer: Self.b, globalCount: 2, vector: deviceB.known, ledger: collected)
        var device = integrated([a1]).ledger
        _ = BaselineJoiner.join(baseline, into: &device, integrated: RevisionVector([Self.a: 1]))
        #expect(device.object(Self.book)?.incarnations.map(\.isKilled) == [true])
        #expect(Projection(of: device, schema: libraryLedgerSchema).objects[Self.book] == nil)
    }
}
