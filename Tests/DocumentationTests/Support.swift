import Foundation

/// A path for a store under a fresh directory of its own in the temporary directory (not created: the
/// store creates it), named after the test.
func scratchStore(_ name: String = "Library", label: String = #function) -> URL {
    FileManager.default.temporaryDirectory
        .appendingPathComponent("granary-docs-\(label.filter { $0.isLetter })-\(UUID().uuidString.prefix(8))", isDirectory: true)
        .appendingPathComponent("\(name).granary", isDirectory: true)
}

/// A fresh, existing directory in the temporary directory, named after the test.
func scratchDirectory(label: String = #function) throws -> URL {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("granary-docs-\(label.filter { $0.isLetter })-\(UUID().uuidString.prefix(8))", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Removes a scratch store's directory and its parent.
func removeScratch(_ store: URL) {
    try? FileManager.default.removeItem(at: store.deletingLastPathComponent())
}
