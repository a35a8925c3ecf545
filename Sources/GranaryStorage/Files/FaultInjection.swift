import Synchronization

/// A process-wide set of rules that make chosen `PosixFile` operations fail, so tests can exercise a
/// full disk, a failed fsync or a torn write without a broken disk.
///
/// Rules match by a substring of the path, so tests that use distinct temporary directories can run
/// in parallel without seeing each other's faults. With no rules registered, the check in `PosixFile`
/// is a single relaxed atomic load.
enum FaultInjection {
    /// The file-system operations a rule can fail.
    enum Operation: Sendable, Equatable, CustomStringConvertible {
        case open, read, write, truncate, rename, remove, makeDirectory
        /// `fdatasync` or `fsync` of a file.
        case sync
        /// `fsync` of a directory.
        case syncDirectory

        var description: String {
            switch self {
            case .open: "open"
            case .read: "read"
            case .write: "write"
            case .truncate: "truncate"
            case .rename: "rename"
            case .remove: "remove"
            case .makeDirectory: "makeDirectory"
            case .sync: "sync"
            case .syncDirectory: "syncDirectory"
            }
        }
    }

    /// Identifies a registered rule, to remove it or ask how often it fired.
    struct Token: Hashable, Sendable {
        fileprivate let id: Int
    }

    /// What `PosixFile` should do instead of the real call.
    struct Fault: Sendable, Equatable {
        let errno: Int32
        /// For a write: how many bytes to really write before failing (a torn write). `nil` writes nothing.
        let partialBytes: Int?
    }

    private struct Rule {
        let token: Token
        let pathContains: String
        let operation: Operation
        let fault: Fault
        /// Matching operations still allowed to succeed before the first failure.
        var successesLeft: Int
        let isPersistent: Bool
        var fireCount = 0
    }

    private struct Registry {
        var nextID = 0
        var rules: [Rule] = []
    }

    private static let registry = Mutex(Registry())
    /// Lets `PosixFile` skip the lock entirely when no test has registered a rule.
    private static let ruleCount = Atomic<Int>(0)

    /// Registers a rule: the operation fails with `errno` on paths containing `pathContains`, after
    /// `afterCount` matching operations have succeeded, once (or every time when `persistent`).
    ///
    /// Use it in tests only, and remove the rule with `remove(_:)` (for example in a `defer`).
    /// - Parameter partialBytes: for `.write`, write this many bytes before failing, like a short write.
    @discardableResult
    static func add(
        pathContains: String, operation: Operation, errno: Int32, afterCount: Int = 0,
        persistent: Bool = false, partialBytes: Int? = nil
    ) -> Token {
        registry.withLock { registry in
            let token = Token(id: registry.nextID)
            registry.nextID += 1
            registry.rules.append(Rule(
                token: token, pathContains: pathContains, operation: operation,
                fault: Fault(errno: errno, partialBytes: partialBytes),
                successesLeft: max(0, afterCount), isPersistent: persistent))
            ruleCount.store(registry.rules.count, ordering: .relaxed)
            return token
        }
    }

    /// Unregisters a rule; removing one twice is harmless.
    static func remove(_ token: Token) {
        registry.withLock { registry in
            registry.rules.removeAll { $0.token == token }
            ruleCount.store(registry.rules.count, ordering: .relaxed)
        }
    }

    /// How many times the rule has made an operation fail.
    static func fireCount(_ token: Token) -> Int {
        registry.withLock { registry in registry.rules.first { $0.token == token }?.fireCount ?? 0 }
    }

    /// The fault to inject for `operation` on `path` (or on `otherPath`, a rename's destination), if any.
    static func fault(for operation: Operation, path: String, otherPath: String? = nil) -> Fault? {
        guard ruleCount.load(ordering: .relaxed) > 0 else { return nil }
        return registry.withLock { registry -> Fault? in
            var result: Fault?
            for i in registry.rules.indices {
                let rule = registry.rules[i]
                guard rule.operation == operation,
                      path.contains(rule.pathContains) || (otherPath?.contains(rule.pathContains) ?? false)
                else { continue }
                // Every matching rule counts the operation, but only the first that fires decides.
                if rule.successesLeft > 0 {
                    registry.rules[i].successesLeft -= 1
                } else if rule.isPersistent || rule.fireCount == 0 {
                    if result == nil {
                        registry.rules[i].fireCount += 1
                        result = rule.fault
                    }
                }
            }
            return result
        }
    }
}
