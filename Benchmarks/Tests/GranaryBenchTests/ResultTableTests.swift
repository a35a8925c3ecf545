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
        #expect(ResultTable.ratio(.bulkInsert, [.granary: granary, .grdbFast: fastest]) == "2.5×")
        #expect(ResultTable.ratio(.bulkInsert, [.granary: Cell(), .grdbFast: fastest]) == "n/a")
        #expect(ResultTable.ratio(.syncLimit, [.granary: granary]) == "—")
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
    }
}
