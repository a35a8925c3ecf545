import Foundation
import Testing
@testable import Granary

/// The XML reader behind the Xcode model loader: well-formed documents read completely, malformed ones
/// fail at the right line.
@Suite struct XcodeModelXMLReaderTests {
    private func parse(_ text: String) throws -> XMLReader.Element {
        try XMLReader.parse(Array(text.utf8))
    }

    private func syntaxError(_ text: String) -> XMLReader.SyntaxError? {
        do {
            _ = try XMLReader.parse(Array(text.utf8))
            Issue.record("parsed: \(text)")
            return nil
        } catch {
            return error
        }
    }

    @Test func elementsAttributesAndLinesAreRead() throws {
        let root = try parse("""
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <!-- a comment -->
            <model a="1" b='two'>
                <entity name="E">
                    <attribute name="x"/>
                </entity>
                <empty></empty>
            </model>
            """)
        #expect(root.name == "model" && root.line == 3)
        #expect(root.attributes == [XMLReader.Attribute(name: "a", value: "1"), XMLReader.Attribute(name: "b", value: "two")])
        #expect(root.children.map(\.name) == ["entity", "empty"])
        #expect(root.children.map(\.line) == [4, 7])
        let attribute = try #require(root.children.first?.children.first)
        #expect(attribute.name == "attribute" && attribute.attribute("name") == "x" && attribute.line == 5)
        #expect(attribute.attribute("missing") == nil)
    }

    @Test func referencesAndWhiteSpaceInValuesAreResolved() throws {
        let root = try parse(#"<a v="x &amp; y &lt;z&gt; &quot;q&quot; &apos;s&apos; &#65;&#x42;&#x1F600;" w="line&#10;break" t="tab\#tand\#nnewline"/>"#)
        #expect(root.attribute("v") == "x & y <z> \"q\" 's' AB😀")
        #expect(root.attribute("w") == "line\nbreak")  // written as a reference, kept
        #expect(root.attribute("t") == "tab and newline")  // written literally, read as spaces
        let text = try parse("<a>one &amp; <![CDATA[<two>]]><?pi ignored?><!-- c -->three</a>")
        #expect(text.text == "one & <two>three")
    }

    @Test func lineBreaksOfEveryKindCountAsLines() throws {
        let root = try parse("<a>\r\n<b/>\r<c/>\n<d/></a>")
        #expect(root.children.map(\.line) == [2, 3, 4])
        let bom = try parse("\u{FEFF}<a/>")
        #expect(bom.name == "a")
    }

    @Test func aDoctypeWithoutInternalSubsetIsSkipped() throws {
        let root = try parse("""
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0"><dict/></plist>
            """)
        #expect(root.name == "plist" && root.line == 3)
        #expect(syntaxError("<!DOCTYPE a [<!ENTITY x \"y\">]><a/>")?.reason.contains("internal subset") == true)
    }

    /// Found by fuzzing (fuzz-xml): the reader stepped past the end of a file that ends inside a quoted
    /// string of a DOCTYPE, and trapped.
    @Test func aDoctypeEndingInsideAQuotedStringIsAnError() throws {
        for text in ["<!DOCTYPE a \"b", "<!DOCTYPE a 'b", "<?xml version=\"1.0\"?>\n<!DOCTYPE < =a'>t<m>\n<m/>"] {
            let error = try #require(syntaxError(text))
            #expect(error.reason.contains("not closed"), "\(text): \(error)")
        }
    }

    @Test func malformedDocumentsFailAtTheirLine() throws {
        let cases: [(String, Int, String)] = [
            ("<a>\n<b>\n</a>", 3, "does not match <b>, opened at line 2"),
            ("<a>\n  <b x=1/>\n</a>", 2, "quoted attribute value"),
            ("<a>\n<b x=\"1\" x=\"2\"/>\n</a>", 2, "appears twice"),
            ("<a>\n<b/>\n", 3, "ends inside <a>, opened at line 1"),
            ("<a>\n&bogus;</a>", 2, "unknown entity &bogus;"),
            ("<a>AT&T</a>", 1, "&amp;"),
            ("<a v=\"1 < 2\"/>", 1, "&lt;"),
            ("<a/>\n<b/>", 2, "may follow the root element"),
            ("<a/>\ntext", 2, "may follow the root element"),
            ("\n\n", 3, "no root element"),
            ("<a>\n<!-- never closed\n</a>", 3, "comment opened at line 2"),
            ("<a>\n\n</b>", 3, "does not match <a>"),
            ("<a x=\"1\"y=\"2\"/>", 1, "expected white space"),
            ("<a>\n<?xml version=\"1.0\"?></a>", 2, "XML declaration"),
            ("<?xml version=\"1.0\" encoding=\"UTF-16\"?><a/>", 1, "only UTF-8"),
            ("<a v=\"&#0;\"/>", 1, "not a valid character reference"),
            ("<a v=\"&#xD800;\"/>", 1, "not a valid character reference"),
            ("<a>]]></a>", 1, "']]>'"),
        ]
        for (text, line, reason) in cases {
            guard let error = syntaxError(text) else { continue }
            #expect(error.line == line, "\(text.debugDescription): \(error)")
            #expect(error.reason.contains(reason), "\(text.debugDescription): \(error)")
        }
    }

    @Test func invalidUTF8IsRejected() {
        do {
            _ = try XMLReader.parse(Array("<a>\n<b v=\"é\"/>\n<c v=\"".utf8) + [0xC3, 0x28] + Array("\"/></a>".utf8))
            Issue.record("invalid UTF-8 was read")
        } catch {
            #expect(error.reason.contains("UTF-8") && error.line == 3 && error.column == 7)
        }
    }

    @Test func nestingIsLimited() throws {
        func nested(_ depth: Int) -> String {
            String(repeating: "<a>\n", count: depth) + String(repeating: "</a>", count: depth)
        }
        var element = try parse(nested(XMLReader.maximumDepth))
        var levels = 1
        while let child = element.children.first {
            element = child
            levels += 1
        }
        #expect(levels == XMLReader.maximumDepth && element.line == XMLReader.maximumDepth)
        let error = syntaxError(nested(XMLReader.maximumDepth + 1))
        #expect(error?.line == XMLReader.maximumDepth + 1 && error?.reason.contains("nest deeper") == true)
    }
}
