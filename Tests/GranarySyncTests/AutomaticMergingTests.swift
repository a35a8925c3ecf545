import Foundation
import Granary
@testable import GranarySync
import Testing

/// Ensembles that merge by themselves: after local saves (noticed from history, whoever saved) and by
/// polling the cloud.
@Suite struct AutomaticMergingTests {
    static func configuration(_ merging: AutomaticMerging) -> EnsembleConfiguration {
        EnsembleConfiguration(globalIdentifierAttribute: "uniqueIdentifier", automaticMerging: merging)
    }

    /// Waits until `condition` holds, checking every 20 ms, for at most `seconds`. Generous on purpose:
    /// automatic merges run as tasks on Swift's cooperative pool, which has one thread per core (two
    /// here), and in a full parallel test run long synchronous tests can hold both threads for minutes
    /// (a stack dump of such a run showed two property tests doing so), so the merges wait. The deadline
    /// only guards against a merge that never comes.
    static func eventually(_ seconds: Double = 400, _ condition: () throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if try condition() { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return try condition()
    }

    func pair(_ a: AutomaticMerging, _ b: AutomaticMerging) async throws -> (URL, SyncTestDevice, SyncTestDevice) {
        let root = try makeScratchDirectory()
        let cloud = MemoryFileSystem()
        let model = try syncNotesModel()
        let laptop = try SyncTestDevice("laptop", in: root, model: model, cloud: cloud, configuration: Self.configuration(a))
        let phone = try SyncTestDevice("phone", in: root, model: model, cloud: cloud, configuration: Self.configuration(b))
        try await laptop.ensemble.leech()
        try await phone.ensemble.leech()
        return (root, laptop, phone)
    }

    @Test func aLocalSaveIsSentAndAPollingDeviceReceivesIt() async throws {
        let (root, laptop, phone) = try await pair(.afterLocalSaves(delay: .milliseconds(30)), .polling(interval: .milliseconds(100)))
        defer { removeScratch(root) }
        try laptop.addNote("sent by itself", id: "n1", folder: "F")
        let arrived = try await Self.eventually { try phone.graph().nodes["Note/n1"] != nil }
        #expect(arrived, "the phone never received the note; failures: laptop \(laptop.recorder.automaticFailures), phone \(phone.recorder.automaticFailures); statuses \(laptop.ensemble.status), \(phone.ensemble.status)")
        #expect(try phone.graph() == (try laptop.graph()))
        // The delegate hears of the merge just after its save, which the graph already shows.
        let told = try await Self.eventually { phone.recorder.changes.contains { !$0.inserted.isEmpty } }
        #expect(told, "the phone's delegate was told")
        laptop.ensemble.dismantle()
        phone.ensemble.dismantle()
    }

    /// M31: a thread saving again and again while merges run; every acknowledged save reaches the other
    /// device, none is lost or duplicated.
    @Test func savesMadeWhileMergesRunAreAllSent() async throws {
        let (root, laptop, phone) = try await pair(.afterLocalSaves(delay: .milliseconds(10)), .polling(interval: .milliseconds(50)))
        defer { removeScratch(root) }
        let count = 30
        for index in 0..<count {
            try laptop.addNote("note \(index)", id: "n\(index)", tags: index % 3 == 0 ? ["third"] : [])
            try await Task.sleep(for: .milliseconds(Int.random(in: 0...15)))
        }
        let arrived = try await Self.eventually {
            try phone.graph().nodes.keys.filter { $0.hasPrefix("Note/") }.count == count
        }
        let received = try phone.graph().nodes.keys.filter { $0.hasPrefix("Note/") }.count
        #expect(arrived, "only \(received) of \(count) notes arrived; failures: laptop \(laptop.recorder.automaticFailures), phone \(phone.recorder.automaticFailures)")
        let settled = try await Self.eventually { try phone.graph() == (try laptop.graph()) }
        #expect(settled)
        #expect(try phone.graph().duplicates.isEmpty)
        laptop.ensemble.dismantle()
        phone.ensemble.dismantle()
    }

    @Test func manualMergingSendsNothingByItself() async throws {
        let (root, laptop, phone) = try await pair(.manual, .manual)
        defer { removeScratch(root) }
        try laptop.addNote("stays until merged", id: "n1")
        try await Task.sleep(for: .milliseconds(300))
        try await phone.ensemble.merge()
        #expect(try phone.graph().nodes["Note/n1"] == nil)
        try await laptop.ensemble.merge()
        try await phone.ensemble.merge()
        #expect(try phone.graph().nodes["Note/n1"] != nil)
    }

    @Test func aDeleechedEnsembleStopsMergingByItself() async throws {
        let (root, laptop, phone) = try await pair(.afterLocalSaves(delay: .milliseconds(10)), .manual)
        defer { removeScratch(root) }
        try await laptop.ensemble.deleech()
        try laptop.addNote("not synced", id: "n1")
        try await Task.sleep(for: .milliseconds(300))
        try await phone.ensemble.merge()
        #expect(try phone.graph().nodes["Note/n1"] == nil)
        #expect(laptop.recorder.automaticFailures.isEmpty, "\(laptop.recorder.automaticFailures)")
    }
}
