import Foundation
import PropertyBased
import Testing
@testable import GranarySync

@Suite struct CloudFileNameTests {
    static let store = StoreID(canonical: "6F1C0000-0000-4000-8000-000000000001")!
    static let baselineID = UUID(uuidString: "A0B10000-0000-4000-8000-0000000000FF")!
    static let sha = String(repeating: "0123456789abcdef", count: 4)

    @Test func eachKindFormatsAsThePlanSays() throws {
        let names: [(CloudFileName, String)] = [
            (.event(globalCount: 40, store: Self.store, revision: 12, part: nil), "40_6F1C0000-0000-4000-8000-000000000001_12.gsevent"),
            (.event(globalCount: 0, store: Self.store, revision: 1, part: .init(index: 2, count: 3)),
             "0_6F1C0000-0000-4000-8000-000000000001_1_2of3.gsevent"),
            (.baseline(globalCount: 7, id: Self.baselineID, store: Self.store, part: nil),
             "7_A0B10000-0000-4000-8000-0000000000FF_6F1C0000-0000-4000-8000-000000000001.gsbase"),
            (.data(sha256: Self.sha, store: Self.store), "\(Self.sha)_6F1C0000-0000-4000-8000-000000000001.gsdata"),
            (.registration(store: Self.store), "6F1C0000-0000-4000-8000-000000000001.gsstore"),
        ]
        for (name, text) in names {
            #expect(name.fileName == text)
            #expect(try CloudFileName.parse(text) == name)
            #expect(name.writer == Self.store)
            #expect(name.isValid)
        }
    }

    @Test func randomNamesRoundTrip() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int.max)) { seed in
            var g = SplitMix(seed: seed)
            let count = Int64.random(in: 0...Int64.max, using: &g)
            let partCount = Int.random(in: 2...100, using: &g)
            let part: CloudFileName.Part? = Bool.random(using: &g) ? .init(index: Int.random(in: 1...partCount, using: &g), count: partCount) : nil
            let name: CloudFileName = switch Int.random(in: 0...3, using: &g) {
            case 0: .event(globalCount: count, store: g.storeID(), revision: Int64.random(in: 1...Int64.max, using: &g), part: part)
            case 1: .baseline(globalCount: count, id: g.storeID().uuid, store: g.storeID(), part: part)
            case 2: .data(sha256: (0..<64).map { _ in String(Int.random(in: 0..<16, using: &g), radix: 16) }.joined(), store: g.storeID())
            default: .registration(store: g.storeID())
            }
            #expect((try? CloudFileName.parse(name.fileName)) == name, "seed \(seed): \(name)")
        }
    }

    /// Canonical: a name that parses formats back to exactly itself, so no file has two names.
    @Test func anyNameThatParsesIsItsOwnFormat() async {
        let alphabet = Array("0123456789_-.ofABCDEFabcdefgsevntbaedtr")
        let event = "40_6F1C0000-0000-4000-8000-000000000001_12_2of3.gsevent"
        await propertyCheck(count: 500, input: Gen.int(in: 0...Int.max)) { seed in
            var g = SplitMix(seed: seed)
            // Mutate a valid name at a few places: most results are refused, some parse; those must be canonical.
            var characters = Array(event)
            for _ in 0..<Int.random(in: 1...3, using: &g) {
                let index = Int.random(in: 0..<characters.count, using: &g)
                switch Int.random(in: 0...2, using: &g) {
                case 0: characters[index] = alphabet.randomElement(using: &g)!
                case 1: characters.insert(alphabet.randomElement(using: &g)!, at: index)
                default: characters.remove(at: index)
                }
            }
            let text = String(characters)
            if let parsed = try? CloudFileName.parse(text) {
                #expect(parsed.fileName == text, "seed \(seed): '\(text)' parses as \(parsed)")
            }
        }
    }

    @Test func hostileAndForeignNamesAreRefused() {
        let s = "6F1C0000-0000-4000-8000-000000000001"
        let hostile = [
            "", ".", "..", "../\(s).gsstore", "/etc/passwd", "\(s).gsstore/x", ".40_\(s)_12.gsevent",
            ".40_\(s)_12.gsevent.3F2504E0-4F89-11D3-9A0C-0305E82C3301.part",
            "40_\(s)_12.gsevent.part", "40_\(s)_12 (conflicted copy 2026-11-27).gsevent",
            "40_\(s)_12.sync-conflict-20261127-101010-ABCDEFG.gsevent",
            "040_\(s)_12.gsevent", "+40_\(s)_12.gsevent", "-1_\(s)_12.gsevent", "40_\(s)_0.gsevent", "40_\(s)_012.gsevent",
            "9223372036854775808_\(s)_1.gsevent", "40_\(s.lowercased())_12.gsevent", "40_{\(s)}_12.gsevent",
            "40_\(s)_12_1of1.gsevent", "40_\(s)_12_0of2.gsevent", "40_\(s)_12_3of2.gsevent", "40_\(s)_12_2of.gsevent",
            "40_\(s)_12_2of3of4.gsevent", "40_\(s)__12.gsevent", "40_\(s)_12_.gsevent", "40_\(s)_12.GSEVENT",
            "40_\(s)_12.gsevent.gsevent", "40_\(s)_12", "४०_\(s)_12.gsevent", "40\u{0}_\(s)_12.gsevent",
            "40_\(s)_12.gsevent\n", " 40_\(s)_12.gsevent", "\(String(repeating: "ab", count: 32).uppercased())_\(s).gsdata",
            "abc_\(s).gsdata", "\(s.lowercased()).gsstore", "\(s)_1.gsstore", String(repeating: "9", count: 10_000) + ".gsevent",
            "7_\(s).gsbase", "x_\(s)_\(s).gsbase", "format.json",
        ]
        for text in hostile {
            do {
                let parsed = try CloudFileName.parse(text)
                Issue.record("'\(text.debugDescription)' parsed as \(parsed)")
            } catch {
                guard case let .invalidFileName(name, reason) = error else { Issue.record("\(error)"); continue }
                #expect(name == text && !reason.isEmpty)
                #expect(error.description.count < 400, "bounded message for a long name")
            }
        }
    }

    /// Random strings, any Unicode: parsing never traps, and whatever parses is canonical.
    @Test func randomStringsNeverTrapTheParser() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int.max)) { seed in
            var g = SplitMix(seed: seed)
            let text = String(String.UnicodeScalarView((0..<Int.random(in: 0...120, using: &g)).compactMap { _ in
                Unicode.Scalar(Bool.random(using: &g) ? UInt32.random(in: 0x20...0x7E, using: &g) : UInt32.random(in: 0...0x10FFFF, using: &g))
            }))
            if let parsed = try? CloudFileName.parse(text) {
                #expect(parsed.fileName == text, "seed \(seed)")
            }
        }
    }
}
