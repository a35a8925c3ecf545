import Foundation

// granary-bench: Granary against GRDB (SQLite) on the same data, the same disk, in the same run.
// Progress goes to standard error; standard output holds only the table, so it can be pasted or diffed.

func report(_ message: String) {
    FileHandle.standardError.write(Data("\(message)\n".utf8))
}

/// The best measurement for each workload among the configurations of each column (queue or pool).
func bestCells<Key>(_ results: [SuiteResult<Key>], workload: Key) -> [SystemColumn: Cell] {
    var cells: [SystemColumn: Cell] = [:]
    for result in results {
        guard let measurement = result.measurements[workload] else { continue }
        let candidate = Cell(measurement: measurement, configuration: result.configuration)
        if let current = cells[result.column]?.measurement, current.isAtLeastAsGood(as: measurement) { continue }
        cells[result.column] = candidate
    }
    return cells
}

/// Every system must have returned the same rows, or the comparison is void.
/// - Throws: `BenchError.resultsDisagree` naming the workload and the systems' checksums.
func checkAgreement<Key>(_ results: [SuiteResult<Key>], workloads: [Key], title: (Key) -> String) throws {
    for workload in workloads {
        let sums = results.compactMap { result in
            result.checksums[workload].map { (system: "\(result.column.title) [\(result.configuration ?? "-")]", sum: $0) }
        }
        guard let first = sums.first, sums.contains(where: { $0.sum != first.sum }) else { continue }
        throw BenchError.resultsDisagree(
            workload: title(workload),
            detail: sums.map { "\($0.system): \($0.sum)" }.joined(separator: ", "))
    }
}

func footnotes(options: BenchOptions, sqliteVersion: String, rawBytes: Int) -> [String] {
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

func objectFootnotes(options: BenchOptions, dataset: ObjectDataset, sqliteVersion: String) -> [String] {
    let employees = Format.grouped(Double(dataset.employees.count))
    var notes: [String] = []
    if options.isQuick { notes.append("QUICK RUN: tiny sizes to check that the bench works; the figures mean nothing.") }
    notes += [
        "Ratios: the GRDB column's time ÷ Granary's (for rates, Granary's rate ÷ GRDB's; for memory, GRDB's bytes ÷ Granary's): above 1 means Granary is better. GRDB records is the like-for-like peer (both hand out whole objects); GRDB fastest is SQLite with the least Swift in the way.",
        "Granary: `Department` 1—* `Employee` (inverse `employees`, nullify both ways), `salary` indexed; a private-queue `ManagedObjectContext` used inside `performAndWait`, a `PersistentStoreCoordinator` with one durable store opened with durability .full; fetches are `FetchRequest` with `#Predicate` and `SortDescriptor`. Each timed call uses a new context, so nothing is cached between calls; O3 and O4 use one context per batch.",
        "SQLite \(sqliteVersion) in WAL mode with synchronous=FULL (checked), foreign keys on (GRDB's default), `employee(departmentId REFERENCES department)` with an index on departmentId and one on salary. GRDB records: Codable `FetchableRecord & PersistableRecord`, the query interface, `hasMany` for O5, `update(db)` and `delete(db)` per record, dates as text. GRDB fastest: hand-written SQL, cached statements, rows read by column index into the same structs, dates as REAL; O6 reads `id, salary` and O7 reads `id` only.",
        "O1, O2, O5 and O6 are the median of \(options.repetitions) runs (O1 into a new store each time; each O6 pass raises every salary by one); O7 runs once. O3 and O4: \(Format.grouped(Double(dataset.equalityQueries.count))) fetches each, timed in \(SuiteRunner.batches) batches after an untimed warm-up batch; the median batch's rate. O4's range covers \(dataset.rangeWidth) of the \(Format.grouped(Double(dataset.salaryLevels.count))) salary levels (~\(Format.grouped(Double(dataset.rangeWidth * dataset.employees.count / dataset.salaryLevels.count))) employees) and is answered from the salary index in reverse with no sort step by both systems (checked with `explain` and `EXPLAIN QUERY PLAN`).",
        "O6 and O7 load every object, change or delete each one and save once, row by row in the store; SQLite's set-based `UPDATE employee SET salary = salary + 1` or `DELETE FROM employee` would be faster, and are not what is compared. In Granary, deleting an employee also removes it from its department's `employees` (the inverse), so the departments are written too.",
        "O8: resident memory (/proc/self/statm) before and after fetching all \(employees) employees into a new context (Granary) or an array of records (GRDB), holding them, with `malloc_trim(0)` before each reading so that freed memory neither hides nor adds to the figure; after one untimed fetch, so that caches built on first use do not count. Granary's figure is the objects, their value arrays and the context's registry; the store's own in-memory table is resident before and after and is not counted (main table, row 12). GRDB's is the array of structs and their strings; SQLite's page cache is full before the first reading.",
    ]
    return notes
}

func stackFootnotes(options: BenchOptions) -> [String] {
    var notes: [String] = []
    if options.isQuick { notes.append("QUICK RUN: tiny sizes to check that the bench works; the figures mean nothing.") }
    notes += [
        "Each layout gets a new durable store (durability .full) holding \(Format.grouped(Double(options.stackSeed))) objects, then imports \(Format.grouped(Double(options.stackObjects))) more `ImportedItem(title, rank indexed, created)` on a background thread, \(Format.grouped(Double(options.stackChunk))) per import context, each context saving once: `importerContext()` for ImportingContainer, `newBackgroundContext()` for the strategies. Import time runs from the first chunk until the last is in the store and merged (`flush()`).",
        "Meanwhile the main thread plays the user interface: it runs the main queue (through the main run loop, which also runs the merges the stack queues there) and, every 16 ms, fetches the 20 visible objects in the main-queue view context (`rank >= 0`, sorted by rank, limit 20, answered from the rank index) and reads their titles.",
        "Fetch latency: from the frame the fetch was due in until it returned, so waiting for the main queue (a merge running there) or for a root context (nested, mixed) counts. A fetch that overruns skips the frames it covered, as a user interface does. Goal: no fetch over 16 ms during the import.",
    ]
    return notes
}

func migrationFootnotes(options: BenchOptions, result: MigrationBench.Result) -> [String] {
    var notes: [String] = []
    if options.isQuick { notes.append("QUICK RUN: tiny sizes to check that the bench works; the figures mean nothing.") }
    notes += [
        "A durable store of \(Format.grouped(Double(result.objects))) `Item(name, qty indexed, price, created)` objects written with version 1 and checkpointed, then added to a coordinator whose model is version 2: `name` renamed to `title` (renaming identifier) and `rating` added with a default. Each of \(options.repetitions) runs migrates a fresh copy; times are medians, memory the worst run.",
        "M1 is the whole `addPersistentStore` call: reading the snapshot, mapping every row, building the table and its index, writing the new LZ4 snapshot with fsync, renaming it into place and syncing the directory. M2 is the part between the migration's first and last progress report. M4 is the growth of peak resident memory (VmHWM, reset through /proc/self/clear_refs just before M1) over the resident memory before it.",
        "No peer: SQLite's `ALTER TABLE … RENAME COLUMN` and `ADD COLUMN … DEFAULT` rewrite only the schema record, not rows, so they are not the same work.",
    ]
    return notes
}

func scaleFootnotes(options: BenchOptions, table: ScaleTable) -> [String] {
    let small = Format.grouped(Double(table.small))
    let large = Format.grouped(Double(table.large))
    var notes: [String] = []
    if options.isQuick { notes.append("QUICK RUN: tiny sizes to check that the bench works; the figures mean nothing.") }
    notes += [
        "The object table's model, data and systems at \(small) and \(large) employees in \(table.departments) departments (so \(Format.grouped(Double(table.small / max(1, table.departments)))) and \(Format.grouped(Double(table.large / max(1, table.departments)))) members per department), each size in a new store filled once (O1, timed once). GRDB records with a `DatabaseQueue` and a `DatabasePool`, the faster shown. The other times are the median of \(options.repetitions) runs, each in a new context; each run of a row goes through both sizes in turn, so that other work on the machine weighs on both.",
        "Growth per object: the time per object at \(large) ÷ the time per object at \(small) (for O8, bytes per object ÷ bytes per object). 1.0× is exactly linear; up to \(Format.ratio(ScaleTable.linearLimit)) reads as linear, since more objects miss more of every cache.",
        "O5s: each department's `employees` sorted by name in Swift (`sorted { $0.name < $1.name }`), then each member's hiring date read in that order; in Granary the sort touches the members in an order unrelated to the set's. GRDB records: the department's employees by foreign key, sorted the same way.",
        "O9: Granary fetches every employee with `fetchBatchSize = \(ScaleWorkload.batchSize)` (faults, loaded a batch at a time as they are touched) and reads each one's salary in a fixed random order covering every position once. O10: the same through a `FetchedResultsController` sorted by salary with the same batch size (`performFetch()`, then `object(at:)`). GRDB has no batched fetch: its peer fetches every record (ordered by id, or by salary) and reads them in the same order.",
        "O11: Granary reads `employee.department?.name` for every employee of a fetch; the departments are not held by anything else, as in a list that shows each employee's department. GRDB records: the departments fetched once into a dictionary by id, then every employee and its department's name from the dictionary.",
    ]
    if let batched = table.cells[.batchedRandom]?.large[.granary]?.measurement, let whole = table.cells[.fetchAll]?.large[.granary]?.measurement,
        let factor = whole.advantage(over: batched)
    {
        notes.append("O9 at \(large) took \(Format.ratio(factor)) the time of Granary's O2 (fetching every employee loaded, reading each salary) at the same size.")
    }
    return notes
}

do {
    let options = try BenchOptions.parse(Array(CommandLine.arguments.dropFirst()))
    let scratch = try ScratchDirectory(parent: options.parentDirectory)
    let machine = MachineInfo.current(scratch: scratch.url.path)
    report("granary-bench: \(machine.summary)\nscratch: \(scratch.url.path)")
    let sqliteVersion = try SQLiteSetup.libraryVersion()
    var tables: [ResultTable] = []

    if options.tables.contains(.main) {
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
        try checkAgreement(results, workloads: Workload.allCases) { $0.title(options) }
        let limitsAfter = try measureLimits()
        func limit(_ mode: SyncLimit.Mode) -> Measurement {
            .rate(perOperation: Stopwatch.median(limitsBefore[mode, default: []] + limitsAfter[mode, default: []]), unit: "syncs/s")
        }
        let encodedRow = dataset.items.reduce(0) { $0 + $1.granaryRow.encodedByteCount }

        var table = ResultTable(heading: machine.summary)
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
            table.rows.append(ResultRow(title: workload.title(options), cells: cells, hasPeer: workload.hasPeer))
        }
        table.footnotes = footnotes(options: options, sqliteVersion: sqliteVersion,
                                    rawBytes: runner.largeItems.reduce(0) { $0 + $1.payloadBytes })
        tables.append(table)
    }

    if options.tables.contains(.objects) {
        report("generating \(options.objects) employees")
        let dataset = ObjectDataset(employees: options.objects, queries: options.objectQueries, seed: 0x0B7EC7)
        let runner = ObjectSuiteRunner(options: options, dataset: dataset, scratch: scratch, progress: report)
        if options.isGranaryOnly {
            let result = try runner.run(try GranaryObjectStore.system())
            for workload in ObjectWorkload.allCases {
                print("\(workload.title(options, departments: dataset.departments.count)): \(result.measurements[workload].map { "\($0)" } ?? "—")")
            }
            exit(0)
        }
        let systems = [try GranaryObjectStore.system()]
            + SQLiteSetup.ConnectionKind.allCases.flatMap { kind in
                [GRDBObjectsFastStore.system(kind, cacheMiB: options.sqliteCacheMiB),
                 GRDBObjectRecordsStore.system(kind, cacheMiB: options.sqliteCacheMiB)]
            }
        let results = try systems.map { try runner.run($0) }
        let departments = dataset.departments.count
        try checkAgreement(results, workloads: ObjectWorkload.allCases) { $0.title(options, departments: departments) }

        let heading = options.isMarkdown ? "### Object level: managed objects against GRDB records" : "Object level: managed objects against GRDB records"
        var table = ResultTable(heading: tables.isEmpty ? "\(machine.summary)\n\n\(heading)" : heading,
                                ratios: [RatioColumn(peer: .grdbRecords), RatioColumn(peer: .grdbFast)])
        for workload in ObjectWorkload.allCases {
            var cells = bestCells(results, workload: workload)
            if workload == .memoryPerObject { cells[.grdbFast] = .notApplicable }
            table.rows.append(ResultRow(title: workload.title(options, departments: departments), cells: cells))
        }
        table.footnotes = objectFootnotes(options: options, dataset: dataset, sqliteVersion: sqliteVersion)
        tables.append(table)
    }
    var rendered = tables.map { $0.render(markdown: options.isMarkdown) }

    if options.tables.contains(.stacks) {
        let model = try StackImport.makeModel()
        let runner = StackSuiteRunner(options: options, scratch: scratch, progress: report)
        let results = try StackLayout.allCases.map { try runner.run($0, model: model) }
        let heading = options.isMarkdown ? "### Stacks: importing while the main context fetches" : "Stacks: importing while the main context fetches"
        let table = StackTable(heading: rendered.isEmpty ? "\(machine.summary)\n\n\(heading)" : heading, results: results,
                               footnotes: stackFootnotes(options: options))
        rendered.append(table.render(markdown: options.isMarkdown))
    }
    if options.tables.contains(.migration) {
        let result = try MigrationBench(options: options, scratch: scratch, progress: report).run()
        let heading = options.isMarkdown ? "### Migration: a large store across one lightweight change" : "Migration: a large store across one lightweight change"
        let table = MigrationTable(heading: rendered.isEmpty ? "\(machine.summary)\n\n\(heading)" : heading, result: result,
                                   footnotes: migrationFootnotes(options: options, result: result))
        rendered.append(table.render(markdown: options.isMarkdown))
    }
    if options.tables.contains(.upsert) {
        let result = try BatchUpsertBench(options: options, scratch: scratch, progress: report).run()
        if options.isGranaryOnly {
            print("U1. Granary: \(Measurement.time(result.times[0].time).text)")
            exit(0)
        }
        let heading = options.isMarkdown ? "### Upsert: batch insert into a constrained entity" : "Upsert: batch insert into a constrained entity"
        let table = BatchUpsertBench.table(heading: rendered.isEmpty ? "\(machine.summary)\n\n\(heading)" : heading, result: result, options: options)
        rendered.append(table.render(markdown: options.isMarkdown))
    }
    if options.tables.contains(.records) {
        let imports = try RecordsImportBench(options: options, scratch: scratch, progress: report).run()
        let observation = try RecordsObservationBench(options: options, scratch: scratch, progress: report).run()
        let heading = options.isMarkdown ? "### Records: JSON import by unique ID, observed results" : "Records: JSON import by unique ID, observed results"
        if options.isGranaryOnly {
            for time in imports.times { print("\(time.step.title): \(Measurement.time(time.time).text)") }
            let spans = observation.spans[0].spans
            print("R1 median: \(Measurement.time(Stopwatch.median(spans.fromStart)).text), worst: \(Measurement.time(spans.fromStart.max() ?? .zero).text)")
            exit(0)
        }
        let table = RecordsTable.render(heading: rendered.isEmpty ? "\(machine.summary)\n\n\(heading)" : heading,
                                        imports: imports, observation: observation, options: options)
        rendered.append(table.render(markdown: options.isMarkdown))
    }
    if options.tables.contains(.sync) {
        let result = try SyncBench(options: options, scratch: scratch, progress: report).runBlocking()
        let heading = options.isMarkdown ? "### Sync: two stores through a shared folder" : "Sync: two stores through a shared folder"
        let table = SyncTable.render(heading: rendered.isEmpty ? "\(machine.summary)\n\n\(heading)" : heading, result: result, options: options)
        rendered.append(table.render(markdown: options.isMarkdown))
    }
    if options.tables.contains(.connect) {
        let result = try ConnectBench(options: options, scratch: scratch, progress: report).runBlocking()
        let heading = options.isMarkdown ? "### Connect: actions and feed merges" : "Connect: actions and feed merges"
        let table = ConnectTable.render(heading: rendered.isEmpty ? "\(machine.summary)\n\n\(heading)" : heading, result: result, options: options)
        rendered.append(table.render(markdown: options.isMarkdown))
    }
    if options.tables.contains(.aggregate) {
        let result = try AggregateBench(options: options, scratch: scratch, progress: report).run()
        let heading = options.isMarkdown ? "### Aggregates: sums, groups and distinct values in the store" : "Aggregates: sums, groups and distinct values in the store"
        let table = AggregateTable.render(heading: rendered.isEmpty ? "\(machine.summary)\n\n\(heading)" : heading, result: result, options: options)
        rendered.append(table.render(markdown: options.isMarkdown))
    }
    if options.tables.contains(.scale) {
        let runner = ScaleSuiteRunner(options: options, scratch: scratch, progress: report)
        // --granary-only: profiling runs, Granary's column alone (the table shows n/a for the peer).
        let systems = [try GranaryObjectStore.system()]
            + (options.isGranaryOnly ? [] : SQLiteSetup.ConnectionKind.allCases.map { GRDBObjectRecordsStore.system($0, cacheMiB: options.sqliteCacheMiB) })
        report("scale: generating \(options.objects) and \(options.scaleObjects) employees")
        let sizes = [options.objects, options.scaleObjects].map { ScaleSuiteRunner.Size(employees: $0) }
        let departments = sizes[0].dataset.departments.count
        let results = try systems.map { try runner.run($0, sizes: sizes) }
        var cellsBySize: [[ScaleWorkload: [SystemColumn: Cell]]] = []
        for (k, size) in sizes.enumerated() {
            let atSize = results.map { $0[k] }
            try checkAgreement(atSize, workloads: ScaleWorkload.allCases) { "\($0.title(departments: departments)) at \(size.dataset.employees.count)" }
            cellsBySize.append(Dictionary(uniqueKeysWithValues: ScaleWorkload.allCases.map { ($0, bestCells(atSize, workload: $0)) }))
        }
        let heading = options.isMarkdown ? "### Scale: object-level rows at two sizes" : "Scale: object-level rows at two sizes"
        var table = ScaleTable(heading: rendered.isEmpty ? "\(machine.summary)\n\n\(heading)" : heading,
                               small: options.objects, large: options.scaleObjects,
                               cells: Dictionary(uniqueKeysWithValues: ScaleWorkload.allCases.map { ($0, (cellsBySize[0][$0] ?? [:], cellsBySize[1][$0] ?? [:])) }),
                               departments: departments)
        table.footnotes = scaleFootnotes(options: options, table: table)
        rendered.append(table.render(markdown: options.isMarkdown))
    }
    print(rendered.joined(separator: "\n"), terminator: "")
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
