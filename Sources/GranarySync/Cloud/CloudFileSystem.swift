import Foundation

/// Where an ensemble's files live: a shared folder, a server, a cloud drive — anything that can store
/// whole files under `/`-separated paths.
///
/// The eight requirements are Ensembles 3's. GranarySync writes only immutable files under names no
/// other device produces, so a backend needs no locking, no transactions and no conflict handling of
/// its own; what it must guarantee is that an upload is atomic (the file appears complete or not at
/// all) and that listings never show a partial upload.
///
/// Paths are relative to the file system's root, with no leading `/`, no empty, `.` or `..` component
/// and no component starting with `.` (names starting with a dot are left to backends for temp and
/// bookkeeping files); the empty path is the root itself. Every method throws
/// ``CloudFileSystemError/invalidPath(_:reason:)`` for another path, and ``CloudFileSystemError/notConnected``
/// before ``connect()`` has succeeded.
///
/// Implement one by mapping each requirement onto the backend's calls; <doc:CloudFileSystems> sketches
/// a WebDAV one.
public protocol CloudFileSystem: Sendable {
    /// Whether ``connect()`` has succeeded, so that files can be used now.
    var isConnected: Bool { get async }

    /// Makes the file system usable: checks that the folder is mounted, logs in, opens a session.
    ///
    /// Called before any other file work whenever ``isConnected`` is false.
    /// - Throws: ``CloudFileSystemError/unavailable(reason:)`` when the backend cannot be reached now,
    ///   ``CloudFileSystemError/permissionDenied(path:)`` when it refuses access.
    func connect() async throws(CloudFileSystemError)

    /// Who the data belongs to: an account, or the identity of a shared folder; nil when the backend
    /// has no notion of one.
    ///
    /// An ensemble remembers it at leech and stops syncing (a forced deleech) when it changes: the data
    /// it synced with is no longer there.
    /// - Throws: ``CloudFileSystemError``.
    func fetchUserIdentity() async throws(CloudFileSystemError) -> CloudIdentity?

    /// Whether an item exists at `path`, and whether it is a directory.
    /// - Throws: ``CloudFileSystemError``; a missing item is not an error.
    func fileExists(atPath path: String) async throws(CloudFileSystemError) -> FileExistence

    /// Creates the directory at `path` and any missing directory above it. Idempotent: an existing
    /// directory is success.
    /// - Throws: ``CloudFileSystemError/notADirectory(path:)`` when a file stands at `path` or above it.
    func createDirectory(atPath path: String) async throws(CloudFileSystemError)

    /// The immediate children of the directory at `path`, sorted by name, without partial uploads or
    /// the backend's own files.
    /// - Throws: ``CloudFileSystemError/notFound(path:)`` when nothing is at `path`,
    ///   ``CloudFileSystemError/notADirectory(path:)`` when a file is.
    func contentsOfDirectory(atPath path: String) async throws(CloudFileSystemError) -> [CloudItem]

    /// Removes the file or directory (with everything in it) at `path`. Idempotent: a missing item is
    /// success.
    /// - Throws: ``CloudFileSystemError``; the root itself cannot be removed (`invalidPath`).
    func removeItem(atPath path: String) async throws(CloudFileSystemError)

    /// Uploads the local file at `localURL` to `remotePath`, replacing a file there. Atomic: another
    /// device sees the old file, the new one, or none, never a part.
    /// - Throws: ``CloudFileSystemError/notFound(path:)`` when the remote directory does not exist,
    ///   ``CloudFileSystemError/localFile(path:reason:)`` when the local file cannot be read.
    func uploadLocalFile(at localURL: URL, toPath remotePath: String) async throws(CloudFileSystemError)

    /// Downloads the file at `remotePath` to `localURL`, replacing a file there.
    /// - Throws: ``CloudFileSystemError/notFound(path:)`` when there is no file at `remotePath`,
    ///   ``CloudFileSystemError/localFile(path:reason:)`` when the local file cannot be written.
    func downloadFile(atPath remotePath: String, toLocalFile localURL: URL) async throws(CloudFileSystemError)
}

/// Whether an item exists, as ``CloudFileSystem/fileExists(atPath:)`` reports it.
public struct FileExistence: Sendable, Hashable {
    /// Whether anything is at the path.
    public var exists: Bool
    /// Whether it is a directory (false when nothing is there).
    public var isDirectory: Bool

    /// An answer of ``CloudFileSystem/fileExists(atPath:)``.
    public init(exists: Bool, isDirectory: Bool) {
        self.exists = exists
        self.isDirectory = exists && isDirectory
    }

    /// Nothing at the path.
    public static let none = FileExistence(exists: false, isDirectory: false)
    /// A file at the path.
    public static let file = FileExistence(exists: true, isDirectory: false)
    /// A directory at the path.
    public static let directory = FileExistence(exists: true, isDirectory: true)
}

/// One child of a directory, as ``CloudFileSystem/contentsOfDirectory(atPath:)`` lists it.
public enum CloudItem: Sendable, Hashable {
    /// A file, its name (no path) and size in bytes.
    case file(name: String, size: Int64)
    /// A directory and its name.
    case directory(name: String)

    /// The item's name within its directory.
    public var name: String {
        switch self {
        case let .file(name, _), let .directory(name): name
        }
    }
}

/// Who a cloud file system's data belongs to (an account, a shared folder's identity file), compared
/// by value.
public struct CloudIdentity: Codable, Sendable, Hashable, CustomStringConvertible {
    /// The backend's text for the identity.
    public var value: String

    /// An identity of text `value`.
    public init(_ value: String) { self.value = value }

    public var description: String { value }
}
