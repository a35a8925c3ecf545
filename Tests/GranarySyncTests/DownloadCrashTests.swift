import Foundation
import Testing
@_spi(CrashTesting) @testable import GranarySync

/// A child process downloads a shared folder's events and is killed with SIGKILL at random moments;
/// after each kill every imported event has its file name recorded and no name is recorded without its
/// event, and the next runs complete the download with every event stored once.
@Suite struct DownloadCrashTests {
    @Test func aKilledDownloadKeepsEachImportWithItsNameAndTheNextRunsFinishWithoutDuplicates() async throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let directory = scratch.appendingPathComponent("device")
        let root = directory.appendingPathComponent("cloud")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let cloud = LocalDirectoryFileSystem(rootDirectory: root)
        try await cloud.connect()
        let a = try TransferDevice("a", in: scratch, fileSystem: cloud)
        #expect(a.layout.ensembleIdentifier == DownloadCrashChild.ensembleIdentifier)
        try await a.leech()
        let events = try a.record(300)
        try await a.export()
        let byID = Dictionary(uniqueKeysWithValues: events.map { ($0.id, $0) })
        func fileName(_ event: Event) -> String {
            CloudFileName.event(globalCount: event.meta.globalCount, store: event.id.store, revision: event.id.revision, part: nil).fileName
        }

        var g = SplitMix(seed: 33)
        var previous = 0
        for round in 0..<6 {
            let outcome = try CrashChild.runAndKill(["sync-download", directory.path], afterLine: "started",
                                                    delay: Double.random(in: 0...0.15, using: &g))
            #expect(outcome.killed, "round \(round): the child was not killed: \(outcome.err)")
            let store = try EventStore.open(at: directory.appendingPathComponent("events.granary"))
            defer { try? store.close() }
            let downloaded = try store.events(withStatus: .downloaded)
            #expect(Set(downloaded.map(\.id)).count == downloaded.count, "round \(round): an event stored twice")
            for event in downloaded { #expect(byID[event.id] == event, "round \(round): \(event.id) altered") }
            // One commit for both: the names recorded are exactly the events' files.
            #expect(try store.remoteFileNames() == Set(downloaded.map(fileName)), "round \(round)")
            #expect(try store.state().maxGlobalCount == downloaded.map(\.meta.globalCount).max() ?? 0, "round \(round)")
            #expect(downloaded.count >= previous, "round \(round): imports lost")
            previous = downloaded.count
            if outcome.lines.contains("done") { break }
        }

        // The next merge finishes, downloading only what is missing.
        let b = try TransferDevice("device", in: scratch, fileSystem: cloud)
        let report = try await b.download()
        #expect(report.imported.count == events.count - previous)
        #expect(report.downloadedFiles == events.count - previous)
        #expect(try b.store.events(withStatus: .downloaded) == events)
        #expect(try b.store.remoteFileNames().count == events.count)
    }
}
