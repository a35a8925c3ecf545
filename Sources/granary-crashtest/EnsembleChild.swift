import Foundation
import Granary
@_spi(CrashTesting) import GranarySync

/// The ensemble crash child: one device of a synced pair, saving and merging through a shared folder
/// until the parent kills it with SIGKILL — during a save, a capture, a download, the merge's store save
/// or an upload (of an event or of a data file: every other note has a large value), wherever the kill
/// lands. Each committed save prints `saved <id>`; each merge prints
/// `merging` before it starts and `merged` after it returns. The parent then reopens the store, merges
/// both devices until quiet and checks that every acknowledged save reached the other device once.
///
/// `granary-crashtest sync-device <device-directory> <shared-folder> <seed>`
func runEnsembleChild(_ args: [String]) -> Never {
    guard args.count >= 2 else {
        FileHandle.standardError.write(Data("usage: granary-crashtest sync-device <device-directory> <shared-folder> [seed]\n".utf8))
        exit(2)
    }
    let device = URL(fileURLWithPath: args[0])
    let folder = URL(fileURLWithPath: args[1])
    // The seed also names this run's notes, so that two runs never make one global identifier.
    let seed = args.count > 2 ? Int(args[2]) ?? 1 : 1
    CrashChildProcess.run("sync-device child") {
        do {
            try await runEnsembleDevice(device: device, folder: folder, seed: seed)
        } catch {
            say("error \(error)")      // on standard output too: the parent reads only that
            throw error
        }
    }
}

private func runEnsembleDevice(device: URL, folder: URL, seed: Int) async throws {
    var random = seed &* 0x9E37_79B9 | 1
    func next(_ bound: Int) -> Int {
        random ^= random << 13
        random ^= random >> 7
        random ^= random << 17
        return Int(UInt(bitPattern: random) % UInt(bound))
    }
    let model = try ensembleCrashModel()
    let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
    let store = try coordinator.addPersistentStore(type: .durable, at: device.appendingPathComponent("store.granary"),
                                                   options: .init(persistentHistoryTracking: true))
    let ensemble = try PersistentStoreEnsemble(ensembleIdentifier: "Crash", persistentStore: store, managedObjectModel: model,
                                               cloudFileSystem: LocalDirectoryFileSystem(rootDirectory: folder),
                                               configuration: EnsembleConfiguration(globalIdentifierAttribute: "uniqueIdentifier"))
    if !ensemble.isLeeched {
        say("leeching")
        try await ensemble.leech()
        say("leeched")
    }
    let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
    let name = device.lastPathComponent
    var round = 0
    while true {
        round += 1
        let id = "\(name)-\(seed)-\(round)"
        try context.performAndWait {
            let notes = try context.fetch(FetchRequest<ManagedObject>(entityName: "Note"))
            let note = ManagedObject(entity: model.entity(named: "Note")!, insertInto: context)
            try note.setValue(id, forKey: "uniqueIdentifier")
            try note.setValue("written by \(name)", forKey: "text")
            // Every other note carries a value large enough to travel as a data file (M15).
            if round % 2 == 0 { try note.setValue(ensembleCrashAttachment(for: id), forKey: "attachment") }
            if !notes.isEmpty {
                try notes[next(notes.count)].setValue("edited by \(name) in round \(round)", forKey: "text")
            }
            try context.save()
            context.reset()
        }
        say("saved \(id)")
        if next(3) == 0 {
            say("merging")
            try await ensemble.merge()
            say("merged")
        }
    }
}

/// The model of the ensemble crash child; the test opens the stores with the same model.
func ensembleCrashModel() throws -> ManagedObjectModel {
    try ManagedObjectModel(version: "1") {
        Entity("Note") {
            Attribute("uniqueIdentifier", .string)
            Attribute("text", .string)
            Attribute("attachment", .binaryData, optional: true)
        }
    }
}

/// The large value of note `id` (the test computes the same bytes to check what arrived).
func ensembleCrashAttachment(for id: String) -> Data {
    let text = Array(id.utf8)
    return Data((0..<12_000).map { text[$0 % text.count] ^ UInt8(truncatingIfNeeded: $0) })
}
