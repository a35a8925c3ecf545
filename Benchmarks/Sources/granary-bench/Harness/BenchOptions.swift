import Foundation

/// What the command line asked for: sizes, output format and where the stores live.
///
/// Parsed by hand rather than with swift-argument-parser so that the bench builds nothing it does not
/// measure; the flags are few and flat.
struct BenchOptions {
    /// Rows in the main table (workloads 1–6 and 12).
    var rows = 100_000
    /// Rows in the store that is reopened and measured on disk (workloads 9 and 10), and in the
    /// aggregate table.
    var largeRows = 1_000_000
    /// Point lookups in workload 2.
    var lookups = 100_000
    /// Queries in workloads 3 and 4.
    var queries = 5_000
    /// Single-insert durable transactions in workloads 7 and 8 (and fdatasync calls in workload 11).
    var durableTransactions = 2_000
    /// Employees in the object-level table (spread over up to 100 departments), and the smaller size of
    /// the scale table.
    var objects = 100_000
    /// Employees at the larger size of the scale table.
    var scaleObjects = 1_000_000
    /// Fetches in object workloads O3 and O4.
    var objectQueries = 2_000
    /// Objects imported per layout in the stacks table.
    var stackObjects = 200_000
    /// Objects per import context (one save each) in the stacks table.
    var stackChunk = 2_000
    /// Objects in the store before the stacks table's import starts, so the visible list is full.
    var stackSeed = 1_000
    /// Which tables to run: the main and object tables unless `--only` names one (the stacks table runs
    /// only when asked for: it measures latency, not a comparison, and takes minutes of its own).
    var tables: Set<BenchTable> = [.main, .objects]
    /// Timed repetitions of the whole-table workloads (bulk insert, update, reopen); the median is reported.
    var repetitions = 3
    var reopenRepetitions = 5
    var isQuick = false
    var isMarkdown = false
    /// Profiling runs: the object table's Granary column alone, its figures printed without ratios.
    var isGranaryOnly = false
    /// SQLite's page cache per connection, or `nil` for SQLite's default of 2 MiB.
    var sqliteCacheMiB: Int?
    /// The folder in which a fresh scratch folder is made; it must be on the disk being measured.
    var parentDirectory = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"

    static let usage = """
        usage: granary-bench [--rows N] [--large-rows N] [--objects N] [--only main|objects|stacks|migration|scale|upsert|records|sync|connect|aggregate] [--quick] [--markdown]
                             [--granary-only] [--dir PATH] [--sqlite-cache-mb N] [--stack-objects N] [--stack-chunk N]
                             [--scale-objects N]

          --rows N        rows in the main table (default 100000)
          --large-rows N  rows in the store measured for reopen time and size, objects in the
                          migration table's store, and rows of the aggregate table (default 1000000)
          --objects N     employees in the object-level table, and the smaller size of the scale table
                          (default 100000)
          --only TABLE    run one table: main (the engine against SQLite), objects (the object level), or
                          stacks (importing while the main context fetches; only run when asked for), or
                          migration (a large store across one model change; only run when asked for), or
                          scale (object-level rows at --objects and --scale-objects employees; only run
                          when asked for), or upsert (a batch insert of --objects objects into a constrained
                          entity, half existing, against GRDB's upsert; only run when asked for), or
                          records (JSON imports of --objects objects by unique ID, and observed results
                          hearing background saves, against GRDB; only run when asked for), or sync (two
                          stores syncing through a folder, S1–S3, no peer; only run when asked for), or
                          connect (action overhead against a task group, A1, and feed merges, A2; only run
                          when asked for), or aggregate (sums, a grouped count with HAVING, DISTINCT over
                          --large-rows rows, against the same SQL through GRDB; only run when asked for)
          --quick         a smoke run on small sizes (seconds, not minutes); numbers are meaningless
          --markdown      print the table as Markdown, for Benchmarks/README.md
          --granary-only  object, scale and upsert tables: run Granary's column alone (for profiling; no
                          peers, so no ratios)
          --dir PATH      where the scratch folder is made (default $TMPDIR or /tmp)
          --sqlite-cache-mb N
                          SQLite page cache per connection in MiB (default: SQLite's own, 2 MiB)
          --stack-objects N  objects imported per layout in the stacks table (default 200000)
          --stack-chunk N    objects per import context and save in the stacks table (default 2000)
          --scale-objects N  employees at the larger size of the scale table (default 1000000)
        """

    /// Parses `arguments` (without the program name).
    /// - Throws: `BenchError.usage` for an unknown flag or a missing or malformed value.
    static func parse(_ arguments: [String]) throws -> BenchOptions {
        var options = BenchOptions()
        var explicitRows: Int?
        var explicitLargeRows: Int?
        var explicitObjects: Int?
        var explicitStackObjects: Int?
        var explicitStackChunk: Int?
        var explicitScaleObjects: Int?
        var iterator = arguments.makeIterator()
        func count(after flag: String) throws -> Int {
            guard let text = iterator.next(), let n = Int(text.replacingOccurrences(of: "_", with: "")), n > 0 else {
                throw BenchError.usage("\(flag) needs a positive whole number")
            }
            return n
        }
        while let argument = iterator.next() {
            switch argument {
            case "--rows": explicitRows = try count(after: argument)
            case "--large-rows": explicitLargeRows = try count(after: argument)
            case "--objects": explicitObjects = try count(after: argument)
            case "--only":
                guard let name = iterator.next(), let table = BenchTable(rawValue: name) else {
                    throw BenchError.usage("--only needs one of: \(BenchTable.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                options.tables = [table]
            case "--quick": options.isQuick = true
            case "--markdown": options.isMarkdown = true
            case "--granary-only": options.isGranaryOnly = true
            case "--dir":
                guard let path = iterator.next() else { throw BenchError.usage("--dir needs a path") }
                options.parentDirectory = path
            case "--sqlite-cache-mb": options.sqliteCacheMiB = try count(after: argument)
            case "--stack-objects": explicitStackObjects = try count(after: argument)
            case "--stack-chunk": explicitStackChunk = try count(after: argument)
            case "--scale-objects": explicitScaleObjects = try count(after: argument)
            case "--help", "-h": throw BenchError.helpRequested
            default: throw BenchError.usage("unknown argument \(argument)")
            }
        }
        if options.isQuick {
            options.rows = 1_000
            options.largeRows = 2_000
            options.lookups = 1_000
            options.queries = 100
            options.durableTransactions = 20
            options.objects = 1_000
            options.scaleObjects = 2_000
            options.objectQueries = 50
            options.stackObjects = 2_000
            options.stackChunk = 200
            options.stackSeed = 100
            options.repetitions = 1
            options.reopenRepetitions = 1
        }
        if let explicitRows { options.rows = explicitRows }
        if let explicitLargeRows { options.largeRows = explicitLargeRows }
        if let explicitObjects { options.objects = explicitObjects }
        if let explicitStackObjects { options.stackObjects = explicitStackObjects }
        if let explicitStackChunk { options.stackChunk = explicitStackChunk }
        if let explicitScaleObjects { options.scaleObjects = explicitScaleObjects }
        return options
    }
}

/// The tables the bench can print.
enum BenchTable: String, CaseIterable, Sendable {
    /// The engine (`GranaryStorage`) against SQLite through GRDB, row by row.
    case main
    /// Managed objects (`Granary`) against GRDB records.
    case objects
    /// Ready-made stacks (`GranaryStack`): importing in the background while the main context fetches.
    case stacks
    /// Schema migration of a large store (`--large-rows` objects) across one lightweight change.
    case migration
    /// Object-level workloads at two sizes (`--objects`, `--scale-objects`), to show how their cost grows.
    case scale
    /// A batch insert of `--objects` objects into a constrained entity, half existing, against GRDB's upsert.
    case upsert
    /// GranaryRecords: JSON imports of `--objects` objects by unique ID (J1–J3) and a `Results` hearing of
    /// background saves (R1), against GRDB's `JSONDecoder` + upsert and `ValueObservation`.
    case records
    /// GranarySync: two stores syncing through a folder (S1–S3); no peer.
    case sync
    /// GranaryConnect: per-action overhead against a task group (A1), feed merges (A2).
    case connect
    /// Aggregate and grouped fetches over `--large-rows` rows (G1–G5) against the same SQL through GRDB.
    case aggregate
}

/// Why the bench stopped before printing its table.
enum BenchError: Error, CustomStringConvertible {
    case usage(String)
    case helpRequested
    /// Two systems returned different results for the same workload, so their timings are not comparable.
    case resultsDisagree(workload: String, detail: String)
    case system(operation: String, path: String, errno: Int32)
    /// A peer did not accept the configuration the comparison needs (WAL, synchronous=FULL).
    case misconfigured(String)

    var description: String {
        switch self {
        case .usage(let message): return "\(message)\n\(BenchOptions.usage)"
        case .helpRequested: return BenchOptions.usage
        case .resultsDisagree(let workload, let detail): return "results disagree in \(workload): \(detail)"
        case .system(let operation, let path, let code):
            return "\(operation) failed on \(path): \(String(cString: strerror(code))) (errno \(code))"
        case .misconfigured(let message): return message
        }
    }
}
