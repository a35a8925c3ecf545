import Foundation

/// The per-user data directory where stacks keep their stores unless told otherwise.
///
/// It follows the XDG convention that the `granary` tool's demo uses: `$XDG_DATA_HOME/<name>`, or
/// `~/.local/share/<name>` when the variable is unset, so every app's data sits in one predictable,
/// per-user place that backup tools know about.
public enum StoreDirectory {
    /// The default directory for a stack named `name`.
    /// - Parameters:
    ///   - name: The stack's name, which names its directory.
    ///   - environment: The process environment (a parameter so tests and tools can pass
    ///     their own).
    public static func defaultURL(for name: String,
                                  environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        let base: URL
        if let xdg = environment["XDG_DATA_HOME"], !xdg.isEmpty, xdg.hasPrefix("/") {
            base = URL(fileURLWithPath: xdg, isDirectory: true)
        } else {
            let home = environment["HOME"].map { URL(fileURLWithPath: $0, isDirectory: true) }
                ?? FileManager.default.homeDirectoryForCurrentUser
            base = home.appendingPathComponent(".local/share", isDirectory: true)
        }
        return base.appendingPathComponent(name, isDirectory: true)
    }
}
