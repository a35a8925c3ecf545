import Foundation
import Testing

/// The Swift code in the README and in the documentation catalogs is code these tests compile and run
/// (one region, GranaryStack's one-line start, is compiled only, and the Core Data `PersistenceController`
/// runs only in memory: run as written they would create a store in the user's data directory).
///
/// In `README.md` and in every article of `Sources/*/Documentation.docc`, each Swift code block follows
/// a marker line:
/// - `<!-- snippet: NAME -->`: the block is, word for word (indentation and trailing spaces aside), the
///   region of a test file between a line `// snippet: NAME` and the next line `// end-snippet`;
/// - `<!-- not compiled: REASON -->`: the block is deliberately not compiled (Core Data code shown for
///   comparison, a fragment that cannot stand alone), and the reason says why.
///
/// A Swift block without a marker, a marker that names no region or is not followed by a Swift block, a
/// region no document shows, or two regions of one name fail here, so an article cannot drift from code
/// that compiles.
@Suite struct DocumentationCodeTests {
    @Test func everySwiftBlockIsMarked() throws {
        for block in try Self.blocks() where block.marker == nil {
            Issue.record("\(block.place): a Swift block without a `<!-- snippet: NAME -->` or `<!-- not compiled: REASON -->` line before it")
        }
    }

    @Test func everyMarkerIsFollowedByASwiftBlock() throws {
        let root = Self.root
        for document in try Self.documents() {
            let lines = try Self.lines(of: document)
            for (index, line) in lines.enumerated() where Self.marker(in: line) != nil {
                let next = lines[(index + 1)...].first { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
                if next?.trimmingCharacters(in: .whitespaces) != "```swift" {
                    Issue.record("\(Self.relative(document, to: root)):\(index + 1): a marker not followed by a ```swift block")
                }
            }
        }
    }

    @Test func everySnippetIsItsRegionWordForWord() throws {
        let regions = Dictionary(try Self.regions().map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for block in try Self.blocks() {
            guard case .snippet(let name)? = block.marker else { continue }
            guard let region = regions[name] else {
                Issue.record("\(block.place): no test file has a region `// snippet: \(name)`")
                continue
            }
            let shown = Self.normalized(block.text)
            let compiled = Self.normalized(region.text)
            if shown != compiled {
                Issue.record("""
                    \(block.place): the snippet '\(name)' differs from \(region.place); the compiled code is:
                    \(compiled)
                    """)
            }
        }
    }

    @Test func everyRegionIsShownAndNamedOnce() throws {
        let shown = Set(try Self.blocks().compactMap { block -> String? in
            if case .snippet(let name)? = block.marker { return name } else { return nil }
        })
        var seen: [String: Region] = [:]
        for region in try Self.regions() {
            if let first = seen[region.name] {
                Issue.record("\(region.place): the snippet name '\(region.name)' is already used at \(first.place)")
            }
            seen[region.name] = region
            if !shown.contains(region.name) {
                Issue.record("\(region.place): the region '\(region.name)' is shown by no document")
            }
        }
    }

    /// Every library the package offers has its catalog, and `make docs` builds it.
    @Test func everyLibraryHasACatalogThatMakeDocsBuilds() throws {
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let makefile = try String(contentsOf: Self.root.appendingPathComponent("Makefile"), encoding: .utf8)
        let docTargets = makefile.split(separator: "\n").first { $0.hasPrefix("DOC_TARGETS") }?
            .split(separator: "=").last?.split(separator: " ").map(String.init) ?? []
        let libraries = manifest.matches(of: /\.library\(name: "([^"]+)"/).map { String($0.1) }
        #expect(!libraries.isEmpty)
        for library in libraries {
            let landing = Self.root.appendingPathComponent("Sources/\(library)/Documentation.docc/\(library).md")
            #expect(FileManager.default.fileExists(atPath: landing.path), "\(library) has no landing page at \(landing.path)")
            #expect(docTargets.contains(library), "the Makefile's DOC_TARGETS does not name \(library)")
        }
    }

    // MARK: Reading documents and test files

    enum Marker: Equatable {
        case snippet(String)
        case notCompiled(String)
    }

    struct Block {
        var place: String
        var marker: Marker?
        var text: String
    }

    struct Region {
        var name: String
        var place: String
        var text: String
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The README and every Markdown file of every catalog.
    static func documents() throws -> [URL] {
        var documents = [root.appendingPathComponent("README.md")]
        let sources = root.appendingPathComponent("Sources")
        for module in try FileManager.default.contentsOfDirectory(atPath: sources.path).sorted() {
            let catalog = sources.appendingPathComponent(module).appendingPathComponent("Documentation.docc")
            let files = (FileManager.default.enumerator(atPath: catalog.path)?.allObjects as? [String]) ?? []
            documents += files.filter { $0.hasSuffix(".md") }.sorted().map { catalog.appendingPathComponent($0) }
        }
        return documents
    }

    static func lines(of file: URL) throws -> [String] {
        try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    static func relative(_ file: URL, to root: URL) -> String {
        String(file.standardizedFileURL.path.dropFirst(root.standardizedFileURL.path.count + 1))
    }

    static func marker(in line: String) -> Marker? {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix("<!--"), trimmed.hasSuffix("-->") else { return nil }
        let content = trimmed.dropFirst(4).dropLast(3).trimmingCharacters(in: .whitespaces)
        if content.hasPrefix("snippet:") {
            return .snippet(content.dropFirst("snippet:".count).trimmingCharacters(in: .whitespaces))
        }
        if content.hasPrefix("not compiled:") {
            return .notCompiled(content.dropFirst("not compiled:".count).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }

    /// Every fenced Swift block of every document, with the marker on the line before it.
    static func blocks() throws -> [Block] {
        var blocks: [Block] = []
        for document in try documents() {
            let lines = try lines(of: document)
            let name = relative(document, to: root)
            var index = 0
            while index < lines.count {
                let fence = lines[index].trimmingCharacters(in: .whitespaces)
                guard fence.hasPrefix("```") else {
                    index += 1
                    continue
                }
                var end = index + 1
                while end < lines.count, lines[end].trimmingCharacters(in: .whitespaces) != "```" { end += 1 }
                if fence == "```swift" {
                    let before = lines[..<index].last { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
                    blocks.append(Block(place: "\(name):\(index + 1)", marker: before.flatMap(marker(in:)),
                                        text: lines[(index + 1)..<min(end, lines.count)].joined(separator: "\n")))
                }
                index = end + 1
            }
        }
        return blocks
    }

    /// Every `// snippet: NAME` … `// end-snippet` region of every Swift file under `Tests/`.
    static func regions() throws -> [Region] {
        let tests = root.appendingPathComponent("Tests")
        let files = ((FileManager.default.enumerator(atPath: tests.path)?.allObjects as? [String]) ?? [])
            .filter { $0.hasSuffix(".swift") }.sorted()
        var regions: [Region] = []
        for file in files {
            let lines = try lines(of: tests.appendingPathComponent(file))
            var open: (name: String, line: Int)?
            for (index, line) in lines.enumerated() {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.hasPrefix("// snippet:") {
                    if let open { Issue.record("Tests/\(file):\(index + 1): region '\(open.name)' is still open") }
                    open = (trimmed.dropFirst("// snippet:".count).trimmingCharacters(in: .whitespaces), index)
                } else if trimmed == "// end-snippet" {
                    guard let start = open else {
                        Issue.record("Tests/\(file):\(index + 1): `// end-snippet` without a region")
                        continue
                    }
                    regions.append(Region(name: start.name, place: "Tests/\(file):\(start.line + 1)",
                                          text: lines[(start.line + 1)..<index].joined(separator: "\n")))
                    open = nil
                }
            }
            if let open { Issue.record("Tests/\(file):\(open.line + 1): region '\(open.name)' has no `// end-snippet`") }
        }
        return regions
    }

    /// The text without trailing spaces, surrounding blank lines and the indentation all lines share.
    static func normalized(_ text: String) -> String {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> Substring in
            var line = line[...]
            while line.last?.isWhitespace == true { line.removeLast() }
            return line
        }
        while lines.first?.isEmpty == true { lines.removeFirst() }
        while lines.last?.isEmpty == true { lines.removeLast() }
        let indent = lines.filter { !$0.isEmpty }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
        return lines.map { String($0.dropFirst(min(indent, $0.count))) }.joined(separator: "\n")
    }
}
