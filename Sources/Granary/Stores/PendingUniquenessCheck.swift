import Foundation

/// A big save's uniqueness check, run on another thread while the saving thread finishes the save's
/// links and writes its rows.
///
/// The check reads only the snapshot the write transaction started from (an immutable, `Sendable`
/// value) and the store's model and mapping, so it can run beside the transaction. Its verdict is the
/// one it would give before the writes, and the save waits for it before committing: conflicts found
/// abort the transaction, and nothing of the save is written. Small saves check on their own thread: a
/// hand-off costs more than checking a few rows.
final class PendingUniquenessCheck: @unchecked Sendable {
    // @unchecked: `outcome` is written once by the worker before it signals `done`, and read only after
    // waiting on `done`.

    /// Saves writing fewer constrained rows than this check them on the saving thread.
    static let threshold = 2_000

    private let done = DispatchSemaphore(value: 0)
    private var outcome: Result<[ConstraintConflictsFound.Found], any Error>?

    init(_ check: UniquenessCheck, written: [UniquenessCheck.Written], removed: [String: Set<Int64>]) {
        DispatchQueue.global(qos: .userInitiated).async { [self] in
            outcome = Result { try check.conflicts(written, removed: removed) }
            done.signal()
        }
    }

    /// Waits for the check.
    /// - Throws: `ConstraintConflictsFound` with the conflicts found; what the check threw.
    func finish() throws {
        done.wait()
        guard let outcome else { return }
        let found = try outcome.get()
        if !found.isEmpty { throw ConstraintConflictsFound(conflicts: found) }
    }
}
