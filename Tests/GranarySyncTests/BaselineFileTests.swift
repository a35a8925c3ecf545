import Foundation
import Testing
@testable import GranarySync

/// The cloud form of a baseline: parts within the payload limit, every part checked, and anything
/// damaged, truncated, missing or mixed refused with an error naming the file.
@Suite struct BaselineFileTests {
    /// `baseline` written in parts of at most `maximumPayload` bytes to a scratch directory and read back.
    static func roundTrip(_ baseline: Baseline, maximumPayload: Int) throws -> (baseline: Baseline, parts: [(name: CloudFileName, bytes: Data)]) {
        let directory = try makeScratchDirectory()
        defer { removeScratch(directory) }
        let parts = try write(baseline, to: directory, maximumPayload: maximumPayload)
        return (try BaselineFile.decode(parts: parts.shuffled()), parts)
    }

    static func write(_ baseline: Baseline, to directory: URL, maximumPayload: Int) throws -> [(name: CloudFileName, bytes: Data)] {
        var writer = BaselineWriter(summary: baseline.summary, directory: directory, maximumPayload: maximumPayload)
        for object in baseline.ledger.objects.values.sorted(by: { $0.key < $1.key }) { try writer.append(object) }
        return try writer.finish().map { ($0.name, try Data(contentsOf: $0.url)) }
    }

    /// A baseline of a few dozen objects, from real events.
    static func sampleBaseline() -> Baseline {
        var device = LedgerTestDevice(store: orderedStores[0])
        var events: [Event] = []
        for index in 0..<40 {
            events.append(device.record([.insert(ObjectKey("Book", "b\(index)"), ["title": .string(String(repeating: "t", count: 50 + index))],
                                                 adds: ["tags": [.member(ObjectKey("Tag", "t\(index % 3)"))]])]))
        }
        events.append(device.record([.delete(ObjectKey("Book", "b3")), .update(ObjectKey("Book", "b4"), ["year": .integer(1961)])]))
        return Baseline(writer: orderedStores[0], globalCount: device.highestCount, vector: device.known, ledger: integrated(events).ledger)
    }

    @Test func aBaselineRoundTripsInOnePartOrSeveral() throws {
        let baseline = Self.sampleBaseline()
        let single = try Self.roundTrip(baseline, maximumPayload: SyncConstants.maximumPartPayload)
        #expect(single.parts.count == 1)
        #expect(single.baseline == baseline)
        guard case .baseline(_, _, _, nil) = single.parts[0].name else {
            Issue.record("a one-part baseline's name has a part suffix: \(single.parts[0].name)")
            return
        }

        let several = try Self.roundTrip(baseline, maximumPayload: 2000)
        #expect(several.parts.count > 3)
        #expect(several.baseline == baseline)
        for (name, bytes) in several.parts {
            let file = try EventFile(decoding: bytes, name: name.fileName)
            #expect(file.kind == .baselinePart)
            #expect(file.payload.count <= 2000, "part \(name) has \(file.payload.count) bytes of payload")
            #expect(try CloudFileName.parse(name.fileName) == name)
        }
        #expect(several.parts.map(\.name) == baseline.summary.fileNames(parts: several.parts.count))

        // Past nine parts the header's part number takes a digit more: still within the limit.
        let many = try Self.roundTrip(baseline, maximumPayload: 1100)
        #expect(many.parts.count >= 10)
        #expect(many.baseline == baseline)
        for (name, bytes) in many.parts {
            let payload = try EventFile(decoding: bytes, name: name.fileName).payload
            #expect(payload.count <= 1100, "part \(name) has \(payload.count) bytes of payload")
        }
    }

    @Test func theBytesDependOnlyOnTheLedger() throws {
        let directory = try makeScratchDirectory()
        defer { removeScratch(directory) }
        var device = LedgerTestDevice(store: orderedStores[0])
        let shelf = ObjectKey("Shelf", "s1")
        let events = [device.record([.insert(shelf, ["label": .string("sf")],
                                             adds: ["books": (0..<12).map { .member(ObjectKey("Book", "b\($0)"), at: Double($0)) }])]),
                      device.record([.update(shelf, removes: ["books": [ObjectKey("Book", "b3")]])])]
        let baseline = Baseline(writer: orderedStores[0], globalCount: 2, vector: device.known, ledger: integrated(events).ledger)
        var rebuilt = baseline
        // The same ledger built again: its dictionaries hash (and would iterate) in another order.
        rebuilt.ledger = Ledger()
        for key in baseline.ledger.objects.keys.sorted().reversed() {
            let object = try #require(baseline.ledger.object(key))
            var copy = LedgerObject(key: key)
            copy.incarnations = object.incarnations
            copy.attributes = object.attributes
            for (name, members) in object.members { for (member, adds) in members.reversed() { copy.members[name, default: [:]][member] = adds } }
            rebuilt.ledger.update(key) { $0 = copy }
        }
        #expect(rebuilt == baseline)
        let first = try Self.write(baseline, to: directory, maximumPayload: 3000).map(\.bytes)
        let second = try Self.write(rebuilt, to: directory, maximumPayload: 3000).map(\.bytes)
        #expect(first == second)
    }

    @Test func anEmptyLedgerIsOnePart() throws {
        let baseline = Baseline(writer: orderedStores[1], globalCount: 0, vector: RevisionVector(), ledger: Ledger())
        let result = try Self.roundTrip(baseline, maximumPayload: 500)
        #expect(result.parts.count == 1)
        #expect(result.baseline == baseline)
    }

    @Test func anObjectLargerThanAPartIsRefused() throws {
        let directory = try makeScratchDirectory()
        defer { removeScratch(directory) }
        #expect(throws: SyncError.self) { try Self.write(Self.sampleBaseline(), to: directory, maximumPayload: 200) }
    }

    @Test func damagedTruncatedMissingOrMixedPartsAreRefused() throws {
        let directory = try makeScratchDirectory()
        defer { removeScratch(directory) }
        let baseline = Self.sampleBaseline()
        let parts = try Self.write(baseline, to: directory, maximumPayload: 2000)
        #expect(parts.count >= 3)

        func refusal(_ parts: [(name: CloudFileName, bytes: Data)]) -> EventFileError? {
            do { _ = try BaselineFile.decode(parts: parts); return nil } catch { return error }
        }

        var flipped = parts
        flipped[1].bytes[flipped[1].bytes.count / 2] ^= 0xFF
        guard case .checksumMismatch(let name, _, _, _)? = refusal(flipped) else {
            Issue.record("a flipped byte was not refused as a checksum mismatch")
            return
        }
        #expect(name == parts[1].name.fileName)

        var truncated = parts
        truncated[2].bytes = truncated[2].bytes.prefix(truncated[2].bytes.count - 10)
        guard case .truncated? = refusal(truncated) else {
            Issue.record("a truncated part was not refused as truncated")
            return
        }

        #expect(refusal(Array(parts.dropLast())) != nil, "a missing part was accepted")
        #expect(refusal(parts + [parts[0]]) != nil, "a repeated part was accepted")

        // A part of another baseline under this one's name: the header does not match the name.
        var other = baseline
        other.id = UUID()
        let otherParts = try Self.write(other, to: directory, maximumPayload: 2000)
        var mixed = parts
        mixed[1].bytes = otherParts[1].bytes
        guard case .malformedPayload? = refusal(mixed) else {
            Issue.record("a part of another baseline was not refused")
            return
        }

        // An event part under a baseline name.
        var wrongKind = parts
        wrongKind[0].bytes = EventFile(kind: .eventPart, payload: Data("{}".utf8)).encoded()
        guard case .corrupt? = refusal(wrongKind) else {
            Issue.record("an event part was read as a baseline part")
            return
        }
        #expect(throws: EventFileError.self) { try BaselineFile.summary(ofPart: wrongKind[0].bytes, name: parts[0].name) }
        #expect(try BaselineFile.summary(ofPart: parts[0].bytes, name: parts[0].name) == baseline.summary)
    }

    @Test func aNewerPayloadVersionIsRefused() throws {
        let baseline = Baseline(writer: orderedStores[1], globalCount: 3, vector: RevisionVector([orderedStores[1]: 3]), ledger: Ledger())
        var header = BaselineFile.Header(baseline.summary, part: 1)
        header.v = 2
        let payload = Data("{\"header\":".utf8) + (try EventPayloadCoding.encode(header)) + Data(",\"objects\":[]}".utf8)
        let bytes = EventFile(kind: .baselinePart, payload: payload).encoded()
        let name = baseline.summary.fileName(part: nil)
        #expect(throws: EventFileError.unsupportedFormatVersion(name: name.fileName, found: 2, supported: 1)) {
            try BaselineFile.decode(parts: [(name, bytes)])
        }
    }
}
