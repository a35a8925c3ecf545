#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// An open file descriptor, and the only place in the engine that calls the POSIX file APIs.
///
/// Every failure becomes `StorageError.io(operation:path:errno:)`, and every write, sync, rename and
/// friends first consults `FaultInjection`, so tests can make any of them fail.
///
/// Thread safety: the descriptor never changes, so `pread`, `write`, `sync` and `size` may run on
/// different threads at once (the kernel orders them). `close()` must not race with other calls: after
/// it, the descriptor number may be reused by another open, so calls check a closed flag first and
/// throw `EBADF` instead of touching someone else's file.
final class PosixFile: Sendable {
    /// How `open` treats an existing or missing file.
    enum Mode: Sendable {
        /// Read only; the file must exist.
        case readOnly
        /// Read and write; the file must exist.
        case readWrite
        /// Read and write; creates the file if missing and keeps an existing file's contents.
        case create
        /// Read and write; creates the file and fails with `EEXIST` if it already exists.
        case createNew
    }

    let path: String
    private let fd: Int32
    private let closedFlag = Atomic<Bool>(false)

    private init(path: String, fd: Int32) {
        self.path = path
        self.fd = fd
    }

    deinit {
        if !closedFlag.load(ordering: .relaxed) { _ = systemClose(fd) }
    }

    /// Opens `path` in `mode` (new files get permissions 0644).
    /// - Throws: `StorageError.io` when the open fails (`ENOENT`, `EEXIST` for `.createNew`, ...).
    static func open(_ path: String, mode: Mode) throws -> PosixFile {
        if let fault = FaultInjection.fault(for: .open, path: path) {
            throw StorageError.io(operation: "open", path: path, errno: fault.errno)
        }
        var flags = O_CLOEXEC
        switch mode {
        case .readOnly: flags |= O_RDONLY
        case .readWrite: flags |= O_RDWR
        case .create: flags |= O_RDWR | O_CREAT
        case .createNew: flags |= O_RDWR | O_CREAT | O_EXCL
        }
        while true {
            let fd = systemOpen(path, flags, 0o644)
            if fd >= 0 { return PosixFile(path: path, fd: fd) }
            if errno != EINTR { throw StorageError.io(operation: "open", path: path, errno: errno) }
        }
    }

    private func descriptor(for operation: String) throws -> Int32 {
        if closedFlag.load(ordering: .acquiring) {
            throw StorageError.io(operation: operation, path: path, errno: EBADF)
        }
        return fd
    }

    // MARK: Reading

    /// Reads up to `count` bytes at `offset`; fewer only when the file ends first.
    /// - Throws: `StorageError.io` when the read fails.
    func pread(at offset: Int64, count: Int) throws -> [UInt8] {
        precondition(count >= 0 && offset >= 0)
        let fd = try descriptor(for: "read")
        if let fault = FaultInjection.fault(for: .read, path: path) {
            throw StorageError.io(operation: "read", path: path, errno: fault.errno)
        }
        var failure: Int32 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var done = 0
            while done < count {
                let n = systemPread(fd, buffer.baseAddress! + done, count - done, off_t(offset) + off_t(done))
                if n > 0 {
                    done += n
                } else if n == 0 {
                    break
                } else if errno != EINTR {
                    failure = errno
                    break
                }
            }
            initialized = done
        }
        if failure != 0 { throw StorageError.io(operation: "read", path: path, errno: failure) }
        return bytes
    }

    /// Reads the whole file with as few system calls as possible.
    /// - Throws: `StorageError.io` when `fstat` or the read fails.
    func readAll() throws -> [UInt8] {
        try pread(at: 0, count: Int(try size()))
    }

    /// The file's current size in bytes.
    /// - Throws: `StorageError.io` when `fstat` fails.
    func size() throws -> Int64 {
        let fd = try descriptor(for: "fstat")
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw StorageError.io(operation: "fstat", path: path, errno: errno) }
        return Int64(info.st_size)
    }

    // MARK: Writing

    /// Writes all of `bytes` at `offset`, retrying short writes and `EINTR`.
    ///
    /// On failure some prefix of `bytes` may have reached the file; callers that need all-or-nothing
    /// truncate back themselves (the log writer does).
    /// - Throws: `StorageError.io` when a write fails (`ENOSPC` reads "the disk is full").
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        precondition(offset >= 0)
        let fd = try descriptor(for: "write")
        var count = bytes.count
        var injected: Int32?
        if let fault = FaultInjection.fault(for: .write, path: path) {
            injected = fault.errno
            count = min(count, max(0, fault.partialBytes ?? 0))
        }
        var done = 0
        while done < count {
            let n = systemPwrite(fd, bytes.baseAddress! + done, count - done, off_t(offset) + off_t(done))
            if n > 0 {
                done += n
            } else if n == 0 {
                // POSIX allows it for a full device in theory; treat it as one rather than spin.
                throw StorageError.io(operation: "write", path: path, errno: ENOSPC)
            } else if errno != EINTR {
                throw StorageError.io(operation: "write", path: path, errno: errno)
            }
        }
        if let injected { throw StorageError.io(operation: "write", path: path, errno: injected) }
    }

    /// Writes all of `bytes` at `offset`.
    /// - Throws: `StorageError.io` when a write fails.
    func write(_ bytes: [UInt8], at offset: Int64) throws {
        try bytes.withUnsafeBytes { try write($0, at: offset) }
    }

    /// Sets the file's size, dropping or zero-filling the tail.
    /// - Throws: `StorageError.io` when `ftruncate` fails.
    func truncate(to size: Int64) throws {
        let fd = try descriptor(for: "truncate")
        if let fault = FaultInjection.fault(for: .truncate, path: path) {
            throw StorageError.io(operation: "truncate", path: path, errno: fault.errno)
        }
        while ftruncate(fd, off_t(size)) != 0 {
            if errno != EINTR { throw StorageError.io(operation: "truncate", path: path, errno: errno) }
        }
    }

    /// `fdatasync`: the data and the size reach the disk, not the timestamps.
    ///
    /// Never retry after a failure: Linux may have dropped the dirty pages and a second call would
    /// falsely succeed (fsyncgate). Even `EINTR` is reported, for the same reason.
    /// - Throws: `StorageError.io` when the sync fails.
    func sync() throws {
        let fd = try descriptor(for: "fdatasync")
        if let fault = FaultInjection.fault(for: .sync, path: path) {
            throw StorageError.io(operation: "fdatasync", path: path, errno: fault.errno)
        }
        #if os(Linux)
        let result = fdatasync(fd)
        #else
        let result = fsync(fd)
        #endif
        if result != 0 { throw StorageError.io(operation: "fdatasync", path: path, errno: errno) }
    }

    /// `fsync`: data and all metadata; use it once for a file that was just created.
    /// - Throws: `StorageError.io` when the sync fails (never retry it, see `sync()`).
    func fullSync() throws {
        let fd = try descriptor(for: "fsync")
        if let fault = FaultInjection.fault(for: .sync, path: path) {
            throw StorageError.io(operation: "fsync", path: path, errno: fault.errno)
        }
        if fsync(fd) != 0 { throw StorageError.io(operation: "fsync", path: path, errno: errno) }
    }

    // MARK: Locking

    /// Takes an exclusive `flock` without waiting; `false` when another open file description holds a
    /// lock on the file, including another `open` of the same file in this process.
    /// - Throws: `StorageError.io` for errors other than "already locked".
    func tryLockExclusive() throws -> Bool { try tryLock(LOCK_EX) }

    /// Takes a shared `flock` without waiting; `false` when an exclusive lock is held elsewhere.
    /// - Throws: `StorageError.io` for errors other than "already locked".
    func tryLockShared() throws -> Bool { try tryLock(LOCK_SH) }

    private func tryLock(_ kind: Int32) throws -> Bool {
        let fd = try descriptor(for: "flock")
        while flock(fd, kind | LOCK_NB) != 0 {
            if errno == EWOULDBLOCK { return false }
            if errno != EINTR { throw StorageError.io(operation: "flock", path: path, errno: errno) }
        }
        return true
    }

    /// Closes the descriptor (releasing any lock); later calls throw `EBADF`. Calling it twice is harmless.
    ///
    /// Errors from `close` are ignored: durability comes from `sync()`, and on Linux a failed close
    /// must not be retried.
    func close() {
        if closedFlag.exchange(true, ordering: .acquiringAndReleasing) == false {
            _ = systemClose(fd)
        }
    }

    var isClosed: Bool { closedFlag.load(ordering: .acquiring) }

    // MARK: Paths

    /// Makes a directory's entries (created, renamed, removed files) durable.
    /// - Throws: `StorageError.io` when opening or syncing the directory fails.
    static func syncDirectory(_ path: String) throws {
        if let fault = FaultInjection.fault(for: .syncDirectory, path: path) {
            throw StorageError.io(operation: "fsync directory", path: path, errno: fault.errno)
        }
        var fd: Int32
        repeat { fd = systemOpen(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0) } while fd < 0 && errno == EINTR
        guard fd >= 0 else { throw StorageError.io(operation: "open directory", path: path, errno: errno) }
        defer { _ = systemClose(fd) }
        if fsync(fd) != 0 { throw StorageError.io(operation: "fsync directory", path: path, errno: errno) }
    }

    /// Atomically replaces `destination` with `source`. Sync the directory afterwards to make it durable.
    /// - Throws: `StorageError.io` naming the source when `rename` fails.
    static func rename(_ source: String, _ destination: String) throws {
        let operation = "rename to \(destination)"
        if let fault = FaultInjection.fault(for: .rename, path: source, otherPath: destination) {
            throw StorageError.io(operation: operation, path: source, errno: fault.errno)
        }
        if systemRename(source, destination) != 0 {
            throw StorageError.io(operation: operation, path: source, errno: errno)
        }
    }

    /// Deletes a file or an empty directory.
    /// - Parameter ifExists: succeed quietly when `path` does not exist (recovery may repeat a removal).
    /// - Throws: `StorageError.io` when `remove` fails.
    static func remove(_ path: String, ifExists: Bool = false) throws {
        if let fault = FaultInjection.fault(for: .remove, path: path) {
            throw StorageError.io(operation: "remove", path: path, errno: fault.errno)
        }
        if systemRemove(path) != 0 {
            if ifExists && errno == ENOENT { return }
            throw StorageError.io(operation: "remove", path: path, errno: errno)
        }
    }

    /// The directory part of `path` ("." for a bare file name), e.g. to sync it after a rename.
    static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Whether anything (file, directory, ...) exists at `path`.
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// The size of the file at `path`, without opening it.
    /// - Throws: `StorageError.io` when `stat` fails (for example, the file does not exist).
    static func size(of path: String) throws -> Int64 {
        var info = stat()
        guard stat(path, &info) == 0 else { throw StorageError.io(operation: "stat", path: path, errno: errno) }
        return Int64(info.st_size)
    }

    /// Whether `path` is a directory.
    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// Creates `path` and any missing parents (`mkdir -p`); an existing directory is fine.
    /// - Throws: `StorageError.io` naming the component that could not be created.
    static func makeDirectory(_ path: String) throws {
        if let fault = FaultInjection.fault(for: .makeDirectory, path: path) {
            throw StorageError.io(operation: "mkdir", path: path, errno: fault.errno)
        }
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += prefix.isEmpty || prefix.hasSuffix("/") ? String(component) : "/" + component
            if mkdir(prefix, 0o755) != 0 {
                let code = errno
                if code == EEXIST && isDirectory(prefix) { continue }
                throw StorageError.io(operation: "mkdir", path: prefix, errno: code == EEXIST ? ENOTDIR : code)
            }
        }
    }

    /// The names (not paths) of the entries in `directory`, without "." and "..", sorted.
    /// - Throws: `StorageError.io` when the directory cannot be opened or read.
    static func list(_ directory: String) throws -> [String] {
        guard let dir = opendir(directory) else {
            throw StorageError.io(operation: "opendir", path: directory, errno: errno)
        }
        defer { closedir(dir) }
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(dir) else {
                if errno != 0 { throw StorageError.io(operation: "readdir", path: directory, errno: errno) }
                break
            }
            let name = withUnsafePointer(to: &entry.pointee.d_name) {
                String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }
}

// The C functions share names with our methods; these aliases keep call sites unambiguous.
private func systemOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 { open(path, flags, mode) }
private func systemClose(_ fd: Int32) -> Int32 { close(fd) }
private func systemPread(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int, _ offset: off_t) -> Int {
    pread(fd, buffer, count, offset)
}
private func systemPwrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int, _ offset: off_t) -> Int {
    pwrite(fd, buffer, count, offset)
}
private func systemRename(_ source: String, _ destination: String) -> Int32 { rename(source, destination) }
private func systemRemove(_ path: String) -> Int32 { remove(path) }
