/// The scale table: each workload at two sizes for Granary and GRDB records, with how much the cost
/// per object grew from the smaller size to the larger (1.0× is exactly linear) and the ratio at the
/// larger size. Its columns differ from the comparison tables', so it renders itself.
struct ScaleTable {
    var heading: String
    var small: Int
    var large: Int
    /// The best configuration's measurement of each column, by workload, at each size.
    var cells: [ScaleWorkload: (small: [SystemColumn: Cell], large: [SystemColumn: Cell])]
    var departments: Int
    var footnotes: [String] = []

    static let columns: [SystemColumn] = [.granary, .grdbRecords]
    /// Per-object growth up to this much from the smaller size to the larger still reads as linear:
    /// more objects spill more of every cache, which costs some time per object by itself.
    static let linearLimit = 1.5

    var header: [String] {
        ["workload"] + Self.columns.flatMap { column in
            ["\(column.title) \(Format.grouped(Double(small)))", "\(column.title) \(Format.grouped(Double(large)))", "\(column.title) growth per object"]
        } + ["ratio at \(Format.grouped(Double(large))) (GRDB records ÷ Granary)"]
    }

    /// How many times the cost per object grew from `small` to `large` objects: for times, the time
    /// per object; for memory, the bytes per object as they are.
    static func growth(_ small: Measurement, _ large: Measurement, objects: (small: Int, large: Int)) -> Double? {
        switch (small, large) {
        case (.time(let a), .time(let b)):
            return (b.seconds / Double(objects.large)) / (a.seconds / Double(objects.small))
        case (.bytesPerObject(let a), .bytesPerObject(let b)):
            return b / a
        default:
            return nil
        }
    }

    static func growthText(_ growth: Double?) -> String {
        guard let growth else { return "n/a" }
        return "\(Format.ratio(growth)) (\(growth <= linearLimit ? "linear" : "worse than linear"))"
    }

    /// The time per object after the time, so that the two sizes compare at a glance.
    static func text(_ cell: Cell?, objects: Int) -> String {
        guard let cell, let measurement = cell.measurement else { return cell?.placeholder ?? "n/a" }
        guard case .time(let duration) = measurement else { return cell.text }
        let perObject = duration.seconds / Double(objects) * 1e6
        let configuration = cell.configuration.map { " [\($0)]" } ?? ""
        return "\(measurement.text) (\(Format.decimal(perObject, digits: perObject >= 10 ? 1 : 2)) µs/object)\(configuration)"
    }

    func rows() -> [[String]] {
        ScaleWorkload.allCases.map { workload in
            let (smallCells, largeCells) = cells[workload] ?? ([:], [:])
            var line = [workload.title(departments: departments)]
            for column in Self.columns {
                line.append(Self.text(smallCells[column], objects: small))
                line.append(Self.text(largeCells[column], objects: large))
                if let a = smallCells[column]?.measurement, let b = largeCells[column]?.measurement {
                    line.append(Self.growthText(Self.growth(a, b, objects: (small, large))))
                } else {
                    line.append("n/a")
                }
            }
            let ratio = ResultTable.ratio(ResultRow(title: "", cells: largeCells), against: .grdbRecords)
            line.append(ratio)
            return line
        }
    }

    func render(markdown: Bool) -> String {
        PlainTable(heading: heading, header: header, rows: rows(), footnotes: footnotes).render(markdown: markdown)
    }
}
