import Foundation
@testable import GranarySync

/// SplitMix64: a seeded generator, so that a failing property run can be replayed from its seed.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: Int) { state = UInt64(bitPattern: Int64(seed)) }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func bytes(_ count: Int) -> Data {
        Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &self) })
    }

    mutating func storeID() -> StoreID {
        let bytes = Array(self.bytes(16))
        return StoreID(UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                                   bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15])))
    }
}

/// A fresh directory under the system's temporary directory, removed by `removeScratch`.
func makeScratchDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("granary-sync-test-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

func removeScratch(_ url: URL) {
    try? FileManager.default.removeItem(at: url)
}

/// A local file holding `data`, in `directory`.
func localFile(_ data: Data, in directory: URL, name: String = UUID().uuidString) throws -> URL {
    let url = directory.appendingPathComponent(name)
    try data.write(to: url)
    return url
}

/// A folder `shared` under `scratch` and a `LocalDirectoryFileSystem` on it: the cloud of tests that
/// reach into its files directly.
func sharedFolder(in scratch: URL) throws -> (root: URL, cloud: LocalDirectoryFileSystem) {
    let root = scratch.appendingPathComponent("shared")
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: false)
    return (root, LocalDirectoryFileSystem(rootDirectory: root))
}
