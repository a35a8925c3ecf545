import Logging
import Synchronization

/// The records services' logger: swift-log, label `granary.records`.
///
/// Messages cover saves, migrations, stores recreated and failures the services recover from. Set the
/// level as CorePersistence's `Log` had it (`.verbose`, `.warning`, `.error`) or `.off`, and plug any
/// swift-log handler. When a level is off, its messages cost one atomic load: nothing is formatted.
///
/// ```swift
/// RecordsLog.level = .verbose
/// RecordsLog.setHandler { label in StreamLogHandler.standardError(label: label) }
/// ```
public enum RecordsLog {
    /// How much the services say.
    public enum Level: Int, Sendable, CaseIterable {
        /// Everything: each save and write, besides what the other levels say.
        case verbose
        /// Recovered failures and recreated stores, besides errors.
        case warning
        /// Failures only.
        case error
        /// Nothing.
        case off

        var swiftLogLevel: Logger.Level {
            switch self {
            case .verbose: return .debug
            case .warning: return .warning
            case .error: return .error
            case .off: return .critical
            }
        }
    }

    /// The label every message carries.
    public static let label = "granary.records"

    private static let currentLevel = Atomic<Int>(Level.warning.rawValue)
    private static let state = Mutex<Logger>(Logger(label: label))

    /// The lowest level logged; `.warning` until set.
    public static var level: Level {
        get { Level(rawValue: currentLevel.load(ordering: .relaxed)) ?? .warning }
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
        wanted != .off && wanted.rawValue >= currentLevel.load(ordering: .relaxed)
    }

    static func verbose(_ message: @autoclosure () -> String) {
        guard isOn(.verbose) else { return }
        logger.debug("\(message())")
    }

    static func warning(_ message: @autoclosure () -> String) {
        guard isOn(.warning) else { return }
        logger.warning("\(message())")
    }

    static func error(_ message: @autoclosure () -> String) {
        guard isOn(.error) else { return }
        logger.error("\(message())")
    }
}
