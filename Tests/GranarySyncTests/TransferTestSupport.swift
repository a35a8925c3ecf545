import Foundation
import Testing
@testable import GranarySync

/// One simulated device of the transfer tests: an event store and transit folders in a directory of its
/// own, with the checks, downloader and exporter of one ensemble on a cloud shared with other devices.
final class TransferDevice {
    let directory: URL
    let fileSystem: any CloudFileSystem
    let layout: CloudLayout
    let partPayloadLimit: Int
    let batchSize: Int
    private(set) var store: EventStore
    private(set) var checks: CloudChecks
    private(set) var downloader: Downloader
    private(set) var exporter: Exporter
    let transit: TransitDirectories
    let storeID: StoreID

    let contentCheckInterval: Int

    init(_ name: String, in scratch: URL, fileSystem: any CloudFileSystem, storeID: StoreID? = nil,
         partPayloadLimit: Int = SyncConstants.maximumPartPayload, batchSize: Int = 20, contentCheckInterval: Int = 50) throws {
        directory = scratch.appendingPathComponent(name)
        self.fileSystem = fileSystem
        let layout = try CloudLayout(ensembleIdentifier: "library")
        self.layout = layout
        self.partPayloadLimit = partPayloadLimit
        self.batchSize = batchSize
        self.contentCheckInterval = contentCheckInterval
        let transit = TransitDirectories(root: directory.appendingPathComponent("transit"))
        self.transit = transit
        try transit.prepare()
        let store = try EventStore.open(at: directory.appendingPathComponent("events.granary"), creatingWith: storeID)
        self.store = store
        self.storeID = try store.state().storeID
        (checks, downloader, exporter) = Self.components(fileSystem, layout, store, transit, partPayloadLimit, batchSize, contentCheckInterval)
    }

    private static func components(_ fileSystem: any CloudFileSystem, _ layout: CloudLayout, _ store: EventStore,
                                   _ transit: TransitDirectories, _ partPayloadLimit: Int, _ batchSize: Int,
                                   _ contentCheckInterval: Int)
        -> (CloudChecks, Downloader, Exporter) {
        (CloudChecks(fileSystem: fileSystem, layout: layout, eventStore: store, transit: transit),
         Downloader(fileSystem: fileSystem, layout: layout, eventStore: store, transit: transit, batchSize: batchSize),
         Exporter(fileSystem: fileSystem, layout: layout, eventStore: store, transit: transit,
                  registration: RegistrationInfo(modelHash: "model-1"), batchSize: batchSize, partPayloadLimit: partPayloadLimit,
                  contentCheckInterval: contentCheckInterval))
    }

    deinit { try? store.close() }


    /// The first leech, as far as transfer goes: the ensemble prepared and the identity recorded, then
    /// the state the leech's finalize leaves (leeched, not registered yet).
    func leech() async throws {
        try await checks.prepareForLeech()
        try store.setLeechState(.leeched)
    }

    /// The previous snapshot, which the next one is taken after, as the merge pipeline does.
    private(set) var lastSnapshot: CloudSnapshot?

    func snapshot() async throws -> CloudSnapshot {
        let snapshot = try await CloudSnapshot.take(of: fileSystem, layout: layout, after: lastSnapshot)
        lastSnapshot = snapshot
        return snapshot
    }

    @discardableResult
    func export() async throws -> Exporter.Report {
        try await exporter.export(against: snapshot())
    }

    @discardableResult
    func download() async throws -> Downloader.Report {
        try await downloader.download(snapshot())
    }

    /// What the integration step would do with the ready events, without a ledger: mark them integrated
    /// (and settle copies of integrated ones).
    @discardableResult
    func integrateReady(knownModelHashes: Set<String> = ["model-1"]) throws -> ReadinessCheck.Result {
        let result = try ReadinessCheck.run(on: store, knownModelHashes: knownModelHashes)
        try store.commit(EventStoreStep(integrated: result.ready.map(\.id)))
        return result
    }

    @discardableResult
    func record(_ count: Int, prefix: String = "b") throws -> [Event] {
        try (0..<count).map { i in
            let meta = try store.nextLocalMeta()
            let event = Event(meta: meta, changes: [.insert(ObjectKey("Book", "\(prefix)-\(meta.id.revision)-\(i)"),
                                                           ["title": .string("Title \(i) of \(meta.id)")])],
                              modelHash: "model-1")
            try store.recordLocalEvent(event)
            return event
        }
    }

    /// Closes and reopens the event store, with fresh components (nothing kept in memory), as a new
    /// process would.
    func reopen() throws {
        try store.close()
        try transit.prepare()
        store = try EventStore.open(at: directory.appendingPathComponent("events.granary"))
        lastSnapshot = nil
        (checks, downloader, exporter) = Self.components(fileSystem, layout, store, transit, partPayloadLimit, batchSize, contentCheckInterval)
    }

    /// Every event the store holds, any status, by ID.
    func allEvents() throws -> [EventID: Event] {
        var result: [EventID: Event] = [:]
        for status in EventStatus.allCases {
            for event in try store.events(withStatus: status) {
                #expect(result[event.id] == nil, "event \(event.id) stored twice")
                result[event.id] = event
            }
        }
        return result
    }
}

/// A cloud file system that forwards to another and can run a hook before each download or upload
/// (the folder disappearing mid-download), counting the calls.
actor InterruptingFileSystem: CloudFileSystem {
    let inner: any CloudFileSystem
    private(set) var downloads = 0
    private(set) var uploads = 0
    private var beforeDownload: (@Sendable (Int) async -> Void)?
    private var failUploadNumber: Int?

    init(_ inner: any CloudFileSystem) { self.inner = inner }

    func onDownload(_ hook: (@Sendable (Int) async -> Void)?) { beforeDownload = hook }
    /// Makes upload number `n` (counting from 1 since the start) fail with `.unavailable`.
    func failUpload(number n: Int?) { failUploadNumber = n }

    var isConnected: Bool { get async { await inner.isConnected } }
    func connect() async throws(CloudFileSystemError) { try await inner.connect() }
    func fetchUserIdentity() async throws(CloudFileSystemError) -> CloudIdentity? { try await inner.fetchUserIdentity() }
    func fileExists(atPath path: String) async throws(CloudFileSystemError) -> FileExistence { try await inner.fileExists(atPath: path) }
    func createDirectory(atPath path: String) async throws(CloudFileSystemError) { try await inner.createDirectory(atPath: path) }
    func contentsOfDirectory(atPath path: String) async throws(CloudFileSystemError) -> [CloudItem] {
        try await inner.contentsOfDirectory(atPath: path)
    }
    func removeItem(atPath path: String) async throws(CloudFileSystemError) { try await inner.removeItem(atPath: path) }
    func uploadLocalFile(at localURL: URL, toPath remotePath: String) async throws(CloudFileSystemError) {
        uploads += 1
        if uploads == failUploadNumber { throw .unavailable(reason: "upload \(uploads) interrupted by the test") }
        try await inner.uploadLocalFile(at: localURL, toPath: remotePath)
    }
    func downloadFile(atPath remotePath: String, toLocalFile localURL: URL) async throws(CloudFileSystemError) {
        downloads += 1
        await beforeDownload?(downloads)
        try await inner.downloadFile(atPath: remotePath, toLocalFile: localURL)
    }
}
