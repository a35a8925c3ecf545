/// Checks and splits the paths a ``CloudFileSystem`` is given, so that every implementation refuses
/// the same paths with the same error.
enum CloudPath {
    /// The components of `path`; empty for the root.
    /// - Parameter allowsRoot: whether the empty path (the root) is acceptable here.
    /// - Throws: `CloudFileSystemError.invalidPath` naming what is wrong.
    static func components(_ path: String, allowsRoot: Bool = true) throws(CloudFileSystemError) -> [String] {
        if path.isEmpty {
            guard allowsRoot else { throw .invalidPath(path, reason: "the root is not an item") }
            return []
        }
        guard path.utf8.count <= 1024 else { throw .invalidPath(path, reason: "longer than 1024 bytes") }
        guard !path.hasPrefix("/") else { throw .invalidPath(path, reason: "absolute; cloud paths are relative to the root") }
        guard !path.utf8.contains(0) else { throw .invalidPath(path, reason: "contains a NUL byte") }
        let components = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        for component in components {
            guard !component.isEmpty else { throw .invalidPath(path, reason: "has an empty component") }
            guard !component.hasPrefix(".") else {
                throw .invalidPath(path, reason: "component '\(component.prefix(64))' starts with '.', kept for temp and bookkeeping files")
            }
            guard component.utf8.count <= 255 else { throw .invalidPath(path, reason: "a component is longer than 255 bytes") }
        }
        return components
    }

    /// The parent of the path made of `components` (nonempty), "" for an item of the root.
    static func parent(of components: [String]) -> String {
        components.dropLast().joined(separator: "/")
    }
}
