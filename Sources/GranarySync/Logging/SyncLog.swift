import Foundation
import Logging
import Synchronization

/// GranarySync's logger: swift-log, label `granary.sync`, with Ensembles' logging levels.
///
/// Ensembles users turn on verbose logging to watch a merge in the console
/// (`CDESetCurrentLoggingLevel(CDELoggingLevel.Verbose.rawValue)`); here that is
/// `SyncLog.level = .verbose`. Every message carries the ensemble's identifier and the store's path as
/// metadata (`ensemble`, `store`). Failures are still thrown as
/// ``SyncError``s: the log says what happened, never instead of an error. When a level is off, its
/// messages cost one atomic load: nothing is formatted.
///
/// ```swift
/// SyncLog.level = .verbose
/// SyncLog.setHandler { label in StreamLogHandler.standardError(label: label) }
/// ```
public enum SyncLog {
    /// How much the ensembles say, Ensembles' `CDELoggingLevel`: each level includes those before it.
    public enum Level: Int, Sendable, CaseIterable, Comparable {
        /// Nothing.
        case none
        /// Merges, leeches and deleeches that failed, and forced deleeches.
        case error
        /// Files damaged or missing in the cloud, events left waiting, automatic merges retried.
        case warning
        /// What each merge, leech and deleech did.
        case trace
        /// Each step of a merge, with its time.
        case verbose

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }

        var swiftLogLevel: Logger.Level {
            switch self {
            case .none: .critical
            case .error: .error
            case .warning: .warning
            case .trace: .info
            case .verbose: .debug
            }
        }
    }

    /// The label every message carries.
    public static let label = "granary.sync"

    private static let currentLevel = Atomic<Int>(Level.error.rawValue)
    private static let state = Mutex<Logger>({
        var logger = Logger(label: label)
        logger.logLevel = Level.error.swiftLogLevel
        return logger
    }())

    /// The most detailed level logged; `.error` until set.
    public static var level: Level {
        get { Level(rawValue: currentLevel.load(ordering: .relaxed)) ?? .error }
        set {
            currentLevel.store(newValue.rawValue, ordering: .relaxed)
            state.withLock { $0.logLevel = newValue.swiftLogLevel }
        }
    }

    /// Sends the messages to a handler of your choosing (a file, your app's logging system) instead of
    /// the process's swift-log bootstrap; the level set here still applies.
    public static func setHandler(_ makeHandler: @escaping @Sendable (String) -> any LogHandler) {
        var logger = Logger(label: label, factory: makeHandler)
        logger.logLevel = level.swiftLogLevel
        state.withLock { $0 = logger }
    }

    /// The logger as configured now.
    public static var logger: Logger { state.withLock { $0 } }

    static func isOn(_ wanted: Level) -> Bool {
        wanted != .none && wanted.rawValue <= currentLevel.load(ordering: .relaxed)
    }

    static func log(_ wanted: Level, _ message: @autoclosure () -> String, metadata: @autoclosure () -> Logger.Metadata) {
        guard isOn(wanted) else { return }
        logger.log(level: wanted.swiftLogLevel, "\(message())", metadata: metadata())
    }

    /// `start` to now, as a message shows it.
    static func milliseconds(since start: ContinuousClock.Instant) -> String {
        let elapsed = ContinuousClock.now - start
        let ms = Double(elapsed.components.seconds) * 1_000 + Double(elapsed.components.attoseconds) / 1e15
        return ms < 10 ? String(format: "%.2f ms", ms) : String(format: "%.0f ms", ms)
    }
}

extension PersistentStoreEnsemble {
    /// Logs `message` about this ensemble at `level`.
    func log(_ level: SyncLog.Level, _ message: @autoclosure () -> String) {
        SyncLog.log(level, message(), metadata: ["ensemble": "\(ensembleIdentifier)", "store": "\(persistentStore.url?.path ?? "memory")"])
    }
}
