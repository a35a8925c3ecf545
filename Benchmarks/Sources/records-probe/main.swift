import Foundation
import Granary
import GranaryRecords
import RecordsFeed

// J3 of the records bench, small and alone, for callgrind: `records-probe [objects]` makes a store with
// 1,000 parents and `objects` items (untimed), then imports and saves, on one background context, an
// array whose first half exists with changed values and whose second half is new. Profile only that
// step with `valgrind --tool=callgrind --toggle-collect='*measuredStep*' records-probe 20000`.

let parents = FeedModel.parents
let model = FeedModel.model

/// The records bench's items (same values, same JSON shape).
func json(_ ids: Range<Int>, edition: Int) throws -> Data {
    let formatter = ISO8601DateFormatter()
    let array: [[String: Any]] = ids.map { id in
        ["id": Int64(id), "name": "item \(id) v\(edition)", "score": Double(id % 1_000) / 8 + Double(edition),
         "quantity": Int32((id &* 7 &+ edition) % 500), "active": (id + edition) % 3 == 0,
         "created": formatter.string(from: Date(timeIntervalSince1970: 1_700_000_000 + Double(id) * 37 + Double(edition) * 86_400)),
         "parent": Int64((id &* 31 &+ edition) % parents)]
    }
    return try JSONSerialization.data(withJSONObject: array)
}


/// The step callgrind profiles (`--toggle-collect='*measuredStep*'`), named apart so that the setup's
/// imports, which share the library's functions, are not collected.
@inline(never) func measuredStep(_ data: Data, _ context: ManagedObjectContext) throws -> Int {
    try FeedItem.parseAndSave(jsonData: data, in: context).count
}

let n = CommandLine.arguments.dropFirst().first.flatMap { Int($0) } ?? 20_000
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("records-probe-\(ProcessInfo.processInfo.processIdentifier)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
let manager = try StoreManager(name: "Feed", model: model, location: .directory(folder))
let setup = manager.newBackgroundContext()
let parentsJSON = try JSONSerialization.data(withJSONObject: (0..<parents).map { ["id": $0, "name": "parent \($0)"] as [String: Any] })
try setup.performAndWait {
    try FeedParent.parse(jsonData: parentsJSON, in: setup)
    try setup.save()
    try FeedItem.parse(jsonData: json(0..<n, edition: 0), in: setup)
    try setup.save()
}
let data = try json(n / 2..<(n / 2 + n), edition: 1)
var context: ManagedObjectContext! = manager.newBackgroundContext()
/// `perf record -D -1 --control fifo:ctl,ack` profiles only the measured step when `PERF_CTL` names that
/// control FIFO: the probe enables the profiler before the step and disables it after.
func perfControl(_ command: String) {
    guard let fifo = ProcessInfo.processInfo.environment["PERF_CTL"],
          let handle = FileHandle(forWritingAtPath: fifo) else { return }
    handle.write(Data((command + "\n").utf8))
    try? handle.close()
}
let clock = ContinuousClock()
perfControl("enable")
let start = clock.now
let count: Int
if CommandLine.arguments.dropFirst(2).first == "phases" {
    // The import and the save timed apart (not through `parseAndSave`, so not for callgrind's toggle).
    count = try context.performAndWait {
        let objects = try FeedItem.parse(jsonData: data, in: context)
        let parsed = clock.now
        try context.save()
        print("parse \(parsed - start), save \(clock.now - parsed)")
        return objects.count
    }
} else {
    count = try context.performAndWait { try measuredStep(data, context) }
}
let elapsed = clock.now - start
perfControl("disable")
let releaseStart = clock.now
context = nil
print("context released in \(clock.now - releaseStart)")
precondition(count == n)
let check = manager.newBackgroundContext()
let (items, sum) = try check.performAndWait {
    let all = try check.fetch(FeedItem.fetchRequest())
    return (all.count, all.reduce(0) { $0 + Int($1.quantity) + Int($1.parent?.serverID ?? -1_000_000) })
}
print("J3 probe: \(n) objects in \(elapsed); store holds \(items) items, checksum \(sum)")
