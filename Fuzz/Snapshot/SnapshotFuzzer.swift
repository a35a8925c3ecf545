import Foundation
import FuzzSupport
@_spi(Fuzzing) import GranaryStorage

/// Fuzzes the snapshot reader (framing, CRC32C, LZ4 blocks, records) and the state it loads, as opening a
/// store runs them.
///
/// Input: one mode byte, then the file. An odd mode byte has the header, block and footer checksums and
/// the footer's counts repaired first, so that mutations reach LZ4 and the records. Bit 1 of the mode
/// asks for the indexes to be rebuilt from the rows instead of loaded.
/// Property: any file loads or throws, never traps; a file that loads, written out again as a checkpoint
/// would write it, loads as the same tables and rows.
@main enum SnapshotFuzzer {
    static let scratch = FuzzDriver.scratchDirectory("fuzz-snapshot").path

    static func main() { FuzzDriver.run("fuzz-snapshot", test) }

    static func test(_ input: [UInt8]) {
        guard let mode = input.first else { return }
        var bytes = Array(input.dropFirst())
        if mode & 1 == 1 { StorageFuzzing.repairSnapshotChecksums(&bytes) }
        let rebuildIndexes = mode & 2 == 2
        guard let loaded = try? StorageFuzzing.loadSnapshot(bytes, rebuildIndexes: rebuildIndexes) else { return }
        let rewritten: [UInt8]
        do { rewritten = try StorageFuzzing.rewriteSnapshot(bytes, rebuildIndexes: rebuildIndexes, at: scratch + "/rewritten.snap") } catch {
            FuzzDriver.fail("a snapshot that loads cannot be written again: \(error)", input)
        }
        let again: StorageFuzzing.SnapshotSummary
        do { again = try StorageFuzzing.loadSnapshot(rewritten) } catch {
            FuzzDriver.fail("a rewritten snapshot does not load: \(error)", input)
        }
        guard again.lsn == loaded.lsn, again.tables == loaded.tables else {
            FuzzDriver.fail("a rewritten snapshot loads as other tables", input)
        }
    }
}
