import Foundation
import PropertyBased
import Testing
@testable import GranarySync

/// Random runs of three devices recording, exporting, downloading and integrating through one cloud
/// that fails uploads and downloads and damages files, compared with a plain dictionary of every event
/// recorded: no device ever holds an event twice or altered, none loses one of its own, and once the
/// faults stop every device ends with every event (§12.3, §12.4).
@Suite struct TransferPropertyTests {
    static func run(seed: Int) async throws {
        var g = SplitMix(seed: seed)
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let cloud = MemoryFileSystem()
        var devices: [TransferDevice] = []
        for i in 0..<3 {
            let device = try TransferDevice("d\(i)", in: scratch, fileSystem: cloud, batchSize: Int.random(in: 1...4, using: &g),
                                            contentCheckInterval: 2)
            try await device.leech()
            devices.append(device)
        }
        var reference: [EventID: Event] = [:]

        func check(_ step: Int) throws {
            for (i, device) in devices.enumerated() {
                let held = try device.allEvents()
                for (id, event) in held { #expect(reference[id] == event, "seed \(seed) step \(step): device \(i) holds \(id) altered or unknown") }
                for (id, _) in reference where id.store == device.storeID {
                    #expect(held[id] != nil, "seed \(seed) step \(step): device \(i) lost its own \(id)")
                }
            }
        }

        for step in 0..<Int.random(in: 10...30, using: &g) {
            let device = devices[Int.random(in: 0..<devices.count, using: &g)]
            switch Int.random(in: 0..<10, using: &g) {
            case 0..<3:
                for event in try device.record(Int.random(in: 1...3, using: &g)) { reference[event.id] = event }
            case 3..<5:
                if Int.random(in: 0..<3, using: &g) == 0 { await cloud.failNext(.upload, with: .unavailable(reason: "injected")) }
                do { try await device.export() } catch let error as SyncError {
                    guard case .cloud = error else { throw error }
                }
            case 5..<8:
                if Int.random(in: 0..<3, using: &g) == 0 { await cloud.failNext(.download, with: .unavailable(reason: "injected")) }
                do { try await device.download() } catch let error as SyncError {
                    guard case .cloud = error else { throw error }
                }
                try device.integrateReady()
            case 8:
                let files = await cloud.snapshotFiles().filter { $0.key.hasSuffix(".gsevent") }.sorted { $0.key < $1.key }
                if let (path, bytes) = files.randomElement(using: &g) {
                    if Bool.random(using: &g) {
                        await cloud.corrupt(path: path)
                    } else {
                        let cut = try localFile(bytes.prefix(bytes.count / 2), in: scratch)
                        // An upload fault injected for an export that had nothing to send hits this upload.
                        _ = await Self.isInjected({ () async throws(CloudFileSystemError) in
                            try await cloud.uploadLocalFile(at: cut, toPath: path)
                        })
                    }
                }
            default:
                try device.reopen()
            }
            try check(step)
        }

        // The faults stop: faults injected for calls that never came are used up first.
        let probe = scratch.appendingPathComponent("probe")
        try Data().write(to: probe)
        while await Self.isInjected({ () async throws(CloudFileSystemError) in
            try await cloud.downloadFile(atPath: "missing", toLocalFile: probe)
        }) {}
        while await Self.isInjected({ () async throws(CloudFileSystemError) in
            try await cloud.uploadLocalFile(at: probe, toPath: "missing/file")
        }) {}
        // A few rounds of merges bring every device everything (writers repair their
        // damaged files within two exports: the content check runs every second one).
        for _ in 0..<4 {
            for device in devices {
                try await device.export()
                try await device.export()
            }
            for device in devices {
                try await device.download()
                try device.integrateReady()
            }
        }
        try check(-1)
        for (i, device) in devices.enumerated() {
            let held = try device.allEvents()
            #expect(held.count == reference.count, "seed \(seed): device \(i) holds \(held.count) of \(reference.count) events")
            #expect(try device.store.events(withStatus: .localUnexported).isEmpty, "seed \(seed): device \(i)")
            #expect(try device.store.events(withStatus: .downloaded).isEmpty, "seed \(seed): device \(i) has events waiting")
        }
    }

    /// Whether `call` failed with the fault these runs inject.
    static func isInjected(_ call: () async throws(CloudFileSystemError) -> Void) async -> Bool {
        do { try await call() } catch { return error == .unavailable(reason: "injected") }
        return false
    }

    @Test func noEventIsLostDuplicatedOrAlteredWhateverTheCloudDoes() async {
        await propertyCheck(count: 10, input: Gen.int(in: 0...Int.max)) { seed in
            do { try await Self.run(seed: seed) } catch { Issue.record("seed \(seed): \(error)") }
        }
    }
}
