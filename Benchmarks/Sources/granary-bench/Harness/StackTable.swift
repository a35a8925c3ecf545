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
        let body = rows()
        var out = "\(heading)\n\n"
        if markdown {
            out += "| " + Self.header.joined(separator: " | ") + " |\n"
            out += "|" + Self.header.indices.map { $0 == 0 ? " --- |" : " ---: |" }.joined() + "\n"
            for line in body { out += "| " + line.joined(separator: " | ") + " |\n" }
            if !footnotes.isEmpty { out += "\n" + footnotes.map { "- \($0)\n" }.joined() }
        } else {
            let widths = Self.header.indices.map { column in ([Self.header] + body).map { $0[column].count }.max() ?? 0 }
            func line(_ fields: [String]) -> String {
                fields.enumerated().map { column, field in
                    let padding = String(repeating: " ", count: widths[column] - field.count)
                    return column == 0 ? field + padding : padding + field
                }.joined(separator: "  ")
            }
            out += line(Self.header) + "\n"
            out += widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ") + "\n"
            for fields in body { out += line(fields) + "\n" }
            if !footnotes.isEmpty { out += "\n" + footnotes.map { "* \($0)\n" }.joined() }
        }
        return out
    }
}
