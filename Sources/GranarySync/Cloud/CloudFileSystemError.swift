import Foundation

/// Why a ``CloudFileSystem`` operation failed; each case names the path involved.
public enum CloudFileSystemError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A file operation before ``CloudFileSystem/connect()`` succeeded.
    case notConnected
    /// Nothing at `path` (or at the directory an upload goes into).
    case notFound(path: String)
    /// A file stands where a directory is needed.
    case notADirectory(path: String)
    /// A directory stands where a file is needed.
    case isADirectory(path: String)
    /// The backend refuses access to `path`.
    case permissionDenied(path: String)
    /// The backend cannot be used now (a folder not mounted or gone, a network down); retry later.
    case unavailable(reason: String)
    /// An input/output error of the system at `path`, with its `errno`.
    case io(path: String, errno: Int32)
    /// `path` is not a valid cloud path (absolute, empty, `.`/`..` or dot-named component, the root where
    /// an item is needed); `reason` says which.
    case invalidPath(String, reason: String)
    /// The local file of an upload or download could not be read or written.
    case localFile(path: String, reason: String)
    /// The backend's identity record at `path` is unreadable (not written by GranarySync, or damaged).
    case damagedIdentity(path: String)
    /// An error injected by a test (``MemoryFileSystem/failNext(_:with:)`` passes any case; this one
    /// names the fault).
    case injected(String)

    public var description: String {
        switch self {
        case .notConnected: "the cloud file system is not connected"
        case let .notFound(path): "nothing at cloud path '\(path)'"
        case let .notADirectory(path): "cloud path '\(path)' is a file, not a directory"
        case let .isADirectory(path): "cloud path '\(path)' is a directory, not a file"
        case let .permissionDenied(path): "permission denied at cloud path '\(path)'"
        case let .unavailable(reason): "the cloud file system is unavailable: \(reason)"
        case let .io(path, code): "input/output error at '\(path)': \(String(cString: strerror(code))) (errno \(code))"
        case let .invalidPath(path, reason): "'\(path.debugDescription.dropFirst().dropLast().prefix(200))' is not a cloud path: \(reason)"
        case let .localFile(path, reason): "local file '\(path)': \(reason)"
        case let .damagedIdentity(path): "the identity file '\(path)' is damaged"
        case let .injected(what): "injected fault: \(what)"
        }
    }
}
