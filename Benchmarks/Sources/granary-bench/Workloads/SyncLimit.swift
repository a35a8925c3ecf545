import Foundation

/// The ceiling for durable commits on this disk: write a 100-byte record to a file and `fdatasync` it,
/// in a loop, with nothing else around it.
enum SyncLimit {
    enum Mode: String, CaseIterable {
        /// Append to a growing file: each sync also has to make the new file size durable.
        case append
        /// Overwrite a file that was written and synced beforehand, record after record: only data reaches
        /// the disk. This is what SQLite does once its WAL wraps around after a checkpoint.
        case overwrite
    }

    /// Writes and syncs `iterations` records (after a few untimed ones) in `batches` batches and returns
    /// the time per record of each batch.
    /// - Throws: `BenchError.system` when the file cannot be opened, written or synced.
    static func measure(_ mode: Mode, in folder: URL, iterations: Int, batches: Int) throws -> [Duration] {
        let path = folder.appendingPathComponent("\(mode.rawValue).log").path
        try? FileManager.default.removeItem(atPath: path)
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | (mode == .append ? O_APPEND : 0)
        let fd = open(path, flags, 0o644)
        guard fd >= 0 else { throw BenchError.system(operation: "open", path: path, errno: errno) }
        defer { close(fd) }
        let warmUp = 10
        let record = [UInt8](repeating: 0x2A, count: 100)
        if mode == .overwrite {
            let zeros = [UInt8](repeating: 0, count: record.count * (iterations + warmUp))
            guard zeros.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == zeros.count, fsync(fd) == 0,
                  lseek(fd, 0, SEEK_SET) == 0
            else { throw BenchError.system(operation: "preallocate", path: path, errno: errno) }
        }
        func writeAndSync() throws {
            let written = record.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard written == record.count else { throw BenchError.system(operation: "write", path: path, errno: errno) }
            guard fdatasync(fd) == 0 else { throw BenchError.system(operation: "fdatasync", path: path, errno: errno) }
        }
        for _ in 0..<warmUp { try writeAndSync() }
        let size = max(1, iterations / batches)
        var perRecord: [Duration] = []
        for start in stride(from: 0, to: iterations, by: size) {
            let count = min(size, iterations - start)
            let (_, duration) = try Stopwatch.time {
                for _ in 0..<count { try writeAndSync() }
            }
            perRecord.append(duration / count)
        }
        return perRecord
    }
}
