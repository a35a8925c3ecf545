/// A small, strict XML reader for the files Xcode writes: elements, attributes, character and entity
/// references, comments, processing instructions, CDATA and a DOCTYPE without an internal subset.
///
/// Foundation's `XMLParser` on Linux accepts some malformed documents without failing (an unquoted
/// attribute value, a start tag never closed) and reports errors without a message or at the end of the
/// file, so a model file that Xcode would reject could load half-read. This reader rejects anything that
/// is not well-formed XML and says where, and it needs no system library.
struct XMLReader {
    /// One element of the document, with its children in document order.
    struct Element: Sendable {
        /// The element's tag name.
        let name: String
        /// The attributes in the order written; names are unique.
        let attributes: [Attribute]
        /// The child elements in document order.
        var children: [Element]
        /// The character data directly inside the element (not inside its children), references resolved.
        var text: String
        /// The line of the `<` that opens the element, counted from 1.
        let line: Int

        /// The value of the named attribute, or nil when the element does not have it.
        func attribute(_ name: String) -> String? {
            attributes.first { $0.name == name }?.value
        }
    }

    /// One `name="value"` pair of a start tag, with references resolved and white space normalized as
    /// XML prescribes (a tab or line break inside a value reads as a space).
    struct Attribute: Sendable, Hashable {
        let name: String
        let value: String
    }

    /// Why a document is not well-formed, and where.
    struct SyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The line of the offending character, counted from 1.
        let line: Int
        /// The column of the offending character in UTF-8 bytes, counted from 1.
        let column: Int
        let reason: String

        var description: String { "line \(line), column \(column): \(reason)" }
    }

    /// The root element of a UTF-8 document.
    ///
    /// - Throws: `SyntaxError` at the first point where the document stops being well-formed XML, and
    ///   for a document that is not UTF-8.
    static func parse(_ bytes: [UInt8]) throws(SyntaxError) -> Element {
        var reader = XMLReader(bytes: bytes)
        return try reader.document()
    }

    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    private var lineStart = 0

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    // MARK: Document

    private mutating func document() throws(SyntaxError) -> Element {
        if let offset = Self.firstInvalidUTF8(in: bytes) {
            let before = bytes[..<offset]
            let line = before.count { $0 == UInt8(ascii: "\n") } + 1
            let lineStart = before.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
            throw SyntaxError(line: line, column: offset - lineStart + 1, reason: "the file is not valid UTF-8 text")
        }
        if hasPrefix([0xEF, 0xBB, 0xBF]) { index = 3 }
        if hasPrefix("<?xml") && isSpace(at: index + 5) {
            try declaration()
        }
        try miscellany(allowingDoctype: true)
        guard peek() == UInt8(ascii: "<") else {
            if index == bytes.count { throw error("the document has no root element") }
            throw error("expected the root element, found \(describe(peek()))")
        }
        let root = try elementTree()
        try miscellany(allowingDoctype: false)
        if index < bytes.count {
            throw error("only comments and processing instructions may follow the root element, found \(describe(peek()))")
        }
        return root
    }

    /// `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>`: only UTF-8 is read.
    private mutating func declaration() throws(SyntaxError) {
        index += 5
        while true {
            skipSpace()
            if hasPrefix("?>") {
                index += 2
                return
            }
            let nameLine = line, nameColumn = column
            let name = try xmlName()
            skipSpace()
            try expect(UInt8(ascii: "="), "'=' after '\(name)' in the XML declaration")
            skipSpace()
            let value = try attributeValue()
            if name == "encoding", !["utf-8", "utf8"].contains(value.lowercased()) {
                throw SyntaxError(
                    line: nameLine, column: nameColumn, reason: "the XML declaration names encoding \(value); only UTF-8 is read")
            }
        }
    }

    /// White space, comments, processing instructions and (before the root) one DOCTYPE.
    private mutating func miscellany(allowingDoctype: Bool) throws(SyntaxError) {
        var sawDoctype = false
        while true {
            skipSpace()
            if hasPrefix("<!--") {
                try comment()
            } else if hasPrefix("<?") {
                try processingInstruction()
            } else if hasPrefix("<!DOCTYPE") {
                guard allowingDoctype && !sawDoctype else { throw error("a DOCTYPE may appear only once, before the root element") }
                try doctype()
                sawDoctype = true
            } else {
                return
            }
        }
    }

    // MARK: Elements

    /// How deep elements may nest. Xcode's files nest five levels; a limit keeps a hostile file from
    /// building a tree so deep that releasing it (which recurses) exhausts the stack.
    static let maximumDepth = 256

    /// The element that starts here and everything inside it, read with an explicit stack.
    private mutating func elementTree() throws(SyntaxError) -> Element {
        var open: [Element] = []
        while true {
            guard let byte = peek() else {
                if let innermost = open.last {
                    throw error("the file ends inside <\(innermost.name)>, opened at line \(innermost.line)")
                }
                throw error("unexpected end of file")
            }
            if byte == UInt8(ascii: "<") {
                if hasPrefix("</") {
                    let endLine = line, endColumn = column
                    index += 2
                    let name = try xmlName()
                    skipSpace()
                    try expect(UInt8(ascii: ">"), "'>' to close the end tag </\(name)")
                    guard let element = open.popLast() else {
                        throw SyntaxError(line: endLine, column: endColumn, reason: "end tag </\(name)> has no start tag")
                    }
                    guard element.name == name else {
                        throw SyntaxError(
                            line: endLine, column: endColumn,
                            reason: "end tag </\(name)> does not match <\(element.name)>, opened at line \(element.line)")
                    }
                    if open.isEmpty { return element }
                    open[open.count - 1].children.append(element)
                } else if hasPrefix("<!--") {
                    try comment()
                } else if hasPrefix("<![CDATA[") {
                    let text = try cdata()
                    open[open.count - 1].text += text
                } else if hasPrefix("<?") {
                    try processingInstruction()
                } else if hasPrefix("<!") {
                    throw error("unexpected markup declaration inside an element")
                } else {
                    if open.count >= Self.maximumDepth {
                        throw error("elements nest deeper than \(Self.maximumDepth) levels")
                    }
                    let (element, isEmpty) = try startTag()
                    if isEmpty {
                        if open.isEmpty { return element }
                        open[open.count - 1].children.append(element)
                    } else {
                        open.append(element)
                    }
                }
            } else if byte == UInt8(ascii: "&") {
                let text = try reference()
                open[open.count - 1].text += text
            } else {
                let start = index
                while let b = peek(), b != UInt8(ascii: "<"), b != UInt8(ascii: "&") {
                    if b == UInt8(ascii: ">") && index >= 2 && bytes[index - 2] == UInt8(ascii: "]")
                        && bytes[index - 1] == UInt8(ascii: "]")
                    {
                        throw error("']]>' may not appear in text")
                    }
                    advance()
                }
                open[open.count - 1].text += String(decoding: bytes[start..<index], as: UTF8.self)
            }
        }
    }

    /// A start tag; `isEmpty` for `<name …/>`.
    private mutating func startTag() throws(SyntaxError) -> (Element, isEmpty: Bool) {
        let startLine = line
        index += 1
        let name = try xmlName()
        var attributes: [Attribute] = []
        while true {
            let hadSpace = skipSpace()
            if hasPrefix("/>") {
                index += 2
                return (Element(name: name, attributes: attributes, children: [], text: "", line: startLine), true)
            }
            if peek() == UInt8(ascii: ">") {
                index += 1
                return (Element(name: name, attributes: attributes, children: [], text: "", line: startLine), false)
            }
            if peek() == nil { throw error("the file ends inside the start tag <\(name)>") }
            guard hadSpace else { throw error("expected white space, '>' or '/>' in <\(name)>, found \(describe(peek()))") }
            let nameLine = line, nameColumn = column
            let attributeName = try xmlName()
            skipSpace()
            try expect(UInt8(ascii: "="), "'=' after attribute '\(attributeName)' of <\(name)>")
            skipSpace()
            let value = try attributeValue()
            if attributes.contains(where: { $0.name == attributeName }) {
                throw SyntaxError(
                    line: nameLine, column: nameColumn, reason: "attribute '\(attributeName)' appears twice in <\(name)>")
            }
            attributes.append(Attribute(name: attributeName, value: value))
        }
    }

    /// A quoted attribute value with references resolved and tabs and line breaks read as spaces.
    private mutating func attributeValue() throws(SyntaxError) -> String {
        guard let quote = peek(), quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
            throw error("expected a quoted attribute value, found \(describe(peek()))")
        }
        advance()
        var value: [UInt8] = []
        while true {
            guard let byte = peek() else { throw error("the file ends inside an attribute value") }
            switch byte {
            case quote:
                advance()
                return String(decoding: value, as: UTF8.self)
            case UInt8(ascii: "<"):
                throw error("'<' must be written as &lt; inside an attribute value")
            case UInt8(ascii: "&"):
                value += Array(try reference().utf8)
            case UInt8(ascii: "\r"):
                advance()
                if peek() == UInt8(ascii: "\n") { advance() }
                value.append(UInt8(ascii: " "))
            case UInt8(ascii: "\n"), UInt8(ascii: "\t"):
                advance()
                value.append(UInt8(ascii: " "))
            default:
                advance()
                value.append(byte)
            }
        }
    }

    /// `&amp;`, `&lt;`, `&gt;`, `&quot;`, `&apos;`, `&#NN;` or `&#xNN;`, as the text it stands for.
    private mutating func reference() throws(SyntaxError) -> String {
        let startLine = line, startColumn = column
        index += 1
        let start = index
        while let byte = peek(), byte != UInt8(ascii: ";") {
            guard index - start < 32, byte != UInt8(ascii: "<"), byte != UInt8(ascii: "&"), !isSpace(at: index) else {
                throw SyntaxError(line: startLine, column: startColumn, reason: "'&' must be written as &amp; or start a reference ending in ';'")
            }
            advance()
        }
        guard peek() == UInt8(ascii: ";") else {
            throw SyntaxError(line: startLine, column: startColumn, reason: "the file ends inside a reference")
        }
        let body = String(decoding: bytes[start..<index], as: UTF8.self)
        index += 1
        func invalid(_ reason: String) -> SyntaxError {
            SyntaxError(line: startLine, column: startColumn, reason: reason)
        }
        switch body {
        case "amp": return "&"
        case "lt": return "<"
        case "gt": return ">"
        case "quot": return "\""
        case "apos": return "'"
        default:
            guard body.hasPrefix("#") else { throw invalid("unknown entity &\(body);") }
            let digits = body.dropFirst()
            let code: UInt32?
            if digits.hasPrefix("x") {
                code = digits.count > 1 ? UInt32(digits.dropFirst(), radix: 16) : nil
            } else {
                code = digits.isEmpty ? nil : UInt32(digits, radix: 10)
            }
            guard let code, code != 0, let scalar = Unicode.Scalar(code) else {
                throw invalid("&\(body); is not a valid character reference")
            }
            return String(Character(scalar))
        }
    }

    // MARK: Comments, instructions, CDATA, DOCTYPE

    private mutating func comment() throws(SyntaxError) {
        let startLine = line
        index += 4
        while !hasPrefix("--") {
            guard peek() != nil else { throw error("the comment opened at line \(startLine) is not closed") }
            advance()
        }
        guard hasPrefix("-->") else { throw error("'--' may not appear inside a comment") }
        index += 3
    }

    private mutating func processingInstruction() throws(SyntaxError) {
        let startLine = line
        index += 2
        let target = try xmlName()
        if target.lowercased() == "xml" {
            throw error("the XML declaration may appear only at the very start of the file")
        }
        while !hasPrefix("?>") {
            guard peek() != nil else { throw error("the processing instruction opened at line \(startLine) is not closed") }
            advance()
        }
        index += 2
    }

    private mutating func cdata() throws(SyntaxError) -> String {
        let startLine = line
        index += 9
        let start = index
        while !hasPrefix("]]>") {
            guard peek() != nil else { throw error("the CDATA section opened at line \(startLine) is not closed") }
            advance()
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        index += 3
        return text
    }

    /// Skips `<!DOCTYPE …>`, quoted strings included; an internal subset (`[…]`) could define entities
    /// this reader does not expand, so it is refused.
    private mutating func doctype() throws(SyntaxError) {
        let startLine = line
        index += 9
        while let byte = peek(), byte != UInt8(ascii: ">") {
            if byte == UInt8(ascii: "[") { throw error("a DOCTYPE with an internal subset is not supported") }
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                advance()
                while let inner = peek(), inner != byte { advance() }
                guard peek() != nil else { throw error("the quoted string in the DOCTYPE opened at line \(startLine) is not closed") }
            }
            advance()
        }
        guard peek() != nil else { throw error("the DOCTYPE opened at line \(startLine) is not closed") }
        index += 1
    }

    // MARK: Names and characters

    /// The offset of the first byte that is not part of a valid UTF-8 sequence, or nil when all are.
    private static func firstInvalidUTF8(in bytes: [UInt8]) -> Int? {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded): offset += encoded.count
            case .emptyInput: return nil
            case .error: return offset
            }
        }
    }

    private mutating func xmlName() throws(SyntaxError) -> String {
        let start = index
        guard let first = peek(), Self.isNameStart(first) else {
            throw error("expected a name, found \(describe(peek()))")
        }
        advance()
        while let byte = peek(), Self.isNameStart(byte) || Self.isNameContinuation(byte) { advance() }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private static func isNameStart(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":") || byte >= 0x80
    }

    private static func isNameContinuation(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
    }

    private func peek() -> UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    private var column: Int { index - lineStart + 1 }

    /// Moves past one byte, counting a line break as `\n`, `\r\n` or a lone `\r`.
    private mutating func advance() {
        let byte = bytes[index]
        index += 1
        if byte == UInt8(ascii: "\n") || (byte == UInt8(ascii: "\r") && peek() != UInt8(ascii: "\n")) {
            line += 1
            lineStart = index
        }
    }

    private func isSpace(at position: Int) -> Bool {
        guard position < bytes.count else { return false }
        let byte = bytes[position]
        return byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    @discardableResult
    private mutating func skipSpace() -> Bool {
        let start = index
        while isSpace(at: index) { advance() }
        return index > start
    }

    private func hasPrefix(_ prefix: String) -> Bool {
        hasPrefix(Array(prefix.utf8))
    }

    private func hasPrefix(_ prefix: [UInt8]) -> Bool {
        guard bytes.count - index >= prefix.count else { return false }
        return bytes[index..<(index + prefix.count)].elementsEqual(prefix)
    }

    private mutating func expect(_ byte: UInt8, _ what: String) throws(SyntaxError) {
        guard peek() == byte else { throw error("expected \(what), found \(describe(peek()))") }
        advance()
    }

    private func describe(_ byte: UInt8?) -> String {
        guard let byte else { return "the end of the file" }
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        if [0x20, 0x09, 0x0A, 0x0D].contains(byte) { return "white space" }
        return "byte 0x" + String(byte, radix: 16, uppercase: true)
    }

    private func error(_ reason: String) -> SyntaxError {
        SyntaxError(line: line, column: column, reason: reason)
    }
}
