import Foundation
import Testing

/// Runs the real `granary-bench` binary on tiny sizes, so that a change to the library or to a peer that
/// breaks the bench is caught by `swift test` rather than by the next person who wants numbers.
@Suite struct QuickRunTests {
    /// The bench executable, which SwiftPM builds into the same products folder as the test bundle.
    static var executable: URL {
        let products = Bundle.main.executableURL?.deletingLastPathComponent()
            ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        return products.appendingPathComponent("granary-bench")
    }

    /// Runs the bench with `arguments` and returns its exit status and standard output.
    static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test func quickRunPrintsARowForEveryWorkload() throws {
        let (status, output) = try Self.run(["--quick"])
        #expect(status == 0)
        for prefix in (1...12).map({ "\($0). " }) + ["11b. ", "12b. "] + (1...8).map({ "O\($0). " }) {
            #expect(output.split(separator: "\n").contains { $0.hasPrefix(prefix) }, "no row starting \(prefix)")
        }
        #expect(output.contains("Machine: "))
        #expect(output.contains("GRDB fastest"))
        #expect(output.contains("Object level"))
    }

    @Test func markdownFlagPrintsAPipeTableWithRatioColumn() throws {
        let (status, output) = try Self.run(["--quick", "--markdown"])
        #expect(status == 0)
        let tableLines = output.split(separator: "\n").filter { $0.hasPrefix("| ") }
        // Main table: header, alignment line, and one line per workload (12 numbered rows, 11b and 12b);
        // object level: header, alignment line and rows O1–O8.
        #expect(tableLines.count == 16 + 10)
        #expect(output.contains("### Object level"))
        #expect(tableLines.first?.contains("ratio") == true)
        #expect(output.contains("| --- | ---: |"))
    }

    @Test func onlyObjectsPrintsTheObjectTableAlone() throws {
        let (status, output) = try Self.run(["--quick", "--only", "objects"])
        #expect(status == 0)
        let lines = output.split(separator: "\n")
        #expect(lines.first?.hasPrefix("Machine: ") == true)
        #expect(!lines.contains { $0.hasPrefix("1. ") })
        #expect((1...8).allSatisfy { n in lines.contains { $0.hasPrefix("O\(n). ") } })
    }

    @Test func onlyStacksPrintsARowPerLayout() throws {
        let (status, output) = try Self.run(["--quick", "--only", "stacks", "--markdown"])
        #expect(status == 0)
        let lines = output.split(separator: "\n")
        #expect(lines.first?.hasPrefix("Machine: ") == true)
        #expect(output.contains("### Stacks"))
        for layout in [".direct", ".independent", ".nested", ".mixed"] {
            #expect(lines.contains { $0.hasPrefix("| PersistentContainer \(layout) |") }, "no row for \(layout)")
        }
        #expect(lines.contains { $0.hasPrefix("| ImportingContainer |") })
        #expect(!lines.contains { $0.hasPrefix("| 1. ") || $0.hasPrefix("| O1. ") })
    }

    @Test func onlyMigrationPrintsItsRows() throws {
        let (status, output) = try Self.run(["--quick", "--only", "migration", "--markdown"])
        #expect(status == 0)
        let lines = output.split(separator: "\n")
        #expect(lines.first?.hasPrefix("Machine: ") == true)
        #expect(output.contains("### Migration"))
        #expect((1...5).allSatisfy { n in lines.contains { $0.hasPrefix("| M\(n). ") } })
        #expect(!lines.contains { $0.hasPrefix("| 1. ") || $0.hasPrefix("| O1. ") })
    }

    @Test func onlyUpsertPrintsItsRowWithBothPeers() throws {
        let (status, output) = try Self.run(["--quick", "--only", "upsert", "--markdown"])
        #expect(status == 0)
        let lines = output.split(separator: "\n")
        #expect(lines.first?.hasPrefix("Machine: ") == true)
        #expect(output.contains("### Upsert"))
        let row = lines.first { $0.hasPrefix("| U1. ") }
        #expect(row != nil && row.map { !$0.contains("—") } == true, "no complete U1 row")
        #expect(!lines.contains { $0.hasPrefix("| 1. ") || $0.hasPrefix("| O1. ") })
    }

    @Test func onlyRecordsPrintsEveryRowWithItsPeer() throws {
        let (status, output) = try Self.run(["--quick", "--only", "records", "--markdown"])
        #expect(status == 0)
        let lines = output.split(separator: "\n")
        #expect(output.contains("### Records"))
        for prefix in ["| J1. ", "| J2. ", "| J3. ", "| K1. ", "| R1. "] {
            let row = lines.first { $0.hasPrefix(prefix) }
            #expect(row != nil && row.map { !$0.contains("—") } == true, "no complete \(prefix) row")
        }
        #expect(!lines.contains { $0.hasPrefix("| 1. ") || $0.hasPrefix("| O1. ") })
    }

    @Test func onlySyncPrintsEveryRow() throws {
        let (status, output) = try Self.run(["--quick", "--only", "sync", "--markdown"])
        #expect(status == 0)
        let lines = output.split(separator: "\n")
        #expect(output.contains("### Sync"))
        for prefix in ["| S1. ", "| S2. ", "| S3. "] {
            #expect(lines.contains { $0.hasPrefix(prefix) }, "no \(prefix) row")
        }
        #expect(!lines.contains { $0.hasPrefix("| 1. ") || $0.hasPrefix("| O1. ") })
    }

    @Test func onlyScalePrintsEachRowAtBothSizes() throws {
        let (status, output) = try Self.run(["--quick", "--only", "scale", "--markdown"])
        #expect(status == 0)
        let lines = output.split(separator: "\n")
        #expect(lines.first?.hasPrefix("Machine: ") == true)
        #expect(output.contains("### Scale"))
        #expect(output.contains("Granary 1,000 | Granary 2,000 | Granary growth per object"))
        for row in ["O1", "O2", "O5", "O5s", "O8", "O9", "O10", "O11"] {
            let line = lines.first { $0.hasPrefix("| \(row). ") }
            #expect(line != nil, "no row for \(row)")
            // A figure in every cell: two sizes and a growth for each system, and the ratio.
            #expect(line.map { !$0.contains("n/a") } == true, "a cell of \(row) is missing")
        }
        #expect(!lines.contains { $0.hasPrefix("| 1. ") || $0.hasPrefix("| O3. ") })
    }

    @Test func unknownFlagExitsWithUsageStatus() throws {
        let (status, output) = try Self.run(["--no-such-flag"])
        #expect(status == 2)
        #expect(output.isEmpty)
    }
}

/// The connect table's quick run.
extension QuickRunTests {
    @Test func theConnectTableRunsAndPrintsItsRows() throws {
        let (status, output) = try Self.run(["--quick", "--only", "connect", "--markdown"])
        #expect(status == 0, "\(output)")
        #expect(output.contains("### Connect: actions and feed merges"))
        #expect(output.contains("| A1. 1,000 empty generic actions: per action |"))
        #expect(output.contains("| A2. the same: resident memory growth during the merge |"))
    }
}

/// The aggregate table's quick run: every row, and both systems agreeing (the bench stops otherwise).
extension QuickRunTests {
    @Test func theAggregateTableRunsAndPrintsItsRows() throws {
        let (status, output) = try Self.run(["--quick", "--only", "aggregate", "--markdown"])
        #expect(status == 0, "\(output)")
        #expect(output.contains("### Aggregates"))
        let lines = output.split(separator: "\n")
        #expect((1...5).allSatisfy { n in lines.contains { $0.hasPrefix("| G\(n). ") } })
        #expect(!lines.contains { $0.hasPrefix("| 1. ") || $0.hasPrefix("| O1. ") })
    }
}
