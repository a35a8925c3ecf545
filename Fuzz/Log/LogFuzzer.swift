import FuzzSupport
@_spi(Fuzzing) import GranaryStorage

/// Fuzzes the log frame reader and the replay of what it reads, as recovery runs them on every open.
///
/// Input: one mode byte, then the segment. An odd mode byte has the header and frame checksums repaired
/// first, so that mutations reach the frame checks and the payloads behind the CRC32C.
/// Property: any segment scans or throws, never traps; the frames it accepts, written out again as the
/// log writer lays them out, are byte for byte the part of the file the scan called valid; replaying
/// their payloads on an empty store applies or throws, never traps.
@main enum LogFuzzer {
    static func main() { FuzzDriver.run("fuzz-log", test) }

    static func test(_ input: [UInt8]) {
        guard let mode = input.first else { return }
        var bytes = Array(input.dropFirst())
        if mode & 1 == 1 { StorageFuzzing.repairLogChecksums(&bytes) }
        guard let segment = try? StorageFuzzing.scanLog(bytes) else { return }
        guard segment.validEnd <= bytes.count else { FuzzDriver.fail("the valid end lies past the file", input) }
        if segment.validEnd > 0 {
            let rebuilt = StorageFuzzing.logSegment(baseLSN: segment.baseLSN, version: segment.version,
                                                    payloads: segment.frames.map(\.payload), syncedLSNs: segment.syncedLSNs)
            guard rebuilt == Array(bytes[..<segment.validEnd]) else {
                FuzzDriver.fail("the accepted frames written out again differ from the file (stop: \(segment.stop))", input)
            }
        } else if !segment.frames.isEmpty {
            FuzzDriver.fail("frames were accepted from a segment whose valid end is 0", input)
        }
        _ = try? StorageFuzzing.replay(segment.frames.map(\.payload))
    }
}
