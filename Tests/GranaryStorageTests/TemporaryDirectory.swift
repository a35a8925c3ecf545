import Foundation
@testable import GranaryStorage

/// Runs `body` with a fresh, unique directory under the system's temporary directory and removes it
/// afterwards; fault-injection rules scoped to its path cannot affect tests running in parallel.
func withTemporaryDirectory<R>(_ body: (String) throws -> R) throws -> R {
    let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("granary-test-\(UUID().uuidString)").path
    try PosixFile.makeDirectory(path)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}

/// `withTemporaryDirectory` for async tests.
func withTemporaryDirectoryAsync<R>(_ body: (String) async throws -> R) async throws -> R {
    let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("granary-test-\(UUID().uuidString)").path
    try PosixFile.makeDirectory(path)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try await body(path)
}

/// Deterministic pseudo-random bytes (SplitMix64), so a failing case can be reproduced from its seed.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) }
    }
}

/// The file's bytes, for tests that damage and rewrite it.
func fileBytes(_ path: String) throws -> [UInt8] {
    let file = try PosixFile.open(path, mode: .readOnly)
    defer { file.close() }
    return try file.readAll()
}

/// Replaces the file at `path` with `bytes`.
func writeFile(_ path: String, _ bytes: [UInt8]) throws {
    let file = try PosixFile.open(path, mode: .create)
    defer { file.close() }
    try file.truncate(to: 0)
    try file.write(bytes, at: 0)
}
