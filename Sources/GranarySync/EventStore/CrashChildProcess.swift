import Foundation

/// What every GranarySync crash child (`granary-crashtest sync-*`) does around its own loop: print
/// progress lines the parent waits for, and run async work from a synchronous `main` until killed.
@_spi(CrashTesting)
public enum CrashChildProcess {
    /// One unbuffered write(2) per line: a line reaches the parent before the next step starts.
    public static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// Runs `body` (which loops until the parent kills the process) and waits for it. If it throws, the
    /// error goes to standard error after `label`; if it ends either way, the process exits with status 1,
    /// since a child is only ever meant to be killed.
    public static func run(_ label: String, _ body: @escaping @Sendable () async throws -> Void) -> Never {
        let ended = DispatchSemaphore(value: 0)
        Task {
            do {
                try await body()
            } catch {
                FileHandle.standardError.write(Data("\(label): \(error)\n".utf8))
            }
            ended.signal()
        }
        ended.wait()
        exit(1)
    }
}
