/// The stacks table: one row per layout with the import's throughput and the main-context fetches'
/// latencies. Its columns differ from the comparison tables' (there is no peer), so it renders itself.
struct StackTable {
    var heading: String
    var results: [StackResult]
    var footnotes: [String] = []

    static let header = ["layout", "import", "import time", "fetches", "fetch p50", "fetch p99", "fetch worst", "over 16 ms", "goal"]

    func rows() -> [[String]] {
        results.map { r in
            [r.layout.title,
             "\(Format.grouped(r.importRate)) objects/s",
             "\(Format.decimal(r.importDuration.seconds, digits: 1)) s",
             Format.grouped(Double(r.latencies.count)),
             Measurement.time(r.latency(percentile: 0.5)).text,
             Measurement.time(r.latency(percentile: 0.99)).text,
             Measurement.time(r.latencies.max() ?? .zero).text,
             "\(r.overFrame)",
             r.overFrame == 0 ? "met" : "missed"]
        }
    }

    func render(markdown: Bool) -> String {
        PlainTable(heading: heading, header: Self.header, rows: rows(), footnotes: footnotes).render(markdown: markdown)
    }
}
