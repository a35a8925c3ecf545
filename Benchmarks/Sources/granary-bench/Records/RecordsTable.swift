import Foundation

/// The records table: J1–J3 and R1, Granary against GRDB records, from one run.
enum RecordsTable {
    static func render(heading: String, imports: RecordsImportBench.Result?, observation: RecordsObservationBench.Result?,
                       options: BenchOptions) -> PlainTable {
        var rows: [[String]] = []
        if let imports {
            for step in RecordsImportBench.Step.allCases {
                let granary = imports.times.first { $0.column == .granary && $0.step == step }!.time
                let peer = imports.times.filter { $0.column == .grdbRecords && $0.step == step }.min { $0.time < $1.time }
                func cell(_ time: Duration, _ configuration: String?) -> String {
                    let rate = Measurement.rate(count: imports.objects, in: time, unit: "objects/s").text
                    return "\(Measurement.time(time).text) (\(rate))" + (configuration.map { " [\($0)]" } ?? "")
                }
                rows.append([step.title, cell(granary, nil), peer.map { cell($0.time, $0.configuration) } ?? "—",
                             peer.map { Format.ratio($0.time.seconds / granary.seconds) } ?? "—"])
            }
            rows.append(["K1. fetch one item by ID: key path (Granary column) against #Predicate (peer column)",
                         "\(Format.decimal(imports.keyPathFetch.seconds * 1e6, digits: 1)) µs", "\(Format.decimal(imports.macroFetch.seconds * 1e6, digits: 1)) µs [#Predicate]",
                         Format.ratio(imports.macroFetch.seconds / imports.keyPathFetch.seconds)])
        }
        if let observation {
            func percentile(_ spans: [Duration], _ p: Double) -> Duration {
                let sorted = spans.sorted()
                return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
            }
            let granary = observation.spans.first { $0.column == .granary }!.spans
            let peers = observation.spans.filter { $0.column == .grdbRecords }
            let lines: [(String, KeyPath<RecordsObservationBench.Spans, [Duration]>, Double)] = [
                ("R1. save start → change closure, median", \.fromStart, 0.5),
                ("R1. save start → change closure, worst", \.fromStart, 1.0),
            ]
            for (title, path, p) in lines {
                let mine = percentile(granary[keyPath: path], p)
                let peer = peers.map { (time: percentile($0.spans[keyPath: path], p), configuration: $0.configuration) }.min { $0.time < $1.time }
                rows.append([title, Measurement.time(mine).text,
                             peer.map { Measurement.time($0.time).text + ($0.configuration.map { " [\($0)]" } ?? "") } ?? "—",
                             peer.map { Format.ratio($0.time.seconds / mine.seconds) } ?? "—"])
            }
        }
        var notes: [String] = []
        if options.isQuick { notes.append("QUICK RUN: tiny sizes to check that the bench works; the figures mean nothing.") }
        if let imports {
            notes += [
                "J1–J3: \(Format.grouped(Double(imports.objects))) JSON objects (\(Format.decimal(Double(imports.jsonBytes) / 1_000_000, digits: 1)) MB) of `{id, name, score, quantity, active, created (ISO 8601 text), parent (the ID of one of \(RecordsModel.parents) parents)}`, parsed from `Data` in one call. Each of \(options.repetitions) runs makes a new store holding the parents, then imports J1 into it empty, J2 the same array again (every ID exists, every object updated in place), J3 \(Format.grouped(Double(imports.objects))) objects of which the first half exist, all with changed values. Median of the runs; both systems must end holding the same items and links (checked).",
                "Granary: `FeedItem.parse(jsonData:in: manager)` (a `Parsable` class with `<-` mappings, `parent` linked by ID to an existing `FeedParent` with an inverse to-many `items`) on a `StoreManager`'s serial writer, durable store with durability `.full`, one save; the time runs until the call returns, after the main context has merged the save. GRDB records: `JSONDecoder` (`.iso8601` dates) into Codable records, then `record.upsert(db)` for each in one write transaction; SQLite in WAL mode with synchronous=FULL, foreign keys on, an index on `feedItem(parent)`, the faster of `DatabaseQueue` and `DatabasePool` shown.",
            ]
        }
        if let imports {
            notes.append("K1: \(Format.grouped(Double(imports.fetches))) fetches by ID on the J store after J3, in 11 alternating batches of each form on one background context (the first batch uncounted); the median batch's time per fetch. Key path: `FetchRequest<FeedItem>(\\FeedItem.serverID == id, in: context)`; `#Predicate`: `FetchRequest(predicate: #Predicate<FeedItem> { $0.serverID == id })`; both answered from the unique index on `serverID`, and both must return the same items (checked). A ratio of 1.0× means the key path costs the same.")
        }
        if let observation {
            notes += [
                "R1: \(Format.grouped(Double(observation.observed))) items shown sorted by ID, on the main queue: Granary `Results<FeedItem>` on the manager's main context, change closure from `registerForChanges`; GRDB `ValueObservation.tracking { Item.order(id).fetchAll }` scheduled `.async(onQueue: .main)`. A background thread makes \(Format.grouped(Double(observation.saves))) saves of one changed score each (Granary: a background context of the manager's stack; GRDB: an `UPDATE` in a write transaction), waiting for the main queue to hear of each. Each span runs from the start of the save (durable commit included) to the change closure: the main queue may hear of a save before the saving thread returns from it, so a span from the save's return would say nothing. The main thread serves its run loop throughout.",
            ]
        }
        notes.append("Ratio: GRDB records' time ÷ Granary's; above 1 means Granary is faster.")
        return PlainTable(heading: heading, header: ["workload", "Granary", "GRDB records", "ratio"], rows: rows, footnotes: notes)
    }
}
