/// A table whose first column is left-aligned and the others right-aligned, as aligned text or
/// Markdown: every table of the bench renders through it.
struct PlainTable {
    var heading: String
    var header: [String]
    var rows: [[String]]
    var footnotes: [String] = []

    func render(markdown: Bool) -> String {
        var out = "\(heading)\n\n"
        if markdown {
            out += "| " + header.joined(separator: " | ") + " |\n"
            out += "|" + header.indices.map { $0 == 0 ? " --- |" : " ---: |" }.joined() + "\n"
            for line in rows { out += "| " + line.joined(separator: " | ") + " |\n" }
            if !footnotes.isEmpty { out += "\n" + footnotes.map { "- \($0)\n" }.joined() }
        } else {
            let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
            func line(_ fields: [String]) -> String {
                fields.enumerated().map { column, field in
                    let padding = String(repeating: " ", count: widths[column] - field.count)
                    return column == 0 ? field + padding : padding + field
                }.joined(separator: "  ")
            }
            out += line(header) + "\n"
            out += widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ") + "\n"
            for fields in rows { out += line(fields) + "\n" }
            if !footnotes.isEmpty { out += "\n" + footnotes.map { "* \($0)\n" }.joined() }
        }
        return out
    }
}
