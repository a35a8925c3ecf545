import Foundation

/// The local folders files pass through on their way to and from the cloud (§3):
/// `<transit>/download` (downloads land here, are verified, imported, then deleted) and
/// `<transit>/upload` (event bytes staged for upload).
///
/// Merges of one ensemble never overlap and one ensemble holds a store, so anything found here when a
/// merge starts was left by a run that was killed: `prepare()` removes it.
struct TransitDirectories: Hashable, Sendable {
    let root: URL

    /// The folders under `root` (by convention `<local data>/transit`, beside `events.granary`).
    init(root: URL) { self.root = root.standardizedFileURL }

    var download: URL { root.appendingPathComponent("download", isDirectory: true) }
    var upload: URL { root.appendingPathComponent("upload", isDirectory: true) }

    /// Creates both folders and removes every file in them, returning how many were removed.
    /// - Throws: `SyncError.eventStore` naming the folder when it cannot be made or emptied.
    @discardableResult
    func prepare() throws(SyncError) -> Int {
        var removed = 0
        for directory in [download, upload] {
            let manager = FileManager.default
            do {
                try manager.createDirectory(at: directory, withIntermediateDirectories: true)
                for name in try manager.contentsOfDirectory(atPath: directory.path) {
                    try manager.removeItem(at: directory.appendingPathComponent(name))
                    removed += 1
                }
            } catch {
                throw .eventStore("transit folder \(directory.path): cannot be prepared (\(error.localizedDescription))")
            }
        }
        return removed
    }

    /// Writes `bytes` to `upload/<name>`, replacing a file there, and returns its URL.
    /// - Throws: `SyncError.eventStore` naming the file.
    func stageUpload(_ bytes: Data, name: String) throws(SyncError) -> URL {
        let url = upload.appendingPathComponent(name)
        do { try bytes.write(to: url, options: .atomic) } catch {
            throw .eventStore("transit file \(url.path): cannot be written (\(error.localizedDescription))")
        }
        return url
    }

    /// Downloads `remotePath` to `download/<name>`, reads it and deletes the local copy.
    /// - Throws: `CloudFileSystemError` from the download, `.localFile` when the copy cannot be read.
    func fetch(_ remotePath: String, name: String, from fileSystem: any CloudFileSystem) async throws(CloudFileSystemError) -> Data {
        let url = download.appendingPathComponent(name)
        defer { try? FileManager.default.removeItem(at: url) }
        try await fileSystem.downloadFile(atPath: remotePath, toLocalFile: url)
        do { return try Data(contentsOf: url) } catch {
            throw .localFile(path: url.path, reason: "cannot be read (\(error.localizedDescription))")
        }
    }

    /// Removes the hidden temp files of uploads killed before their rename, older than `age` seconds,
    /// under `path`, where the backend can see them (``LocalDirectoryFileSystem``; other backends' uploads
    /// leave nothing visible to clean). Returns how many were removed.
    /// - Throws: `SyncError.cloud`.
    @discardableResult
    static func removeAbandonedUploads(on fileSystem: any CloudFileSystem, under path: String,
                                       olderThan age: TimeInterval = 3600) async throws(SyncError) -> Int {
        guard let local = fileSystem as? LocalDirectoryFileSystem else { return 0 }
        do { return try await local.removeAbandonedUploads(in: path, olderThan: age) } catch { throw .cloud(error) }
    }
}
