import Foundation
import PropertyBased
import Testing
@testable import GranarySync
@testable import GranaryStorage

@Suite struct EventFileTests {
    static let name = "40_6F1C0000-0000-4000-8000-000000000001_12.gsevent"

    @Test func smallPayloadsAreStoredAsTheyAre() throws {
        let payload = Data(#"{"v":1}"#.utf8)
        let bytes = EventFile(kind: .eventPart, payload: payload).encoded()
        #expect(bytes.count == EventFile.headerSize + payload.count + EventFile.checksumSize)
        #expect(Array(bytes.prefix(4)) == Array("GSYN".utf8))
        #expect(bytes[4] == 1 && bytes[5] == 0, "format version 1, little-endian")
        #expect(bytes[6] == 1 && bytes[7] == 0, "kind event part, not compressed")
        let file = try EventFile(decoding: bytes, name: Self.name)
        #expect(file == EventFile(kind: .eventPart, payload: payload))
    }

    @Test func largeRepetitivePayloadsAreCompressedAndComeBackWhole() throws {
        let payload = Data(String(repeating: #"{"k":"insert","e":"Book","a":{"title":["s","Solaris"]}},"#, count: 500).utf8)
        let bytes = EventFile(kind: .baselinePart, payload: payload).encoded()
        #expect(bytes[7] == 1, "compressed")
        #expect(bytes.count < payload.count / 4)
        #expect(try EventFile(decoding: bytes, name: Self.name) == EventFile(kind: .baselinePart, payload: payload))
    }

    @Test func incompressiblePayloadsStayUncompressed() throws {
        var g = SplitMix(seed: 3)
        let payload = g.bytes(20_000)
        let bytes = EventFile(kind: .data, payload: payload).encoded()
        #expect(bytes[7] == 0)
        #expect(try EventFile(decoding: bytes, name: Self.name).payload == payload)
    }

    @Test func encodingIsDeterministic() {
        let payload = Data(String(repeating: "abc", count: 3000).utf8)
        #expect(EventFile(kind: .eventPart, payload: payload).encoded() == EventFile(kind: .eventPart, payload: payload).encoded())
    }

    @Test func everyTruncationIsRefused() throws {
        for payload in [Data("{}".utf8), Data(String(repeating: "xyz", count: 3000).utf8)] {
            let bytes = EventFile(kind: .eventPart, payload: payload).encoded()
            for length in 0..<bytes.count {
                do {
                    _ = try EventFile(decoding: bytes.prefix(length), name: Self.name)
                    Issue.record("a file cut to \(length) of \(bytes.count) bytes was accepted")
                } catch {
                    switch error {
                    case let .truncated(name, found, needed):
                        #expect(name == Self.name && found == length && needed > length)
                    case .notASyncFile: #expect(length < 4)
                    default: Issue.record("cut to \(length): \(error)")
                    }
                }
            }
        }
    }

    @Test func flippedBytesAreRefusedWherever() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int.max)) { seed in
            var g = SplitMix(seed: seed)
            let size = [0, 10, 5000, 9000].randomElement(using: &g)!
            let payload = Bool.random(using: &g) ? g.bytes(size) : Data(String(repeating: "ab", count: size / 2).utf8)
            var bytes = EventFile(kind: .eventPart, payload: payload).encoded()
            let offset = Int.random(in: 0..<bytes.count, using: &g)
            bytes[offset] ^= UInt8.random(in: 1...255, using: &g)
            #expect(throws: EventFileError.self, "seed \(seed): a change at \(offset) was accepted") {
                try EventFile(decoding: bytes, name: Self.name)
            }
        }
    }

    @Test func aChecksumMismatchNamesTheFileAndOffset() throws {
        var bytes = EventFile(kind: .eventPart, payload: Data("{\"a\":1}".utf8)).encoded()
        bytes[EventFile.headerSize + 2] ^= 0x01
        #expect(throws: EventFileError.self) { try EventFile(decoding: bytes, name: Self.name) }
        do {
            _ = try EventFile(decoding: bytes, name: Self.name)
        } catch {
            guard case let .checksumMismatch(name, offset, _, _) = error else { throw error }
            #expect(name == Self.name && offset == bytes.count - 4)
            #expect(error.description.contains(Self.name) && error.description.contains("offset \(bytes.count - 4)"))
        }
    }

    /// A header with `mutate` applied and the checksum made right again, to reach the checks behind it.
    static func resealed(_ payload: Data, _ mutate: (inout Data) -> Void) -> Data {
        var bytes = EventFile(kind: .eventPart, payload: payload).encoded()
        bytes.removeLast(4)
        mutate(&bytes)
        let crc = bytes.withUnsafeBytes { CRC32C.checksum($0) }
        withUnsafeBytes(of: crc.littleEndian) { bytes.append(contentsOf: $0) }
        return bytes
    }

    @Test func aNewerFormatVersionIsRefusedWithAClearError() throws {
        // Even with a valid checksum, and even when the rest would be unreadable: the version comes first.
        for version: UInt16 in [2, 3, 0xFFFF] {
            let bytes = Self.resealed(Data("{}".utf8)) { $0[4] = UInt8(version & 0xFF); $0[5] = UInt8(version >> 8) }
            do {
                _ = try EventFile(decoding: bytes, name: Self.name)
                Issue.record("version \(version) accepted")
            } catch {
                #expect(error == .unsupportedFormatVersion(name: Self.name, found: version, supported: 1))
                #expect(error.description.contains("format version \(version)") && error.description.contains("update"))
            }
            var damaged = bytes
            damaged.removeLast(10)
            #expect(throws: EventFileError.unsupportedFormatVersion(name: Self.name, found: version, supported: 1)) {
                try EventFile(decoding: damaged, name: Self.name)
            }
        }
    }

    @Test func impossibleHeaderFieldsAreRefused() throws {
        let payload = Data("{}".utf8)
        let cases: [(String, (inout Data) -> Void)] = [
            ("unknown kind", { $0[6] = 9 }),
            ("unknown flag", { $0[7] = 0x80 }),
            ("lengths differ uncompressed", { $0[16] = 5 }),
            ("version 0", { $0[4] = 0 }),
            ("compressed flag on raw bytes", { $0[7] = 1; $0[16] = 200 }),
            ("huge uncompressed length", { $0[7] = 1; $0[23] = 0x7F }),
        ]
        for (label, mutate) in cases {
            #expect(throws: EventFileError.self, "\(label)") { try EventFile(decoding: Self.resealed(payload, mutate), name: Self.name) }
        }
        // A stored length far past the end: refused as truncated, without overflow.
        for length: UInt64 in [100, UInt64(Int.max), .max] {
            let bytes = Self.resealed(payload) { data in
                withUnsafeBytes(of: length.littleEndian) { data.replaceSubrange(8..<16, with: $0) }
            }
            do {
                _ = try EventFile(decoding: bytes, name: Self.name)
                Issue.record("stored length \(length) accepted")
            } catch {
                guard case .truncated = error else { Issue.record("stored length \(length): \(error)"); continue }
            }
        }
        // Bytes after the checksum: a torn append or a conflicted copy.
        var longer = EventFile(kind: .eventPart, payload: payload).encoded()
        longer.append(0)
        #expect(throws: EventFileError.self) { try EventFile(decoding: longer, name: Self.name) }
        #expect(throws: EventFileError.notASyncFile(name: Self.name)) { try EventFile(decoding: Data("GSYX and more bytes than a header".utf8), name: Self.name) }
    }

    @Test func aPayloadIsReadOnlyFromAFileOfItsKind() throws {
        let vector = RevisionVector([StoreID.random(): 3])
        let bytes = try EventPayloadCoding.file(.eventPart, of: vector)
        #expect(try EventPayloadCoding.value(RevisionVector.self, ofKind: .eventPart, inFile: bytes, name: Self.name) == vector)
        #expect(throws: EventFileError.self) {
            try EventPayloadCoding.value(RevisionVector.self, ofKind: .baselinePart, inFile: bytes, name: Self.name)
        }
        let notJSON = EventFile(kind: .eventPart, payload: Data("{not json".utf8)).encoded()
        #expect(throws: EventFileError.self) {
            try EventPayloadCoding.value(RevisionVector.self, ofKind: .eventPart, inFile: notJSON, name: Self.name)
        }
    }

    @Test func payloadKeysAreSortedWithoutWhitespace() throws {
        struct Sample: Codable { var zeta: Int; var alpha: String; var middle: [String: Int] }
        let json = String(decoding: try EventPayloadCoding.encode(Sample(zeta: 1, alpha: "a/b", middle: ["b": 2, "a": 1])), as: UTF8.self)
        #expect(json == #"{"alpha":"a/b","middle":{"a":1,"b":2},"zeta":1}"#)
        #expect(throws: EventFileError.self) { try EventPayloadCoding.encode([Double.nan]) }
    }

    /// Random bytes, with and without a valid magic and version in front: always a typed refusal.
    @Test func garbageIsAlwaysATypedRefusal() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int.max)) { seed in
            var g = SplitMix(seed: seed)
            var bytes = g.bytes(Int.random(in: 0...200, using: &g))
            if Bool.random(using: &g) { bytes = Data("GSYN".utf8) + Data([1, 0]) + bytes }
            do throws(EventFileError) {
                let file = try EventFile(decoding: bytes, name: "g")
                // Acceptable only if it really is a well-formed frame, which random bytes all but never are.
                #expect(file.encoded() == bytes, "seed \(seed): garbage decoded")
            } catch {
                #expect(error.description.contains("cloud file g "), "seed \(seed): \(error)")
            }
            #expect(throws: EventFileError.self, "seed \(seed)") {
                try EventPayloadCoding.decode([SyncValue?].self, from: bytes, name: "g")
            }
        }
    }
}
