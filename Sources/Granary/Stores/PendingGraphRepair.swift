import Foundation
import GranaryStorage

/// A big save's graph pass, run on another thread while the saving thread writes the save's rows as
/// the context wrote them.
///
/// The pass reads only the snapshot the write transaction started from and the rows handed to it, so
/// it can run beside the transaction's writes. It may change some of those rows (a link another save
/// broke, a reference to a row that is gone): the saving thread writes those again once the pass is
/// done, along with the rows at the other ends that the pass changed. A save whose context kept both
/// ends of its links in step, as a context does, gets nothing back to rewrite, and the pass costs
/// the saving thread nothing. Only saves that delete nothing take this path: deleted rows must be
/// removed before anything is written (a written row may take a unique value a deleted one held), and
/// which rows a cascade deletes is known only at the end of the pass.
final class PendingGraphRepair: @unchecked Sendable {
    // @unchecked: `outcome` is written once by the worker before it signals `done`, and read only after
    // waiting on `done`; the graph is handed over whole and not touched by the caller until then.

    /// Saves writing fewer rows than this run the pass on the saving thread: a hand-off costs more
    /// than a short pass.
    static let threshold = 1_000

    private let done = DispatchSemaphore(value: 0)
    private var outcome: Result<GraphRepair, any Error>?

    init(_ graph: GraphRepair) {
        nonisolated(unsafe) var graph = graph
        DispatchQueue.global(qos: .userInitiated).async { [self] in
            outcome = Result {
                try graph.run()
                return graph
            }
            done.signal()
        }
    }

    /// Waits for the pass and gives the graph it finished.
    /// - Throws: what the pass threw.
    func finish() throws -> GraphRepair {
        done.wait()
        return try outcome!.get()
    }
}
