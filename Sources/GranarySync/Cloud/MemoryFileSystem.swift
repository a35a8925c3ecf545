import Foundation

/// A cloud file system held in memory, for tests: several "devices" of one test share one instance, and
/// faults can be injected into any operation.
///
/// It keeps the contract of ``CloudFileSystem`` exactly as ``LocalDirectoryFileSystem`` does (the same
/// contract tests run against both), so that a test passing here says something about a real folder.
public actor MemoryFileSystem: CloudFileSystem {
    /// An operation of ``CloudFileSystem``, to name in ``failNext(_:with:)``.
    public enum Operation: Sendable, Hashable, CaseIterable {
        case connect, fetchUserIdentity, fileExists, createDirectory, contentsOfDirectory, removeItem, upload, download
    }

    private var files: [String: Data] = [:]
    private var directories: Set<String> = []
    private var identity: CloudIdentity?
    private var faults: [Operation: [CloudFileSystemError]] = [:]
    private var connected = false

    /// An empty file system whose identity is `identity` (a random one by default).
    public init(identity: CloudIdentity? = CloudIdentity(UUID().uuidString)) {
        self.identity = identity
    }

    public var isConnected: Bool { connected }

    /// Connects; always succeeds unless a fault is injected.
    /// - Throws: an error injected with ``failNext(_:with:)``.
    public func connect() async throws(CloudFileSystemError) {
        try injectedFault(.connect)
        connected = true
    }

    /// The identity given at init or by ``setIdentity(_:)``.
    /// - Throws: ``CloudFileSystemError/notConnected``, or an injected error.
    public func fetchUserIdentity() async throws(CloudFileSystemError) -> CloudIdentity? {
        try ready(.fetchUserIdentity)
        return identity
    }

    /// Whether a file or directory is at `path`.
    /// - Throws: ``CloudFileSystemError/notConnected``, `invalidPath`, or an injected error.
    public func fileExists(atPath path: String) async throws(CloudFileSystemError) -> FileExistence {
        try ready(.fileExists)
        let components = try CloudPath.components(path)
        let key = components.joined(separator: "/")
        if key.isEmpty || directories.contains(key) { return .directory }
        return files[key] != nil ? .file : .none
    }

    /// Creates the directory and those above it; an existing one is success.
    /// - Throws: ``CloudFileSystemError/notADirectory(path:)`` when a file is in the way, `notConnected`,
    ///   `invalidPath`, or an injected error.
    public func createDirectory(atPath path: String) async throws(CloudFileSystemError) {
        try ready(.createDirectory)
        let components = try CloudPath.components(path)
        for depth in components.indices {
            let prefix = components[...depth].joined(separator: "/")
            guard files[prefix] == nil else { throw .notADirectory(path: prefix) }
        }
        for depth in components.indices { directories.insert(components[...depth].joined(separator: "/")) }
    }

    /// The files and directories directly in `path`, sorted by name.
    /// - Throws: ``CloudFileSystemError/notFound(path:)``, `notADirectory`, `notConnected`, `invalidPath`,
    ///   or an injected error.
    public func contentsOfDirectory(atPath path: String) async throws(CloudFileSystemError) -> [CloudItem] {
        try ready(.contentsOfDirectory)
        let key = try CloudPath.components(path).joined(separator: "/")
        guard key.isEmpty || directories.contains(key) else {
            throw files[key] != nil ? .notADirectory(path: path) : .notFound(path: path)
        }
        let prefix = key.isEmpty ? "" : key + "/"
        func child(_ full: String) -> String? {
            guard full.hasPrefix(prefix) else { return nil }
            let rest = full.dropFirst(prefix.count)
            return rest.contains("/") ? nil : String(rest)
        }
        let items = files.compactMap { full, data in child(full).map { CloudItem.file(name: $0, size: Int64(data.count)) } }
            + directories.compactMap { child($0).map { CloudItem.directory(name: $0) } }
        return items.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    }

    /// Removes the file, or the directory and everything under it; a missing item is success.
    /// - Throws: `notConnected`, `invalidPath` (the root included), or an injected error.
    public func removeItem(atPath path: String) async throws(CloudFileSystemError) {
        try ready(.removeItem)
        let key = try CloudPath.components(path, allowsRoot: false).joined(separator: "/")
        files[key] = nil
        if directories.remove(key) != nil {
            files = files.filter { !$0.key.hasPrefix(key + "/") }
            directories = directories.filter { !$0.hasPrefix(key + "/") }
        }
    }

    /// Stores the bytes of `localURL` at `remotePath` in one step.
    /// - Throws: ``CloudFileSystemError/notFound(path:)`` for a missing remote directory, `isADirectory`,
    ///   `localFile` for an unreadable local file, `notConnected`, `invalidPath`, or an injected error.
    public func uploadLocalFile(at localURL: URL, toPath remotePath: String) async throws(CloudFileSystemError) {
        try ready(.upload)
        let components = try CloudPath.components(remotePath, allowsRoot: false)
        let key = components.joined(separator: "/")
        let parent = CloudPath.parent(of: components)
        guard parent.isEmpty || directories.contains(parent) else {
            throw files[parent] != nil ? .notADirectory(path: parent) : .notFound(path: parent)
        }
        guard !directories.contains(key) else { throw .isADirectory(path: remotePath) }
        let data: Data
        do {
            data = try Data(contentsOf: localURL)
        } catch {
            throw .localFile(path: localURL.path, reason: "cannot be read (\(error.localizedDescription))")
        }
        files[key] = data
    }

    /// Writes the bytes at `remotePath` to `localURL`, atomically.
    /// - Throws: ``CloudFileSystemError/notFound(path:)``, `isADirectory`, `localFile` when the local
    ///   file cannot be written, `notConnected`, `invalidPath`, or an injected error.
    public func downloadFile(atPath remotePath: String, toLocalFile localURL: URL) async throws(CloudFileSystemError) {
        try ready(.download)
        let key = try CloudPath.components(remotePath, allowsRoot: false).joined(separator: "/")
        guard let data = files[key] else {
            throw directories.contains(key) ? .isADirectory(path: remotePath) : .notFound(path: remotePath)
        }
        do {
            try data.write(to: localURL, options: .atomic)
        } catch {
            throw .localFile(path: localURL.path, reason: "cannot be written (\(error.localizedDescription))")
        }
    }

    // MARK: For tests

    /// Makes the next call of `operation` throw `error` (calls queue up: two calls, two failures).
    public func failNext(_ operation: Operation, with error: CloudFileSystemError) {
        faults[operation, default: []].append(error)
    }

    /// Replaces the identity, as when the user logs in to another account.
    public func setIdentity(_ identity: CloudIdentity?) {
        self.identity = identity
    }

    /// Removes every file and directory, as when the user deletes the cloud data.
    public func removeAll() {
        files = [:]
        directories = []
    }

    /// Every file, by path: what a test compares or inspects.
    public func snapshotFiles() -> [String: Data] {
        files
    }

    /// Inverts one byte of the file at `path` (its middle byte), as a damaged copy would be; false when
    /// there is no nonempty file there.
    @discardableResult
    public func corrupt(path: String) -> Bool {
        guard var data = files[path], !data.isEmpty else { return false }
        let index = data.startIndex + data.count / 2
        data[index] = ~data[index]
        files[path] = data
        return true
    }

    /// Forgets the connection, as a lost session would.
    public func disconnect() {
        connected = false
    }

    private func injectedFault(_ operation: Operation) throws(CloudFileSystemError) {
        if var queued = faults[operation], !queued.isEmpty {
            let error = queued.removeFirst()
            faults[operation] = queued
            throw error
        }
    }

    private func ready(_ operation: Operation) throws(CloudFileSystemError) {
        try injectedFault(operation)
        guard connected else { throw .notConnected }
    }
}
