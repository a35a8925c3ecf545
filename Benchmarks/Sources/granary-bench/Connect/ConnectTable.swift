import Foundation

/// The connect table: A1 (per-action overhead against a task group) and A2 (feed merges).
enum ConnectTable {
    static func render(heading: String, result r: ConnectBench.Result, options: BenchOptions) -> PlainTable {
        func perAction(_ d: Duration) -> String { "\(Format.decimal(d.seconds * 1e6 / Double(r.actions), digits: 1)) µs" }
        func overhead(_ mine: Duration, _ peer: Duration) -> String {
            "\(Format.decimal(max(0, mine.seconds - peer.seconds) * 1e6 / Double(r.actions), digits: 1)) µs"
        }
        var rows: [[String]] = [
            ["A1. \(Format.grouped(Double(r.actions))) empty generic actions: per action", perAction(r.genericConnect), perAction(r.genericTaskGroup),
             overhead(r.genericConnect, r.genericTaskGroup), "20 µs"],
            ["A1. \(Format.grouped(Double(r.actions))) empty entity actions (one lane, a context each): per action", perAction(r.entityConnect),
             perAction(r.entityTaskGroup), overhead(r.entityConnect, r.entityTaskGroup), "20 µs"],
        ]
        for merge in r.merges {
            rows.append(["A2. feed of \(Format.grouped(Double(merge.feed))) into \(Format.grouped(Double(merge.storeSize))) (10% changed, 1% new, 1% gone): time",
                         Measurement.time(merge.time).text, "—", "—", merge.storeSize == 40_000 ? "1 s" : "—"])
            rows.append(["A2. the same: resident memory growth during the merge",
                         "\(Format.decimal(Double(merge.peakGrowth) / 1_048_576, digits: 1)) MiB", "—", "—", "flat"])
            rows.append(["A2. the store's own listing of \(Format.grouped(Double(merge.storeSize))) again (nothing changes): time, memory growth",
                         "\(Measurement.time(merge.unchangedTime).text), \(Format.decimal(Double(merge.unchangedGrowth) / 1_048_576, digits: 1)) MiB",
                         "—", "—", "—"])
            rows.append(["A2. the feed in key order, generated as read (`merge(sortedByKey:)`): time, memory growth",
                         "\(Measurement.time(merge.sortedTime).text), \(Format.decimal(Double(merge.sortedGrowth) / 1_048_576, digits: 1)) MiB",
                         "—", "—", merge.storeSize == 40_000 ? "1 s" : "—"])
            rows.append(["A2. the store's own listing in key order, generated as read: memory growth",
                         "\(Format.decimal(Double(merge.sortedUnchangedGrowth) / 1_048_576, digits: 1)) MiB", "—", "—", "flat"])
        }
        var notes: [String] = []
        if options.isQuick { notes.append("QUICK RUN: tiny sizes to check that the bench works; the figures mean nothing.") }
        notes += [
            "A1: `connect.execute` of \(Format.grouped(Double(r.actions))) actions with empty bodies, then `waitUntilIdle()`: each makes a proxy, goes through its lane (generic: five at a time; entity: one serial lane), posts its start and finish notifications and records its statistics; an entity action also makes a new background context and an `ActionContext` and runs the body in the context's `performAndWait`. Task group column: the same bodies (for entity actions, a new background context and an empty `performAndWait`) as child tasks of one `withTaskGroup`. Overhead = (connect − task group) ÷ actions. Median of \(options.repetitions) runs.",
            "A2: a durable store (`.full`) of customers (uuid unique, name, score, email) filled by an untimed first merge; then one entity action merges a shuffled feed with every tenth name changed, 1% of the customers gone and 1% new (`ActionContext.merge`, batches of 1,000, one save). Memory: resident memory sampled every millisecond during the action, minus the resident memory before it (the feed array itself is made before). Both sizes must report the expected inserts, updates and deletes (checked).",
        ]
        return PlainTable(heading: heading, header: ["workload", "Granary", "task group", "overhead", "target"], rows: rows, footnotes: notes)
    }
}
