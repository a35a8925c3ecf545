import Foundation
import Synchronization
import Testing
import GranarySync

// The code of the article "Cloud file systems": a custom backend, sketched over WebDAV, compiled and
// run against a fake server here.

// snippet: webdav-session
/// The WebDAV calls a cloud file system needs; an app implements them with URLSession (PROPFIND's XML
/// parsed into resources). A failed request throws its HTTP status.
protocol WebDAVSession: Sendable {
    /// The resource at `path` and, with `depth` 1, its children; nil when the server answers 404.
    func propfind(_ path: String, depth: Int) async throws(WebDAVStatus) -> [WebDAVResource]?
    func mkcol(_ path: String) async throws(WebDAVStatus)
    func put(_ data: Data, at path: String) async throws(WebDAVStatus)
    func move(_ path: String, to destination: String) async throws(WebDAVStatus)   // Overwrite: T
    func get(_ path: String) async throws(WebDAVStatus) -> Data
    func delete(_ path: String) async throws(WebDAVStatus)
}

struct WebDAVResource: Sendable {
    var path: String
    var isCollection: Bool
    var length: Int64
}

struct WebDAVStatus: Error {
    var code: Int          // 0: no response
}
// end-snippet

// snippet: webdav-file-system
struct WebDAVFileSystem: CloudFileSystem {
    let session: any WebDAVSession
    let account: String                 // the login: a different account is different data

    var isConnected: Bool { true }      // each request authenticates itself

    func connect() async throws(CloudFileSystemError) {
        _ = try await map("") { () throws(WebDAVStatus) in try await session.propfind("", depth: 0) }
    }

    func fetchUserIdentity() async throws(CloudFileSystemError) -> CloudIdentity? {
        CloudIdentity(account)
    }

    func fileExists(atPath path: String) async throws(CloudFileSystemError) -> FileExistence {
        let found = try await map(path) { () throws(WebDAVStatus) in try await session.propfind(path, depth: 0) }
        guard let resource = found?.first else { return .none }
        return resource.isCollection ? .directory : .file
    }

    func createDirectory(atPath path: String) async throws(CloudFileSystemError) {
        var current = ""
        for component in path.split(separator: "/") {       // MKCOL makes one level at a time
            current += (current.isEmpty ? "" : "/") + component
            switch try await fileExists(atPath: current) {
            case .directory: continue
            case .file: throw .notADirectory(path: current)
            default: try await map(current) { () throws(WebDAVStatus) in try await session.mkcol(current) }
            }
        }
    }

    func contentsOfDirectory(atPath path: String) async throws(CloudFileSystemError) -> [CloudItem] {
        let found = try await map(path) { () throws(WebDAVStatus) in try await session.propfind(path, depth: 1) }
        guard let found, let own = found.first else { throw .notFound(path: path) }
        guard own.isCollection else { throw .notADirectory(path: path) }
        return found.dropFirst().compactMap { resource in
            let name = String(resource.path.split(separator: "/").last ?? "")
            if name.hasPrefix(".") { return nil }                // uploads in progress
            return resource.isCollection ? .directory(name: name) : .file(name: name, size: resource.length)
        }.sorted { $0.name < $1.name }
    }

    func removeItem(atPath path: String) async throws(CloudFileSystemError) {
        do {
            try await session.delete(path)                        // recursive for a collection
        } catch where error.code == 404 {
            return                                                // already gone: success
        } catch {
            throw Self.error(error, path)
        }
    }

    func uploadLocalFile(at localURL: URL, toPath remotePath: String) async throws(CloudFileSystemError) {
        let data: Data
        do { data = try Data(contentsOf: localURL) } catch {
            throw .localFile(path: localURL.path, reason: "cannot be read")
        }
        // PUT is not atomic on every server: write a hidden name, then MOVE it onto the real one.
        let parent = remotePath.split(separator: "/").dropLast().joined(separator: "/")
        let name = remotePath.split(separator: "/").last.map(String.init) ?? remotePath
        let temp = (parent.isEmpty ? "" : parent + "/") + ".\(name).\(UUID().uuidString).part"
        try await map(remotePath) { () throws(WebDAVStatus) in try await session.put(data, at: temp) }
        try await map(remotePath) { () throws(WebDAVStatus) in try await session.move(temp, to: remotePath) }
    }

    func downloadFile(atPath remotePath: String, toLocalFile localURL: URL) async throws(CloudFileSystemError) {
        let data = try await map(remotePath) { () throws(WebDAVStatus) in try await session.get(remotePath) }
        do { try data.write(to: localURL, options: .atomic) } catch {
            throw .localFile(path: localURL.path, reason: "cannot be written")
        }
    }

    private func map<T>(_ path: String, _ body: () async throws(WebDAVStatus) -> T) async throws(CloudFileSystemError) -> T {
        do { return try await body() } catch { throw Self.error(error, path) }
    }

    private static func error(_ status: WebDAVStatus, _ path: String) -> CloudFileSystemError {
        switch status.code {
        case 404, 409: .notFound(path: path)               // 409: a parent collection is missing
        case 401, 403: .permissionDenied(path: path)
        default: .unavailable(reason: "HTTP \(status.code) at \(path)")   // 0, 5xx: retry later
        }
    }
}
// end-snippet

/// A WebDAV server in memory, with the status codes of RFC 4918 for the cases the sketch meets.
final class FakeWebDAVServer: WebDAVSession {
    private let state = Mutex((files: [String: Data](), collections: Set<String>([""])))
    private static func parent(_ path: String) -> String { path.split(separator: "/").dropLast().joined(separator: "/") }

    func propfind(_ path: String, depth: Int) async throws(WebDAVStatus) -> [WebDAVResource]? {
        state.withLock { state in
            if let data = state.files[path] { return [WebDAVResource(path: path, isCollection: false, length: Int64(data.count))] }
            guard state.collections.contains(path) else { return nil }
            var result = [WebDAVResource(path: path, isCollection: true, length: 0)]
            if depth == 1 {
                result += state.files.filter { Self.parent($0.key) == path && !$0.key.isEmpty }
                    .map { WebDAVResource(path: $0.key, isCollection: false, length: Int64($0.value.count)) }
                result += state.collections.filter { !$0.isEmpty && Self.parent($0) == path }
                    .map { WebDAVResource(path: $0, isCollection: true, length: 0) }
            }
            return result
        }
    }

    func mkcol(_ path: String) async throws(WebDAVStatus) {
        try state.withLock { (state) throws(WebDAVStatus) in
            guard state.collections.contains(Self.parent(path)) else { throw WebDAVStatus(code: 409) }
            guard !state.collections.contains(path), state.files[path] == nil else { throw WebDAVStatus(code: 405) }
            state.collections.insert(path)
        }
    }

    func put(_ data: Data, at path: String) async throws(WebDAVStatus) {
        try state.withLock { (state) throws(WebDAVStatus) in
            guard state.collections.contains(Self.parent(path)) else { throw WebDAVStatus(code: 409) }
            state.files[path] = data
        }
    }

    func move(_ path: String, to destination: String) async throws(WebDAVStatus) {
        try state.withLock { (state) throws(WebDAVStatus) in
            guard let data = state.files.removeValue(forKey: path) else { throw WebDAVStatus(code: 404) }
            state.files[destination] = data
        }
    }

    func get(_ path: String) async throws(WebDAVStatus) -> Data {
        try state.withLock { (state) throws(WebDAVStatus) -> Data in
            guard let data = state.files[path] else { throw WebDAVStatus(code: 404) }
            return data
        }
    }

    func delete(_ path: String) async throws(WebDAVStatus) {
        try state.withLock { (state) throws(WebDAVStatus) in
            if state.files.removeValue(forKey: path) != nil { return }
            guard state.collections.contains(path) else { throw WebDAVStatus(code: 404) }
            state.collections = state.collections.filter { $0 != path && !$0.hasPrefix(path + "/") }
            state.files = state.files.filter { !$0.key.hasPrefix(path + "/") }
        }
    }

    var paths: [String] { state.withLock { $0.files.keys.sorted() } }
}

@Suite struct CloudFileSystemsArticleTests {
    @Test func theWebDAVSketchKeepsTheContractsEssentials() async throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let server = FakeWebDAVServer()
        let fileSystem = WebDAVFileSystem(session: server, account: "alice@example.com")
        try await fileSystem.connect()
        #expect(try await fileSystem.fetchUserIdentity() == CloudIdentity("alice@example.com"))
        try await fileSystem.createDirectory(atPath: "Notes/events")
        try await fileSystem.createDirectory(atPath: "Notes/events")
        let content = Data("event bytes".utf8)
        try await fileSystem.uploadLocalFile(at: try localFile(content, in: scratch), toPath: "Notes/events/1_A_1.gsevent")
        #expect(server.paths == ["Notes/events/1_A_1.gsevent"], "the temp name was moved away")
        #expect(try await fileSystem.contentsOfDirectory(atPath: "Notes") == [.directory(name: "events")])
        #expect(try await fileSystem.contentsOfDirectory(atPath: "Notes/events") == [.file(name: "1_A_1.gsevent", size: Int64(content.count))])
        let copy = scratch.appendingPathComponent("copy")
        try await fileSystem.downloadFile(atPath: "Notes/events/1_A_1.gsevent", toLocalFile: copy)
        #expect(try Data(contentsOf: copy) == content)
        await #expect(throws: CloudFileSystemError.notFound(path: "Notes/missing")) { try await fileSystem.contentsOfDirectory(atPath: "Notes/missing") }
        await #expect(throws: CloudFileSystemError.notFound(path: "nowhere/f")) {
            try await fileSystem.uploadLocalFile(at: copy, toPath: "nowhere/f")
        }
        try await fileSystem.removeItem(atPath: "Notes")
        try await fileSystem.removeItem(atPath: "Notes")
        #expect(try await fileSystem.fileExists(atPath: "Notes/events/1_A_1.gsevent") == .none)
    }
}
