import Foundation
import Testing
@testable import GranaryStorage

@Suite struct PosixFileTests {
    @Test func writeReadSizeAndTruncateRoundTrip() throws {
        try withTemporaryDirectory { dir in
            let file = try PosixFile.open(dir + "/data", mode: .createNew)
            defer { file.close() }
            try file.write(Array("hello, world".utf8), at: 0)
            try file.write(Array("W".utf8), at: 7)
            #expect(try file.size() == 12)
            #expect(try file.readAll() == Array("hello, World".utf8))
            #expect(try file.pread(at: 7, count: 100) == Array("World".utf8), "a read past the end is short")
            #expect(try file.pread(at: 50, count: 4) == [])
            try file.write(Array("!".utf8), at: 14)
            #expect(try file.readAll() == Array("hello, World".utf8) + [0, 0] + Array("!".utf8), "a gap reads as zeros")
            try file.truncate(to: 5)
            #expect(try file.readAll() == Array("hello".utf8))
            try file.sync()
            try file.fullSync()
        }
    }

    @Test func openModesTreatExistingAndMissingFilesAsDocumented() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/f"
            #expect(throws: StorageError.io(operation: "open", path: path, errno: ENOENT)) {
                try PosixFile.open(path, mode: .readWrite)
            }
            #expect(throws: StorageError.io(operation: "open", path: path, errno: ENOENT)) {
                try PosixFile.open(path, mode: .readOnly)
            }
            try writeFile(path, [1, 2, 3])
            #expect(throws: StorageError.io(operation: "open", path: path, errno: EEXIST)) {
                try PosixFile.open(path, mode: .createNew)
            }
            let kept = try PosixFile.open(path, mode: .create)
            #expect(try kept.readAll() == [1, 2, 3])
            kept.close()
            let readOnly = try PosixFile.open(path, mode: .readOnly)
            #expect(throws: StorageError.self) { try readOnly.write([9], at: 0) }
            readOnly.close()
            #expect(throws: StorageError.io(operation: "read", path: path, errno: EBADF)) {
                try readOnly.pread(at: 0, count: 1)
            }
        }
    }

    @Test func secondExclusiveLockOnTheSameFileFails() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/lock"
            let first = try PosixFile.open(path, mode: .create)
            let second = try PosixFile.open(path, mode: .create)
            defer { second.close() }
            #expect(try first.tryLockExclusive())
            #expect(try !second.tryLockExclusive())
            #expect(try !second.tryLockShared())
            first.close()
            #expect(try second.tryLockShared(), "closing releases the lock")
            let third = try PosixFile.open(path, mode: .readOnly)
            defer { third.close() }
            #expect(try third.tryLockShared(), "shared locks coexist")
            #expect(try !third.tryLockExclusive())
        }
    }

    @Test func directoryOperations() throws {
        try withTemporaryDirectory { dir in
            let nested = dir + "/a/b/c"
            try PosixFile.makeDirectory(nested)
            try PosixFile.makeDirectory(nested)
            #expect(PosixFile.isDirectory(nested))
            try writeFile(nested + "/y", [1])
            try writeFile(nested + "/x", [2])
            #expect(try PosixFile.list(nested) == ["x", "y"])
            #expect(throws: StorageError.self) { try PosixFile.makeDirectory(nested + "/x/z") }
            try PosixFile.rename(nested + "/x", nested + "/y")
            #expect(try PosixFile.list(nested) == ["y"])
            #expect(try fileBytes(nested + "/y") == [2], "rename replaces the destination")
            try PosixFile.syncDirectory(nested)
            try PosixFile.remove(nested + "/y")
            #expect(!PosixFile.exists(nested + "/y"))
            #expect(throws: StorageError.io(operation: "remove", path: nested + "/y", errno: ENOENT)) {
                try PosixFile.remove(nested + "/y")
            }
            try PosixFile.remove(nested + "/y", ifExists: true)
            #expect(throws: StorageError.self) { try PosixFile.list(dir + "/missing") }
            #expect(throws: StorageError.self) { try PosixFile.syncDirectory(dir + "/missing") }
            #expect(PosixFile.parentDirectory(of: "/a/b") == "/a")
            #expect(PosixFile.parentDirectory(of: "/a") == "/")
            #expect(PosixFile.parentDirectory(of: "a") == ".")
        }
    }

    @Test func diskFullMessageNamesThePath() {
        let error = StorageError.io(operation: "write", path: "/x/log-1", errno: ENOSPC)
        #expect("\(error)".contains("the disk is full"))
        #expect("\(error)".contains("/x/log-1"))
    }

    @Test func injectedFaultsFireAfterCountOnceOrPersistently() throws {
        try withTemporaryDirectory { dir in
            let file = try PosixFile.open(dir + "/f", mode: .create)
            defer { file.close() }
            let once = FaultInjection.add(pathContains: dir, operation: .sync, errno: EIO, afterCount: 2)
            try file.sync()
            try file.sync()
            #expect(throws: StorageError.io(operation: "fdatasync", path: dir + "/f", errno: EIO)) { try file.sync() }
            try file.sync()
            #expect(FaultInjection.fireCount(once) == 1)
            FaultInjection.remove(once)

            let persistent = FaultInjection.add(pathContains: dir, operation: .rename, errno: EXDEV, persistent: true)
            defer { FaultInjection.remove(persistent) }
            try writeFile(dir + "/a", [1])
            for _ in 0..<3 {
                #expect(throws: StorageError.self) { try PosixFile.rename(dir + "/a", dir + "/b") }
            }
            #expect(FaultInjection.fireCount(persistent) == 3)
            #expect(PosixFile.exists(dir + "/a") && !PosixFile.exists(dir + "/b"))
        }
    }

    @Test func injectedShortWriteWritesOnlyAPrefix() throws {
        try withTemporaryDirectory { dir in
            let file = try PosixFile.open(dir + "/f", mode: .create)
            defer { file.close() }
            let token = FaultInjection.add(pathContains: dir, operation: .write, errno: ENOSPC, partialBytes: 3)
            defer { FaultInjection.remove(token) }
            #expect(throws: StorageError.io(operation: "write", path: dir + "/f", errno: ENOSPC)) {
                try file.write([1, 2, 3, 4, 5, 6], at: 0)
            }
            #expect(try file.readAll() == [1, 2, 3])
            try file.write([7], at: 3)
            #expect(try file.readAll() == [1, 2, 3, 7], "a one-shot rule fires once")
        }
    }

    @Test func faultRulesOnlyAffectMatchingPaths() throws {
        try withTemporaryDirectory { dir in
            try withTemporaryDirectory { other in
                let token = FaultInjection.add(pathContains: other, operation: .write, errno: EIO, persistent: true)
                defer { FaultInjection.remove(token) }
                try writeFile(dir + "/f", [1, 2])
                #expect(throws: StorageError.self) { try writeFile(other + "/f", [1, 2]) }
                FaultInjection.remove(token)
                try writeFile(other + "/f", [1, 2])
            }
        }
    }
}
