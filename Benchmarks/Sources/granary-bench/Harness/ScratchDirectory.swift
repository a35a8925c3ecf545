import Foundation

/// A fresh folder for one run's stores, removed when the run ends, and helpers to make sub-folders
/// and measure what a store left on disk.
final class ScratchDirectory {
    let url: URL

    /// Makes a new, uniquely named folder inside `parent`.
    /// - Throws: `BenchError.system` when the folder cannot be made.
    init(parent: String) throws {
        var template = Array((parent + "/granary-bench-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!).map { String(cString: $0) } }
        guard let made else { throw BenchError.system(operation: "mkdtemp", path: parent, errno: errno) }
        url = URL(fileURLWithPath: made)
    }

    /// A new empty sub-folder for one store.
    /// - Throws: a Foundation error when the folder cannot be made.
    func makeFolder(_ name: String) throws -> URL {
        let folder = url.appendingPathComponent(name, isDirectory: true)
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    func remove(_ folder: URL) {
        try? FileManager.default.removeItem(at: folder)
    }

    /// The sum of the sizes of the regular files under `folder`: what a store occupies, logs included.
    static func size(of folder: URL) -> Int {
        guard let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.fileSizeKey, .isRegularFileKey])
        else { return 0 }
        var total = 0
        for case let file as URL in files {
            let values = try? file.resourceValues(forKeys: [.fileSizeKey, .isRegularFileKey])
            if values?.isRegularFile == true { total += values?.fileSize ?? 0 }
        }
        return total
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}
