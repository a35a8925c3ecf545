import Foundation
import Granary
import GranarySync

/// S1–S3: two devices in one process, each a durable store (durability `.full`) with persistent history
/// and its ensemble, syncing through a `LocalDirectoryFileSystem` in the scratch folder, so the bytes are
/// real files.
struct SyncBench {
    let options: BenchOptions
    let scratch: ScratchDirectory
    let progress: (String) -> Void

    var inserted: Int { options.isQuick ? 1_000 : 10_000 }
    var storeSize: Int { options.isQuick ? 10_000 : 100_000 }
    var changed: Int { options.isQuick ? 10 : 100 }
    var idleMerges: Int { options.isQuick ? 20 : 100 }

    struct Side {
        var export: Duration
        var `import`: Duration
        var bytes: Int64
        var properties: Int
    }

    struct Result {
        var inserted: Int, storeSize: Int, changed: Int, idleMerges: Int
        var s1: Side
        var s2: Side
        var s3: Duration
        var eventStoreBytes: Int64
        var residentAfterS1: Int
    }

    final class Device {
        let coordinator: PersistentStoreCoordinator
        let ensemble: PersistentStoreEnsemble
        let context: ManagedObjectContext
        let directory: URL

        init(_ name: String, in root: URL, model: ManagedObjectModel, cloud: LocalDirectoryFileSystem) throws {
            directory = root.appendingPathComponent(name, isDirectory: true)
            coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            let store = try coordinator.addPersistentStore(type: .durable, at: directory.appendingPathComponent("Items.granary"),
                                                           options: .init(durability: .full, persistentHistoryTracking: true))
            ensemble = try PersistentStoreEnsemble(ensembleIdentifier: "Bench", persistentStore: store, managedObjectModel: model,
                                                   cloudFileSystem: cloud,
                                                   configuration: EnsembleConfiguration(globalIdentifierAttribute: "uuid"))
            context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        }

        func count() throws -> Int {
            let fresh = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
            return try fresh.performAndWait { try fresh.count(for: FetchRequest<SyncItem>(entityName: "Item")) }
        }
    }

    /// Runs the async bench from the synchronous main program.
    func runBlocking() throws -> Result { try granary_bench.runBlocking(run) }

    func run() async throws -> Result {
        let root = try scratch.makeFolder("sync")
        let cloudURL = root.appendingPathComponent("cloud", isDirectory: true)
        try FileManager.default.createDirectory(at: cloudURL, withIntermediateDirectories: true)
        defer { scratch.remove(root) }
        let cloud = LocalDirectoryFileSystem(rootDirectory: cloudURL)
        let model = try SyncModel.make()
        let a = try Device("a", in: root, model: model, cloud: cloud)
        let b = try Device("b", in: root, model: model, cloud: cloud)
        try await a.ensemble.leech()
        try await b.ensemble.leech()

        progress("sync S1: \(inserted) new items on A")
        let before1 = Self.bytes(under: cloudURL)
        try insert(inserted, startingAt: 0, on: a)
        let s1Export = try await timed { try await a.ensemble.merge() }
        let s1Import = try await timed { try await b.ensemble.merge() }
        let residentAfterS1 = ResidentMemory.current()
        guard try b.count() == inserted else { throw BenchError.resultsDisagree(workload: "S1", detail: "B holds \(try b.count()) items, not \(inserted)") }
        let s1 = Side(export: s1Export, import: s1Import, bytes: Self.bytes(under: cloudURL) - before1,
                      properties: inserted * SyncModel.propertiesPerItem)

        progress("sync S2: filling both stores to \(storeSize) items (untimed)")
        try insert(storeSize - inserted, startingAt: inserted, on: a)
        try await a.ensemble.merge()
        try await b.ensemble.merge()
        guard try b.count() == storeSize else { throw BenchError.resultsDisagree(workload: "S2", detail: "B holds \(try b.count()) items") }
        progress("sync S2: \(changed) changed items")
        try a.context.performAndWait {
            var request = FetchRequest<SyncItem>(entityName: "Item")
            request.fetchLimit = changed
            for item in try a.context.fetch(request) { item.count += 1_000_000 }
            try a.context.save()
        }
        let before2 = Self.bytes(under: cloudURL)
        let s2Export = try await timed { try await a.ensemble.merge() }
        let s2Import = try await timed { try await b.ensemble.merge() }
        let s2 = Side(export: s2Export, import: s2Import, bytes: Self.bytes(under: cloudURL) - before2, properties: changed)
        let moved = try b.context.performAndWait {
            try b.context.fetch(FetchRequest<SyncItem>(entityName: "Item")).filter { $0.count >= 1_000_000 }.count
        }
        guard moved == changed else { throw BenchError.resultsDisagree(workload: "S2", detail: "B has \(moved) changed items, not \(changed)") }

        progress("sync S3: \(idleMerges) merges with nothing changed")
        var idle: [Duration] = []
        for _ in 0..<idleMerges { idle.append(try await timed { try await a.ensemble.merge() }) }
        let eventStoreBytes = Self.bytes(under: a.directory.appendingPathComponent("Items.granary.sync", isDirectory: true))
        a.ensemble.dismantle()
        b.ensemble.dismantle()
        return Result(inserted: inserted, storeSize: storeSize, changed: changed, idleMerges: idleMerges, s1: s1, s2: s2,
                      s3: Stopwatch.median(idle), eventStoreBytes: eventStoreBytes, residentAfterS1: residentAfterS1)
    }

    private func insert(_ count: Int, startingAt first: Int, on device: Device) throws {
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        try device.context.performAndWait {
            let context = device.context
            var folders: [SyncFolder] = try context.fetch(FetchRequest<SyncFolder>(entityName: "Folder"))
            if folders.isEmpty {
                folders = (0..<SyncModel.folders).map { index in
                    let folder = SyncFolder(context: context)
                    folder.uuid = "folder-\(index)"
                    folder.name = "Folder \(index)"
                    return folder
                }
            }
            for index in first..<(first + count) {
                let item = SyncItem(context: context)
                item.uuid = "item-\(index)"
                item.name = "Item \(index)"
                item.count = index
                item.date = start.addingTimeInterval(Double(index))
                item.note = "a note of about forty characters, \(index)"
                item.folder = folders[index % folders.count]
            }
            try context.save()
            context.reset()
        }
    }

    private func timed(_ body: () async throws -> Void) async throws -> Duration {
        let clock = ContinuousClock()
        let start = clock.now
        try await body()
        return clock.now - start
    }

    static func bytes(under url: URL) -> Int64 {
        guard let walker = FileManager.default.enumerator(at: url, includingPropertiesForKeys: [.fileSizeKey]) else { return 0 }
        var total: Int64 = 0
        for case let file as URL in walker {
            total += Int64((try? file.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0)
        }
        return total
    }
}
