import Foundation

// granary-bench: Granary against GRDB (SQLite) on the same data, the same disk, in the same run.
// Progress goes to standard error; standard output holds only the table, so it can be pasted or diffed.

func report(_ message: String) {
    FileHandle.standardError.write(Data("\(message)\n".utf8))
}

/// The best measurement for each workload among the configurations of each column (queue or pool).
func bestCells(_ results: [SuiteResult], workload: Workload) -> [SystemColumn: Cell] {
    var cells: [SystemColumn: Cell] = [:]
    for result in results {
        guard let measurement = result.measurements[workload] else { continue }
        let candidate = Cell(measurement: measurement, configuration: result.system.configuration)
        if let current = cells[result.system.column]?.measurement, current.isAtLeastAsGood(as: measurement) { continue }
        cells[result.system.column] = candidate
    }
    return cells
}

/// Every system must have returned the same rows, or the comparison is void.
/// - Throws: `BenchError.resultsDisagree` naming the workload and the systems' checksums.
func checkAgreement(_ results: [SuiteResult], options: BenchOptions) throws {
    for workload in Workload.allCases {
        let sums = results.compactMap { result in
            result.checksums[workload].map { (system: "\(result.system.column.title) [\(result.system.configuration ?? "-")]", sum: $0) }
        }
        guard let first = sums.first, sums.contains(where: { $0.sum != first.sum }) else { continue }
        throw BenchError.resultsDisagree(
            workload: workload.title(options),
            detail: sums.map { "\($0.system): \($0.sum)" }.joined(separator: ", "))
    }
}

func footnotes(options: BenchOptions, sqliteVersion: String, rawBytes: Int, isGranaryReady: Bool) -> [String] {
    var notes: [String] = []
    if options.isQuick { notes.append("QUICK RUN: tiny sizes to check that the bench works; the figures mean nothing.") }
    notes += [
        "Ratio: GRDB fastest's time ÷ Granary's (for rates, Granary's rate ÷ GRDB's; for size, SQLite bytes ÷ Granary bytes): above 1 means Granary is better.",
        "Whole-table rows (1, 5, 9) are the median of \(options.repetitions), \(options.repetitions), \(options.reopenRepetitions) runs; 6 runs once (it empties the table). Reads (2–4) are timed in \(SuiteRunner.batches) batches after an untimed warm-up batch and report the median batch's rate; µs in parentheses is time per operation.",
        "[queue] / [pool]: the GRDB connection (DatabaseQueue / DatabasePool) that was faster in that row; both run every row.",
        "SQLite \(sqliteVersion) (the system's libsqlite3) in WAL mode with synchronous=FULL, set after GRDB's own default of NORMAL for WAL, and checked; page cache \(options.sqliteCacheMiB.map { "\($0) MiB (--sqlite-cache-mb)" } ?? "SQLite's default, 2 MiB") per connection. Granary with durability .full. All stores in fresh folders of one scratch directory.",
        "GRDB fastest: hand-written SQL, cached statements, unchecked arguments, rows read from the cursor by index, dates as REAL. GRDB records: Codable records and the query interface, dates as GRDB's default text.",
        "Rows 5 and 6 write row by row by key, as an object store does; SQLite's set-based `UPDATE item SET …` or `DELETE FROM item` would be faster.",
        "Rows 7–8: \(Format.grouped(Double(options.durableTransactions))) transactions of one insert each into an empty table, after \(SuiteRunner.durableWarmUp) untimed, in \(SuiteRunner.batches) batches; the median batch's rate. SQLite has no group commit: its writers take turns, each with its own sync.",
        "Row 9: open, then read one row by key. SQLite opens lazily (the header, and the schema on first use, then only the pages the query touches), so its figure does not grow with the table; a store that loads its table at open pays for every row. The OS page cache is warm for every system (no cache drop).",
        "Row 10: the files in the store's folder after a checkpoint (SQLite: TRUNCATE, so the WAL is empty). Raw data, the column payloads alone (8 B per integer, real and date, 1 B per flag, the name's UTF-8), is \(Format.decimal(Double(rawBytes) / 1_000_000, digits: 1)) MB.",
        "Rows 11 and 11b: writing 100 B to a file in the scratch directory and calling fdatasync, in a loop, half before and half after the systems ran; the median of \(SuiteRunner.batches) batches. Appending (11) also makes the file's new size durable on each sync; overwriting a preallocated file (11b) syncs data only, which is what SQLite's WAL does once it wraps around after a checkpoint, so SQLite can beat row 11 but not 11b.",
        "Rows 12 and 12b: Granary's in-memory table for the \(Format.grouped(Double(options.rows))) rows of row 1, per row; and the average size of the same row in Granary's row encoding, without its key.",
    ]
    return notes
}

do {
    let options = try BenchOptions.parse(Array(CommandLine.arguments.dropFirst()))
    let scratch = try ScratchDirectory(parent: options.parentDirectory)
    let machine = MachineInfo.current(scratch: scratch.url.path)
    report("granary-bench: \(machine.summary)\nscratch: \(scratch.url.path)")
    report("generating \(options.rows) + \(options.largeRows) rows")
    let dataset = Dataset(rows: options.rows, lookups: options.lookups, queries: options.queries, seed: 0x6EA7A7)
    let runner = SuiteRunner(options: options, dataset: dataset, scratch: scratch, progress: report)

    let systems = [GranaryEngineSystem.system].compactMap { $0 }
        + SQLiteSetup.ConnectionKind.allCases.flatMap { kind in
            [GRDBFastStore.system(kind, cacheMiB: options.sqliteCacheMiB),
             GRDBRecordsStore.system(kind, cacheMiB: options.sqliteCacheMiB)]
        }

    // The sync ceiling is measured before and after the systems, half each time, so that the disk's mood
    // during the run (other builders share it) weighs on the limit as it does on the stores.
    let limitFolder = try scratch.makeFolder("limit")
    func measureLimits() throws -> [SyncLimit.Mode: [Duration]] {
        report("limit: write + fdatasync")
        var perRecord: [SyncLimit.Mode: [Duration]] = [:]
        for mode in SyncLimit.Mode.allCases {
            perRecord[mode] = try SyncLimit.measure(mode, in: limitFolder, iterations: options.durableTransactions / 2,
                                                    batches: SuiteRunner.batches / 2)
        }
        return perRecord
    }
    let limitsBefore = try measureLimits()
    let results = try systems.map { try runner.run($0) }
    try checkAgreement(results, options: options)
    let limitsAfter = try measureLimits()
    func limit(_ mode: SyncLimit.Mode) -> Measurement {
        .rate(perOperation: Stopwatch.median(limitsBefore[mode, default: []] + limitsAfter[mode, default: []]), unit: "syncs/s")
    }
    let encodedRow = dataset.items.reduce(0) { $0 + $1.granaryRow.encodedByteCount }

    var table = ResultTable(machine: machine.summary)
    for workload in Workload.allCases {
        var cells = bestCells(results, workload: workload)
        switch workload {
        case .syncLimit:
            cells = [.granary: Cell(measurement: limit(.append))]
        case .syncLimitOverwrite:
            cells = [.granary: Cell(measurement: limit(.overwrite))]
        case .encodedRowSize:
            cells = [.granary: Cell(measurement: .bytesPerRow(Double(encodedRow) / Double(options.rows)))]
        default:
            break
        }
        if !workload.hasPeer {
            cells[.grdbFast] = .notApplicable
            cells[.grdbRecords] = .notApplicable
        }
        table.rows.append((workload, workload.title(options), cells))
    }
    table.footnotes = footnotes(
        options: options, sqliteVersion: try SQLiteSetup.libraryVersion(),
        rawBytes: runner.largeItems.reduce(0) { $0 + $1.payloadBytes },
        isGranaryReady: GranaryEngineSystem.system != nil)
    print(table.render(markdown: options.isMarkdown), terminator: "")
} catch BenchError.helpRequested {
    print(BenchOptions.usage)
} catch let error as BenchError {
    report("granary-bench: \(error)")
    if case .usage = error { exit(2) }
    exit(1)
} catch {
    report("granary-bench: \(error)")
    exit(1)
}
