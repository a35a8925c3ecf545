/// The systems compared, one column each.
enum SystemColumn: Int, CaseIterable, Sendable, Comparable {
    case granary, grdbFast, grdbRecords

    var title: String {
        switch self {
        case .granary: return "Granary"
        case .grdbFast: return "GRDB fastest"
        case .grdbRecords: return "GRDB records"
        }
    }

    static func < (a: SystemColumn, b: SystemColumn) -> Bool { a.rawValue < b.rawValue }
}

/// One cell: a measurement and the configuration that produced it ("queue", "pool"), or why it is empty.
struct Cell: Sendable {
    var measurement: Measurement?
    var configuration: String?
    /// Shown when there is no measurement: "n/a" for a system not wired yet, "—" where the row has no peer.
    var placeholder = "n/a"

    var text: String {
        guard let measurement else { return placeholder }
        return configuration.map { "\(measurement.text) [\($0)]" } ?? measurement.text
    }

    static let notApplicable = Cell(measurement: nil, placeholder: "—")
}

/// The whole result: one row per workload, one column per system, a ratio column, and the notes that
/// explain the figures. Renders as aligned plain text or as Markdown.
struct ResultTable {
    var machine: String
    var rows: [(workload: Workload, title: String, cells: [SystemColumn: Cell])] = []
    var footnotes: [String] = []

    static let ratioTitle = "ratio (GRDB fastest ÷ Granary)"

    /// The ratio cell: how many times better Granary is than GRDB's fastest idiom (>1: Granary wins);
    /// "—" for the rows that have no peer.
    static func ratio(_ workload: Workload, _ cells: [SystemColumn: Cell]) -> String {
        guard workload.hasPeer else { return "—" }
        guard let mine = cells[.granary]?.measurement, let theirs = cells[.grdbFast]?.measurement,
              let advantage = mine.advantage(over: theirs)
        else { return "n/a" }
        return Format.ratio(advantage)
    }

    func render(markdown: Bool) -> String {
        let header = ["workload"] + SystemColumn.allCases.map(\.title) + [Self.ratioTitle]
        let body = rows.map { row in
            [row.title] + SystemColumn.allCases.map { (row.cells[$0] ?? Cell()).text } + [Self.ratio(row.workload, row.cells)]
        }
        var out = ""
        if markdown {
            out += "\(machine)\n\n"
            out += "| " + header.joined(separator: " | ") + " |\n"
            out += "|" + header.indices.map { $0 == 0 ? " --- |" : " ---: |" }.joined() + "\n"
            for line in body { out += "| " + line.joined(separator: " | ") + " |\n" }
            if !footnotes.isEmpty { out += "\n" + footnotes.map { "- \($0)\n" }.joined() }
        } else {
            out += "\(machine)\n\n"
            let widths = header.indices.map { column in
                ([header] + body).map { $0[column].count }.max() ?? 0
            }
            func line(_ fields: [String]) -> String {
                fields.enumerated().map { column, field in
                    let padding = String(repeating: " ", count: widths[column] - field.count)
                    return column == 0 ? field + padding : padding + field
                }.joined(separator: "  ")
            }
            out += line(header) + "\n"
            out += widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ") + "\n"
            for fields in body { out += line(fields) + "\n" }
            if !footnotes.isEmpty { out += "\n" + footnotes.map { "* \($0)\n" }.joined() }
        }
        return out
    }
}
