import Testing
@testable import granary_bench

/// The ratio column and the number formats, which no GRDB-only run exercises: the Granary column is
/// empty until the engine lands, so these cases stand in for it.
@Suite struct ResultTableTests {
    @Test func ratioIsAboveOneWhenGranaryIsFasterOrSmaller() throws {
        let threeTimes = try #require(Measurement.time(.milliseconds(100)).advantage(over: .time(.milliseconds(300))))
        #expect(abs(threeTimes - 3) < 1e-9)
        #expect(Measurement.rate(2_000, unit: "tx/s").advantage(over: .rate(500, unit: "tx/s")) == 4)
        #expect(Measurement.bytes(50).advantage(over: .bytes(75)) == 1.5)
        #expect(Measurement.time(.seconds(1)).advantage(over: .bytes(1)) == nil)
    }

    @Test func ratioCellNeedsBothGranaryAndGRDBFastest() {
        let granary = Cell(measurement: .time(.milliseconds(10)))
        let fastest = Cell(measurement: .time(.milliseconds(25)), configuration: "queue")
        #expect(ResultTable.ratio(ResultRow(title: "1.", cells: [.granary: granary, .grdbFast: fastest]), against: .grdbFast) == "2.5×")
        #expect(ResultTable.ratio(ResultRow(title: "1.", cells: [.granary: Cell(), .grdbFast: fastest]), against: .grdbFast) == "n/a")
        #expect(ResultTable.ratio(ResultRow(title: "11.", cells: [.granary: granary], hasPeer: false), against: .grdbFast) == "—")
        #expect(ResultTable.ratio(ResultRow(title: "O8.", cells: [.granary: granary, .grdbFast: .notApplicable]), against: .grdbFast) == "—")
    }

    @Test func eachRatioColumnComparesWithItsOwnPeer() {
        let row = ResultRow(title: "O1.", cells: [
            .granary: Cell(measurement: .time(.milliseconds(100))),
            .grdbFast: Cell(measurement: .time(.milliseconds(50))),
            .grdbRecords: Cell(measurement: .time(.milliseconds(400))),
        ])
        #expect(ResultTable.ratio(row, against: .grdbRecords) == "4.0×")
        #expect(ResultTable.ratio(row, against: .grdbFast) == "0.50×")
        let table = ResultTable(heading: "Object level", ratios: [RatioColumn(peer: .grdbRecords), RatioColumn(peer: .grdbFast)],
                                rows: [row])
        let header = table.render(markdown: true).split(separator: "\n").first { $0.hasPrefix("| ") }
        #expect(header?.contains("ratio (GRDB records ÷ Granary) | ratio (GRDB fastest ÷ Granary)") == true)
    }

    @Test func bestConfigurationWinsEachCell() {
        #expect(Measurement.rate(10, unit: "ops/s").isAtLeastAsGood(as: .rate(9, unit: "ops/s")))
        #expect(!Measurement.time(.milliseconds(11)).isAtLeastAsGood(as: .time(.milliseconds(10))))
    }

    @Test func numbersPrintWithoutLocale() {
        #expect(Format.grouped(1_234_567.6) == "1,234,568")
        #expect(Format.grouped(999) == "999")
        #expect(Format.decimal(0.05, digits: 2) == "0.05")
        #expect(Format.decimal(-1.5, digits: 1) == "-1.5")
        #expect(Format.decimal(24.2, digits: 0) == "24")
        #expect(Format.ratio(0.456) == "0.46×")
        #expect(Format.ratio(18.4) == "18×")
        #expect(Measurement.rate(250_000, unit: "ops/s").text == "250,000 ops/s (4.00 µs)")
        #expect(Measurement.time(.milliseconds(1_536)).text == "1,536 ms")
        #expect(Measurement.bytes(72_215_040).text == "72.2 MB")
        #expect(Measurement.bytesPerObject(301.4).text == "301 B/object")
    }
}
