import Foundation

/// The sync table: S1–S3 for Granary alone (nothing syncs Core Data stores on Linux to compare with).
enum SyncTable {
    static func render(heading: String, result r: SyncBench.Result, options: BenchOptions) -> PlainTable {
        func ms(_ duration: Duration) -> String { Measurement.time(duration).text }
        func perProperty(_ side: SyncBench.Side) -> String {
            Format.decimal(Double(side.bytes) / Double(max(1, side.properties)), digits: 1)
        }
        let rows: [[String]] = [
            ["S1. \(Format.grouped(Double(r.inserted))) new items on A: merge on A (capture + export)", ms(r.s1.export), "2 s"],
            ["S1. then merge on B (download + integrate + save)", ms(r.s1.import), "2 s"],
            ["S1. cloud bytes (per changed property)", "\(Format.grouped(Double(r.s1.bytes))) B (\(perProperty(r.s1)) B)", "—"],
            ["S2. \(r.changed) changed items in a store of \(Format.grouped(Double(r.storeSize))): merge on A", ms(r.s2.export), "50 ms"],
            ["S2. then merge on B", ms(r.s2.import), "50 ms"],
            ["S2. cloud bytes (per changed property)", "\(Format.grouped(Double(r.s2.bytes))) B (\(perProperty(r.s2)) B)", "—"],
            ["S3. merge with nothing changed (median of \(r.idleMerges))", ms(r.s3), "5 ms"],
        ]
        var notes: [String] = []
        if options.isQuick { notes.append("QUICK RUN: tiny sizes to check that the bench works; the figures mean nothing.") }
        notes += [
            "Two devices in one process, each a durable store (durability `.full`) with persistent history and a `PersistentStoreEnsemble` (global identifiers from the `uuid` attribute), syncing through a `LocalDirectoryFileSystem` in the scratch folder. Items have five attributes (uuid, name, count, date, a 40-character note) and a to-one folder (one of \(SyncModel.folders)). Each row is one timed `merge()`; S1's items are inserted in one save before A's merge, S2's store is filled and synced untimed, then A changes one attribute of \(r.changed) items in one save.",
            "Cloud bytes: the growth of the shared folder's files during the step; per changed property: that ÷ the properties sent (6 per inserted item, 1 per S2 change). Resident memory after S1: \(Format.grouped(Double(r.residentAfterS1 / 1_048_576))) MiB for the whole process (both devices). A's event store after S3: \(Format.grouped(Double(r.eventStoreBytes / 1024))) KiB.",
            "No peer: nothing syncs Core Data stores on Linux. Ensembles 3's performance tests (`PerformanceBenchmarkTests.swift`) time an attach, 2,000 objects then a sync, an incremental sync and a rebase, on Apple platforms, with no published figures.",
        ]
        return PlainTable(heading: heading, header: ["workload", "Granary", "target"], rows: rows, footnotes: notes)
    }
}
