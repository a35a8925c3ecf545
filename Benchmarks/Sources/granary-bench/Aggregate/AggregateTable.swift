import Foundation

/// The aggregate table: G1–G5, Granary against the same SQL through GRDB, from one run.
enum AggregateTable {
    static func render(heading: String, result: AggregateBench.Result, options: BenchOptions) -> PlainTable {
        var rows: [[String]] = []
        for workload in AggregateBench.Workload.allCases {
            guard let granary = result.granary[workload] else { continue }
            let peer = result.grdb[workload]?.min { $0.time < $1.time }
            rows.append([
                workload.title, time(granary),
                peer.map { "\(time($0.time)) [\($0.configuration)]" } ?? "—",
                peer.map { Format.ratio($0.time.seconds / granary.seconds) } ?? "—",
            ])
        }
        var notes: [String] = []
        if options.isQuick { notes.append("QUICK RUN: tiny sizes to check that the bench works; the figures mean nothing.") }
        notes += [
            "\(Format.grouped(Double(result.rows))) sales `(category TEXT, amount INTEGER, price REAL, day INTEGER)`: \(AggregateBench.categories) categories (\"category 0\"…), amounts 1–10,000, days 0–364, from a fixed seed; `amount` and `day` indexed in both systems, `category` in neither. Granary: a durable store (its rows written straight into the engine), one private-queue context. SQLite \(options.sqliteCacheMiB.map { "with a \($0) MiB page cache" } ?? "with its default page cache") in WAL mode, `ANALYZE`d after the load; the faster of `DatabaseQueue` and `DatabasePool` shown.",
            "Each workload runs once untimed, then \(result.runs) times (G5, which takes microseconds, \(result.extremeRuns) times); the median. Both systems must give the same answer (checked). Granary's calls: G1 and G5 `context.aggregate(.sum(\"amount\") / .max(\"amount\"), for: request, as: Int64.self)`; G2 `fetchDictionaries` with `propertiesToFetch = [\"category\", count()]`, `propertiesToGroupBy = [\"category\"]`, `havingPredicate = parseHaving(\"count > \(result.threshold)\")`; G3 `propertiesToFetch = [\"category\"]`, `returnsDistinctResults = true`; G4 G1's call with `filter = day BETWEEN {\(AggregateBench.days.0), \(AggregateBench.days.1)}`.",
            "GRDB: `\(AggregateBench.Workload.sum.sql(threshold: result.threshold))`; `\(AggregateBench.Workload.groupedCount.sql(threshold: result.threshold))`; `\(AggregateBench.Workload.distinct.sql(threshold: result.threshold))`; `\(AggregateBench.Workload.sumOfRange.sql(threshold: result.threshold))`; `\(AggregateBench.Workload.maximum.sql(threshold: result.threshold))`, each a cached statement read in one `read` block.",
            "Load average (1, 5, 15 min) before: \(result.loadBefore); after: \(result.loadAfter).",
            "Ratio: GRDB's time ÷ Granary's; above 1 means Granary is faster.",
        ]
        return PlainTable(heading: heading, header: ["workload", "Granary", "GRDB", "ratio"], rows: rows, footnotes: notes)
    }

    /// A time in ms, or in µs below a millisecond (G5 takes microseconds, which "0.00 ms" hides).
    static func time(_ duration: Duration) -> String {
        duration.seconds >= 0.001 ? Measurement.time(duration).text : "\(Format.decimal(duration.seconds * 1e6, digits: 1)) µs"
    }
}
