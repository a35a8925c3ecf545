import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A cloud file system in a local folder: one that Dropbox, Syncthing or NFS shares between devices, or
/// a mounted drive. The embedded default, and what the tests and the demo use.
///
/// - Uploads are written to a hidden temp file beside the target (`.<name>.<UUID>.part`), flushed to
///   disk, then renamed onto the name: `rename(2)` is atomic within a file system, so another process
///   (or the sync service) sees the old file, the new one, or nothing — never a part, even when this
///   process is killed mid-upload. A killed upload leaves only the hidden temp file, which listings skip
///   and ``removeAbandonedUploads(in:olderThan:)`` deletes.
/// - Listings skip names starting with `.` and the conflicted copies Dropbox
///   (`… (conflicted copy …)`) and Syncthing (`….sync-conflict-…`) make.
/// - The identity is a UUID in `<root>/.granary-sync-identity`, made at the first ``connect()``: deleting
///   or replacing the shared folder changes it, and ensembles using the folder stop syncing rather than
///   write into a stranger's data. Create the folder on one device and let it sync before other devices
///   connect, or two devices may each make an identity before the service brings them together.
///
/// ``connect()`` never creates the root, so an unmounted share is reported, not silently replaced by an
/// empty local folder.
public final class LocalDirectoryFileSystem: CloudFileSystem {
    /// The shared folder.
    public let rootDirectory: URL
    private let connected = Mutex(false)

    /// The name of the identity file in the root.
    public static let identityFileName = ".granary-sync-identity"

    /// A file system in `rootDirectory`, which must exist when ``connect()`` is called.
    public init(rootDirectory: URL) {
        self.rootDirectory = rootDirectory.standardizedFileURL
    }

    public var isConnected: Bool { connected.withLock { $0 } }

    /// Checks that the root is a writable directory and makes its identity file if there is none.
    /// - Throws: ``CloudFileSystemError/unavailable(reason:)`` when the root is missing or not a directory
    ///   (a share not mounted), ``CloudFileSystemError/permissionDenied(path:)`` when it is not writable,
    ///   ``CloudFileSystemError/damagedIdentity(path:)`` for an unreadable identity file.
    public func connect() async throws(CloudFileSystemError) {
        try checkRoot()
        guard access(rootDirectory.path, W_OK | X_OK) == 0 else { throw .permissionDenied(path: rootDirectory.path) }
        _ = try identity(creating: true)
        connected.withLock { $0 = true }
    }

    /// The UUID in the root's identity file.
    /// - Throws: ``CloudFileSystemError/notConnected``, `unavailable` when the root is gone,
    ///   `damagedIdentity`.
    public func fetchUserIdentity() async throws(CloudFileSystemError) -> CloudIdentity? {
        try relativizing { () throws(CloudFileSystemError) -> CloudIdentity? in
            try ready()
            return try identity(creating: false)
        }
    }

    /// Whether a file or directory is at `path` (symbolic links are followed).
    /// - Throws: `notConnected`, `invalidPath`, `unavailable` when the root is gone, `io`.
    public func fileExists(atPath path: String) async throws(CloudFileSystemError) -> FileExistence {
        try relativizing { () throws(CloudFileSystemError) -> FileExistence in
            try ready()
            let local = try localPath(path)
            var info = stat()
            guard stat(local, &info) == 0 else {
                let code = errno
                if code == ENOENT || code == ENOTDIR {
                    try checkRoot()
                    return .none
                }
                throw map(code, local)
            }
            return info.st_mode & S_IFMT == S_IFDIR ? .directory : .file
        }
    }

    /// Creates the directory and those above it; an existing one is success.
    /// - Throws: ``CloudFileSystemError/notADirectory(path:)`` when a file is in the way, `notConnected`,
    ///   `invalidPath`, `unavailable`, `permissionDenied`, `io`.
    public func createDirectory(atPath path: String) async throws(CloudFileSystemError) {
        try relativizing { () throws(CloudFileSystemError) in
            try ready()
            let components = try CloudPath.components(path)
            var local = rootDirectory.path
            for component in components {
                local += "/" + component
                if mkdir(local, 0o755) != 0 {
                    let code = errno
                    guard code == EEXIST else {
                        if code == ENOENT { try checkRoot() }
                        throw map(code, local)
                    }
                    var info = stat()
                    guard stat(local, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { throw .notADirectory(path: local) }
                }
            }
        }
    }

    /// The files and directories directly in `path`, sorted by name, without hidden names and conflicted
    /// copies.
    /// - Throws: ``CloudFileSystemError/notFound(path:)``, `notADirectory`, `notConnected`, `invalidPath`,
    ///   `unavailable`, `permissionDenied`, `io`.
    public func contentsOfDirectory(atPath path: String) async throws(CloudFileSystemError) -> [CloudItem] {
        try relativizing { () throws(CloudFileSystemError) -> [CloudItem] in
            try ready()
            let local = try localPath(path)
            guard let directory = opendir(local) else {
                let code = errno
                if code == ENOENT { try checkRoot() }
                // ENOTDIR also when a file stands above the path: then nothing is at the path itself.
                var info = stat()
                if code == ENOTDIR && stat(local, &info) != 0 { throw .notFound(path: path) }
                throw map(code, local)
            }
            defer { closedir(directory) }
            // Relative to the open directory: no path to build and resolve per entry (an idle merge lists
            // every event file, S3).
            let descriptor = dirfd(directory)
            var items: [CloudItem] = []
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
                }
                guard !Self.isHidden(name) else { continue }
                // d_type is DT_UNKNOWN on some network file systems: stat each entry instead.
                var info = stat()
                guard fstatat(descriptor, name, &info, 0) == 0 else { continue }   // removed since readdir: not there
                items.append(info.st_mode & S_IFMT == S_IFDIR ? .directory(name: name) : .file(name: name, size: Int64(info.st_size)))
            }
            return items.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        }
    }

    /// Removes the file, or the directory and everything in it; a missing item is success.
    /// - Throws: `notConnected`, `invalidPath` (the root included), `unavailable`, `permissionDenied`, `io`.
    public func removeItem(atPath path: String) async throws(CloudFileSystemError) {
        try relativizing { () throws(CloudFileSystemError) in
            try ready()
            _ = try CloudPath.components(path, allowsRoot: false)
            let local = try localPath(path)
            try Self.remove(local)
            try checkRoot()
        }
    }

    /// Copies `localURL` to a hidden temp file in the remote directory, flushes it, renames it onto
    /// `remotePath` and flushes the directory.
    /// - Throws: ``CloudFileSystemError/notFound(path:)`` when the remote directory is missing,
    ///   `isADirectory`, `localFile` when `localURL` cannot be read, `notConnected`, `invalidPath`,
    ///   `unavailable`, `permissionDenied`, `io` (a full disk: `ENOSPC`).
    public func uploadLocalFile(at localURL: URL, toPath remotePath: String) async throws(CloudFileSystemError) {
        try relativizing { () throws(CloudFileSystemError) in
            try ready()
            let components = try CloudPath.components(remotePath, allowsRoot: false)
            let target = try localPath(remotePath)
            let directory = try localPath(CloudPath.parent(of: components))
            let temp = directory + "/." + components.last! + "." + UUID().uuidString + ".part"
            let source = open(localURL.path, O_RDONLY | O_CLOEXEC)
            guard source >= 0 else {
                throw .localFile(path: localURL.path, reason: "cannot be read (\(String(cString: strerror(errno))))")
            }
            defer { close(source) }
            let output = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            guard output >= 0 else {
                let code = errno
                if code == ENOENT { try checkRoot() }
                var info = stat()
                if code == ENOENT || (code == ENOTDIR && stat(directory, &info) != 0) {
                    throw .notFound(path: CloudPath.parent(of: components))
                }
                throw map(code, directory)
            }
            do throws(CloudFileSystemError) {
                defer { close(output) }
                try Self.copy(from: source, sourcePath: localURL.path, to: output, path: temp)
                guard fsync(output) == 0 else { throw map(errno, temp) }
            } catch {
                unlink(temp)
                throw error
            }
            guard rename(temp, target) == 0 else {
                let code = errno
                unlink(temp)
                throw code == EISDIR ? .isADirectory(path: remotePath) : map(code, target)
            }
            Self.syncDirectory(directory)
        }
    }

    /// Copies the file at `remotePath` to a temp file beside `localURL`, then renames it onto it, so a
    /// failed download leaves no partial local file either.
    /// - Throws: ``CloudFileSystemError/notFound(path:)``, `isADirectory`, `localFile` when `localURL`
    ///   cannot be written, `notConnected`, `invalidPath`, `unavailable`, `permissionDenied`, `io`.
    public func downloadFile(atPath remotePath: String, toLocalFile localURL: URL) async throws(CloudFileSystemError) {
        try relativizing { () throws(CloudFileSystemError) in
            try ready()
            _ = try CloudPath.components(remotePath, allowsRoot: false)
            let remote = try localPath(remotePath)
            let source = open(remote, O_RDONLY | O_CLOEXEC)
            guard source >= 0 else {
                let code = errno
                if code == ENOENT { try checkRoot() }
                throw code == ENOENT || code == ENOTDIR ? .notFound(path: remotePath) : map(code, remote)
            }
            defer { close(source) }
            var info = stat()
            guard fstat(source, &info) == 0 else { throw map(errno, remote) }
            guard info.st_mode & S_IFMT != S_IFDIR else { throw .isADirectory(path: remotePath) }
            let temp = localURL.deletingLastPathComponent().path + "/." + localURL.lastPathComponent + "." + UUID().uuidString + ".part"
            let output = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            guard output >= 0 else {
                throw .localFile(path: localURL.path, reason: "cannot be written (\(String(cString: strerror(errno))))")
            }
            do throws(CloudFileSystemError) {
                defer { close(output) }
                try Self.copy(from: source, sourcePath: remote, to: output, path: temp)
            } catch {
                unlink(temp)
                throw error
            }
            guard rename(temp, localURL.path) == 0 else {
                let reason = String(cString: strerror(errno))
                unlink(temp)
                throw .localFile(path: localURL.path, reason: "cannot be replaced (\(reason))")
            }
        }
    }

    /// Deletes the hidden temp files of uploads that were killed before their rename, in `path` and
    /// below, when last modified more than `age` seconds ago (younger ones may be uploads still running
    /// on another device). Returns how many were deleted.
    /// - Throws: `notConnected`, `invalidPath`, `notFound`, `unavailable`, `io`.
    @discardableResult
    public func removeAbandonedUploads(in path: String = "", olderThan age: TimeInterval = 3600) async throws(CloudFileSystemError) -> Int {
        try relativizing { () throws(CloudFileSystemError) -> Int in
            try ready()
            let local = try localPath(path)
            return try Self.removeParts(in: local, before: Date().timeIntervalSince1970 - age)
        }
    }

    // MARK: Helpers

    /// Names listings leave out: hidden files (temp files, the identity) and sync services' conflicted copies.
    static func isHidden(_ name: String) -> Bool {
        // One pass over the bytes first: the substring searches are costly and only a name with a space
        // (Dropbox's marker) or a second dot (Syncthing's) can hold a marker.
        var dots = 0, spaces = 0
        for byte in name.utf8 {
            if byte == UInt8(ascii: ".") { dots += 1 } else if byte == UInt8(ascii: " ") { spaces += 1 }
        }
        return name.utf8.first == UInt8(ascii: ".") || (spaces > 0 && name.contains(" (conflicted copy"))
            || (dots > 1 && name.contains(".sync-conflict-"))
    }

    /// Runs `body`, rewriting the paths of its errors from local paths to cloud paths (relative to the
    /// root), so that errors name the same paths as those of any other `CloudFileSystem`.
    private func relativizing<T>(_ body: () throws(CloudFileSystemError) -> T) throws(CloudFileSystemError) -> T {
        do {
            return try body()
        } catch {
            let root = rootDirectory.path
            func relative(_ path: String) -> String {
                path == root ? "" : path.hasPrefix(root + "/") ? String(path.dropFirst(root.count + 1)) : path
            }
            switch error {
            case let .notFound(path): throw .notFound(path: relative(path))
            case let .notADirectory(path): throw .notADirectory(path: relative(path))
            case let .isADirectory(path): throw .isADirectory(path: relative(path))
            case let .permissionDenied(path): throw .permissionDenied(path: relative(path))
            case let .io(path, code): throw .io(path: relative(path), errno: code)
            default: throw error
            }
        }
    }

    private func ready() throws(CloudFileSystemError) {
        guard isConnected else { throw .notConnected }
    }

    private func localPath(_ path: String) throws(CloudFileSystemError) -> String {
        let components = try CloudPath.components(path)
        return ([rootDirectory.path] + components).joined(separator: "/")
    }

    /// Throws `unavailable` unless the root is a directory: a vanished or unmounted share is reported as
    /// such, not as a missing file the caller might create again.
    private func checkRoot() throws(CloudFileSystemError) {
        var info = stat()
        guard stat(rootDirectory.path, &info) == 0 else {
            throw .unavailable(reason: "the folder \(rootDirectory.path) does not exist (not mounted, or removed?)")
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw .unavailable(reason: "\(rootDirectory.path) is not a directory")
        }
    }

    /// The identity in the root, made first when `creating` and there is none: written to a temp file and
    /// hard-linked to the name, which fails if another process linked first, so two processes on one file
    /// system never end up with two identities.
    private func identity(creating: Bool) throws(CloudFileSystemError) -> CloudIdentity {
        let path = rootDirectory.path + "/" + Self.identityFileName
        if let existing = try Self.readIdentity(path) { return existing }
        guard creating else {
            try checkRoot()
            throw .damagedIdentity(path: path)
        }
        let temp = path + "." + UUID().uuidString + ".part"
        let text = UUID().uuidString + "\n"
        let descriptor = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw map(errno, temp) }
        defer { unlink(temp) }
        let written = text.utf8CString.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count - 1) }
        let synced = fsync(descriptor)
        close(descriptor)
        guard written == text.utf8.count, synced == 0 else { throw map(errno, temp) }
        if link(temp, path) != 0 && errno != EEXIST { throw map(errno, path) }
        Self.syncDirectory(rootDirectory.path)
        guard let identity = try Self.readIdentity(path) else { throw .damagedIdentity(path: path) }
        return identity
    }

    /// The identity in the file at `path`; nil when there is no file.
    private static func readIdentity(_ path: String) throws(CloudFileSystemError) -> CloudIdentity? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOENT { return nil }
            throw map(code, path)
        }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(descriptor, &buffer, buffer.count)
        guard count > 0 else { throw .damagedIdentity(path: path) }
        let text = String(decoding: buffer[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let uuid = UUID(uuidString: text), uuid.uuidString == text else { throw .damagedIdentity(path: path) }
        return CloudIdentity(text)
    }

    private static func copy(from source: Int32, sourcePath: String, to output: Int32, path: String) throws(CloudFileSystemError) {
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .localFile(path: sourcePath, reason: "read failed (\(String(cString: strerror(errno))))")
            }
            if count == 0 { return }
            var done = 0
            while done < count {
                let written = buffer.withUnsafeBytes { write(output, $0.baseAddress! + done, count - done) }
                if written < 0 {
                    if errno == EINTR { continue }
                    throw map(errno, path)
                }
                done += written
            }
        }
    }

    /// The names in a directory, but `.` and `..`.
    private static func entryNames(in path: String) throws(CloudFileSystemError) -> [String] {
        guard let directory = opendir(path) else { throw map(errno, path) }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Removes `path` and, for a directory, everything in it; a missing item is success.
    private static func remove(_ path: String) throws(CloudFileSystemError) {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { return }
            throw map(code, path)
        }
        if info.st_mode & S_IFMT == S_IFDIR {
            for name in try entryNames(in: path) { try remove(path + "/" + name) }
            if rmdir(path) != 0 && errno != ENOENT { throw map(errno, path) }
        } else if unlink(path) != 0 && errno != ENOENT {
            throw map(errno, path)
        }
    }

    private static func removeParts(in path: String, before cutoff: TimeInterval) throws(CloudFileSystemError) -> Int {
        let names = try entryNames(in: path)
        var removed = 0
        for name in names {
            var info = stat()
            guard lstat(path + "/" + name, &info) == 0 else { continue }
            if info.st_mode & S_IFMT == S_IFDIR {
                if !name.hasPrefix(".") { removed += try removeParts(in: path + "/" + name, before: cutoff) }
            } else if name.hasPrefix("."), name.hasSuffix(".part"), TimeInterval(info.st_mtim.tv_sec) < cutoff {
                if unlink(path + "/" + name) == 0 { removed += 1 }
            }
        }
        return removed
    }

    /// Flushes a directory's entries, so that a rename survives a power loss; best effort (some file
    /// systems refuse fsync on directories, and the rename itself is already atomic).
    private static func syncDirectory(_ path: String) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }
}

private func map(_ code: Int32, _ path: String) -> CloudFileSystemError {
    switch code {
    case ENOENT: .notFound(path: path)
    case ENOTDIR: .notADirectory(path: path)
    case EISDIR: .isADirectory(path: path)
    case EACCES, EPERM, EROFS: .permissionDenied(path: path)
    case ENOTCONN, EIO, ESTALE, ENODEV, ENXIO: .unavailable(reason: "\(String(cString: strerror(code))) at \(path)")
    default: .io(path: path, errno: code)
    }
}
