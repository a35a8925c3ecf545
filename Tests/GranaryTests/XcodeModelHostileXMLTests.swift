import Foundation
import Testing
@testable import Granary

/// A model file that is not well-formed XML, written to trap: the reader and the loader throw their
/// typed errors at the offending line and column instead of crashing the process (`granary migrate
/// --model` reads whatever file it is given).
@Suite struct XcodeModelHostileXMLTests {
    /// A hostile `contents` file and where and why reading it must fail.
    struct Hostile: Sendable, CustomTestStringConvertible {
        let label: String
        let bytes: [UInt8]
        let line: Int
        let column: Int
        let reason: String

        init(_ label: String, _ text: String, line: Int = 1, column: Int, _ reason: String) {
            self.init(label, Array(text.utf8), line: line, column: column, reason)
        }

        init(_ label: String, _ bytes: [UInt8], line: Int = 1, column: Int, _ reason: String) {
            self.label = label
            self.bytes = bytes
            self.line = line
            self.column = column
            self.reason = reason
        }

        var testDescription: String { label }
    }

    static let documents: [Hostile] = [
        // Character data outside the root element: the CDATA section used to index an empty array.
        Hostile("CDATA before the root", "<![CDATA[x]]><model/>", column: 1, "a CDATA section may appear only inside the root element"),
        Hostile("CDATA after the prolog", "<?xml version=\"1.0\"?>\n<!-- c -->\n<![CDATA[<model/>]]>", line: 3, column: 1,
                "a CDATA section may appear only inside the root element"),
        Hostile("CDATA after the root", "<model/>\n<![CDATA[x]]>", line: 2, column: 1, "only comments and processing instructions may follow"),
        Hostile("text before the root", "hello <model/>", column: 1, "expected the root element, found 'h'"),
        Hostile("a reference before the root", "&amp;<model/>", column: 1, "expected the root element, found '&'"),
        // Unbalanced tags.
        Hostile("an end tag first", "</model>", column: 1, "end tag </model> has no start tag"),
        Hostile("crossed tags", "<model>\n<entity>\n</model>", line: 3, column: 1, "does not match <entity>, opened at line 2"),
        Hostile("an unclosed root", "<model>\n<entity/>\n", line: 3, column: 1, "the file ends inside <model>, opened at line 1"),
        // Truncated files, cut inside each construct.
        Hostile("truncated in the declaration", "<?xml version=\"1.0", column: 19, "the file ends inside an attribute value"),
        Hostile("truncated in a DOCTYPE string", "<!DOCTYPE plist PUBLIC \"-//Apple", column: 33, "the DOCTYPE opened at line 1 is not closed"),
        Hostile("truncated in a start tag", "<model type", column: 12, "expected '=' after attribute 'type' of <model>, found the end of the file"),
        Hostile("truncated in an attribute value", "<model name=\"x/>", column: 17, "the file ends inside an attribute value"),
        Hostile("truncated in a comment", "<model><!-- x", column: 14, "the comment opened at line 1 is not closed"),
        Hostile("truncated in CDATA", "<model><![CDATA[x", column: 18, "the CDATA section opened at line 1 is not closed"),
        Hostile("truncated in a reference", "<model>&am", column: 8, "the file ends inside a reference"),
        Hostile("truncated in an end tag", "<model></mod", column: 13, "expected '>' to close the end tag </mod, found the end of the file"),
        Hostile("truncated in a processing instruction", "<model><?pi x", column: 14,
                "the processing instruction opened at line 1 is not closed"),
        // Entity and character references.
        Hostile("an unknown entity", "<model>&bogus;</model>", column: 8, "unknown entity &bogus;"),
        Hostile("a signed character reference", "<model>&#+65;</model>", column: 8, "&#+65; is not a valid character reference"),
        Hostile("a reference to a control character", "<model>&#1;</model>", column: 8, "&#1; is not a valid character reference"),
        Hostile("a reference to a non-character", "<model v=\"&#xFFFE;\"/>", column: 11, "&#xFFFE; is not a valid character reference"),
        Hostile("an overflowing character reference", "<model>&#99999999999;</model>", column: 8,
                "&#99999999999; is not a valid character reference"),
        Hostile("an empty hexadecimal reference", "<model>&#x;</model>", column: 8, "&#x; is not a valid character reference"),
        // Attributes without values.
        Hostile("an attribute without a value", "<model name>", column: 12, "expected '=' after attribute 'name' of <model>, found '>'"),
        Hostile("an attribute with nothing after '='", "<model name=>", column: 13, "expected a quoted attribute value, found '>'"),
        Hostile("an unquoted attribute value", "<model name=x/>", column: 13, "expected a quoted attribute value, found 'x'"),
        // Invalid UTF-8.
        Hostile("an overlong encoding", Array("<model>".utf8) + [0xC0, 0x80] + Array("</model>".utf8), column: 8, "not valid UTF-8"),
        Hostile("a lone continuation byte", Array("<model v=\"".utf8) + [0x80] + Array("\"/>".utf8), column: 11, "not valid UTF-8"),
        Hostile("an encoded surrogate", Array("<model>\n".utf8) + [0xED, 0xA0, 0x80] + Array("</model>".utf8), line: 2, column: 1,
                "not valid UTF-8"),
        Hostile("a sequence cut by the end of the file", Array("<model/>".utf8) + [0xE2, 0x82], column: 9, "not valid UTF-8"),
        Hostile("an invalid byte in a name", Array("<mo".utf8) + [0xFF] + Array("del/>".utf8), column: 4, "not valid UTF-8"),
    ]

    @Test(arguments: documents)
    func theReaderThrowsWhereTheDocumentBreaks(_ document: Hostile) throws {
        do {
            _ = try XMLReader.parse(document.bytes)
            Issue.record("parsed")
        } catch {
            #expect(error.line == document.line && error.column == document.column, "\(error)")
            #expect(error.reason.contains(document.reason), "\(error)")
        }
    }

    @Test(arguments: documents)
    func theModelLoaderReportsTheFileAndLine(_ document: Hostile) throws {
        let package = try XcodeFixtures.writePackage(bytes: document.bytes, named: "Hostile", in: XcodeFixtures.scratchDirectory())
        do {
            _ = try ManagedObjectModel(contentsOf: package)
            Issue.record("loaded")
        } catch {
            guard case .malformedXML(let location, let reason) = error else {
                Issue.record("expected malformedXML, got \(error)")
                return
            }
            #expect(location.path.hasSuffix("Hostile.xcdatamodel/contents") && location.line == document.line)
            #expect(reason.hasPrefix("column \(document.column): "))
            #expect(reason.contains(document.reason), "\(error)")
        }
    }

    /// Before the fix the child died of a trap; now it exits with status 1 and one line naming the file.
    @Test func granaryMigrateRefusesAModelWithCDATAOutsideTheRoot() throws {
        let package = try XcodeFixtures.writePackage("<![CDATA[x]]><model/>", named: "Hostile", in: XcodeFixtures.scratchDirectory())
        let outcome = try ChildProcess.run("granary", ["migrate", "/nonexistent/store.granary", "--model", package.path])
        #expect(outcome.reason == .exit && outcome.status == 1, "\(outcome.err)")
        #expect(outcome.err == "granary: cannot load the model: \(package.path)/contents:1: malformed XML: column 1: "
            + "a CDATA section may appear only inside the root element\n")
    }

    @Test(arguments: StackSize.all)
    func elementsNestedAHundredThousandDeepAreRefusedAndTheLimitReadsAndDrops(stackSize: Int) throws {
        func nested(_ depth: Int) -> [UInt8] {
            Array((String(repeating: "<a>\n", count: depth) + String(repeating: "</a>", count: depth)).utf8)
        }
        let limit = XMLReader.maximumDepth
        let outcome = try onThread(stackSize: stackSize) { () -> [String] in
            var seen: [String] = []
            for depth in [limit, limit + 1, 100_000] {
                do {
                    // The tree is built and dropped here, on the thread under test.
                    let root = try XMLReader.parse(nested(depth))
                    seen.append("\(root.name) read")
                } catch {
                    seen.append("\(error)")
                }
            }
            return seen
        }
        let refused = "line \(limit + 1), column 1: elements nest deeper than \(limit) levels"
        #expect(outcome == ["a read", refused, refused])
    }

    /// 50,000 attributes used to be checked for duplicates pair by pair: over a billion comparisons.
    @Test(.timeLimit(.minutes(1)))
    func aTagWithManyAttributesIsCheckedForDuplicatesInOnePass() throws {
        let attributes = (0..<50_000).map { " a\($0)=\"\($0)\"" }.joined()
        let root = try XMLReader.parse(Array("<model\(attributes)/>".utf8))
        #expect(root.attributes.count == 50_000 && root.attribute("a49999") == "49999")
        #expect(throws: XMLReader.SyntaxError.self) { try XMLReader.parse(Array("<model\(attributes) a7=\"again\"/>".utf8)) }
    }

    /// Every way of cutting a real model file short, and random bytes overwritten in it, end in a typed
    /// error or a model, never a trap: the reader, the decoder and the model checks all see the damage.
    @Test func truncatedAndDamagedModelFilesNeverTrap() throws {
        XcodeFixtures.registerLibraryTransformables()
        let original = Array(try Data(contentsOf: XcodeFixtures.url("Library.xcdatamodel/contents")))
        func load(_ bytes: [UInt8]) -> String {
            do {
                let root = try XMLReader.parse(bytes)
                let decoded = XcodeModelDecoder(path: "contents", classes: XcodeClassBinding([:])).decode(root)
                _ = try ManagedObjectModel(decoded: decoded, versionIdentifier: "Library")
                return "loaded"
            } catch let error as XMLReader.SyntaxError {
                return "malformed: \(error.reason)"
            } catch {
                return "refused: \(error)"
            }
        }
        #expect(load(original) == "loaded")
        // Every length of prefix that stops before the root's end tag.
        let endTag = Array("</model>".utf8)
        let end = try #require(original.indices.first { original[$0...].starts(with: endTag) })
        for length in 0..<end + endTag.count - 1 {
            let outcome = load(Array(original[..<length]))
            #expect(outcome.hasPrefix("malformed: "), "\(length) bytes: \(outcome)")
        }
        // Up to four bytes overwritten, with fixed seeds so that a failure can be replayed.
        for seed in 0..<UInt64(300) {
            var generator = SplitMix(seed: seed)
            var damaged = original
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                damaged[Int.random(in: 0..<damaged.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            _ = load(damaged)
        }
    }
}

/// A small seeded generator, so that a damaged-file run can be repeated from the seed its failure names.
private struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
