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

/// One line of a table: a workload's title, a cell per system, and whether GRDB ran it too.
struct ResultRow {
    var title: String
    var cells: [SystemColumn: Cell]
    /// `false` for rows that describe Granary alone (limits, memory layout): their ratio cells show "—".
    var hasPeer = true
}

/// A ratio column: how many times better Granary is than `peer` in each row.
struct RatioColumn {
    var peer: SystemColumn

    var title: String { "ratio (\(peer.title) ÷ Granary)" }
}

/// One table of the result: one row per workload, one column per system, ratio columns, and the notes
/// that explain the figures. Renders as aligned plain text or as Markdown.
struct ResultTable {
    /// The line above the table: the machine for the first table, a heading for the next ones.
    var heading: String
    var ratios = [RatioColumn(peer: .grdbFast)]
    var rows: [ResultRow] = []
    var footnotes: [String] = []

    /// The ratio cell: how many times better Granary is than `peer` (>1: Granary wins); "—" for the rows
    /// (or cells) that have no peer, "n/a" when either side is missing or their units differ.
    static func ratio(_ row: ResultRow, against peer: SystemColumn) -> String {
        guard row.hasPeer else { return "—" }
        if let cell = row.cells[peer], cell.measurement == nil, cell.placeholder == Cell.notApplicable.placeholder { return "—" }
        guard let mine = row.cells[.granary]?.measurement, let theirs = row.cells[peer]?.measurement,
              let advantage = mine.advantage(over: theirs)
        else { return "n/a" }
        return Format.ratio(advantage)
    }

    func render(markdown: Bool) -> String {
        let header = ["workload"] + SystemColumn.allCases.map(\.title) + ratios.map(\.title)
        let body = rows.map { row in
            [row.title] + SystemColumn.allCases.map { (row.cells[$0] ?? Cell()).text }
                + ratios.map { Self.ratio(row, against: $0.peer) }
        }
        return PlainTable(heading: heading, header: header, rows: body, footnotes: footnotes).render(markdown: markdown)
    }
}
