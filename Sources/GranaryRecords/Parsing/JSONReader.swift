import Dispatch
import Foundation

/// Reads JSON text (RFC 8259, UTF-8) straight into ``JSONNode``s.
///
/// Imports read their JSON through it rather than through `JSONSerialization`, whose output is
/// `NSNumber`s and `NSDictionary`s that must be bridged again on every read. Text in UTF-16 or UTF-32
/// (a byte-order mark, or a zero among the first bytes) is converted to UTF-8 first, and read the same way:
/// handing it to `JSONSerialization` instead gave other values for the same document (strings lose a
/// U+FEFF, long numbers are a few ulps off, trailing commas pass).
struct JSONReader {
    /// How deep arrays and objects may nest: deeper text is refused, not read by unbounded recursion.
    static let depthLimit = 512

    struct Failure: Error {
        var message: String
        var offset: Int
    }

    /// The value of JSON text.
    /// - Throws: `Failure` naming what was wrong and the byte offset where it was found.
    ///   In UTF-16 or UTF-32 text, the offset counts the bytes of its UTF-8 form.
    /// - Parameter splitThreshold: top-level arrays of at least this many bytes are read on two threads
    ///   (see `splitThreshold`); tests compare both readings.
    static func read(_ data: Data, splitThreshold: Int = splitThreshold) throws(Failure) -> JSONNode {
        if let encoding = wideEncoding(data) {
            guard let text = String(data: data, encoding: encoding) else {
                let name = encoding == .utf32BigEndian || encoding == .utf32LittleEndian ? "UTF-32" : "UTF-16"
                throw Failure(message: "text that is not valid \(name)", offset: 0)
            }
            // A byte-order mark the decoding keeps is U+FEFF here, which the UTF-8 reading skips.
            return try read(utf8: Array(text.utf8), splitThreshold: splitThreshold)
        }
        return try read(utf8: [UInt8](data), splitThreshold: splitThreshold)
    }

    /// The encoding of text that is not UTF-8, from its first bytes (RFC 4627 §3, and byte-order marks).
    private static func wideEncoding(_ data: Data) -> String.Encoding? {
        guard data.count >= 2 else { return nil }
        // Past the end counts as a byte that is not zero.
        func byte(_ i: Int) -> UInt8 { i < data.count ? data[data.startIndex + i] : 1 }
        switch (byte(0), byte(1), byte(2), byte(3)) {
        case (0, 0, 0xFE, 0xFF), (0, 0, 0, _): return .utf32BigEndian
        case (0xFF, 0xFE, 0, 0), (_, 0, 0, 0): return .utf32LittleEndian
        case (0xFE, 0xFF, _, _), (0, _, _, _): return .utf16BigEndian
        case (0xFF, 0xFE, _, _), (_, 0, _, _): return .utf16LittleEndian
        default: return nil
        }
    }

    private static func read(utf8 bytes: [UInt8], splitThreshold: Int) throws(Failure) -> JSONNode {
        try bytes.withUnsafeBufferPointer { buffer throws(Failure) in
            var reader = JSONReader(buffer)
            // A UTF-8 byte-order mark is allowed and means nothing.
            if buffer.count >= 3, buffer[0] == 0xEF, buffer[1] == 0xBB, buffer[2] == 0xBF { reader.position = 3 }
            reader.skipWhitespace()
            let value: JSONNode
            if reader.position < buffer.count, buffer.count - reader.position >= splitThreshold, buffer[reader.position] == UInt8(ascii: "["),
                let split = reader.topLevelSplit()
            {
                value = try reader.arrayInTwoHalves(splittingAt: split)
            } else {
                value = try reader.value(depth: 0)
            }
            reader.skipWhitespace()
            guard reader.position == buffer.count else { throw reader.failure("unexpected text after the JSON value") }
            return value
        }
    }

    // MARK: Big arrays

    /// Top-level arrays of at least this many bytes are read in two halves on two threads: an import's
    /// array of a hundred thousand objects took a tenth of the import to read on one.
    static let splitThreshold = 1 << 20

    /// Where the second half of the top-level array starts: just past the first comma between two of its
    /// elements at or after the middle of the text, found by a scan that follows only strings (and their
    /// escapes) and nesting. `nil` when there is none (one huge element) or the text ends first. The
    /// scan trusts nothing: the first half is read by the same code as a single reading, so text that is
    /// not JSON fails there as it would, and a first half that does not end at the split is read again.
    private func topLevelSplit() -> Int? {
        let middle = bytes.count / 2
        var depth = 0
        var inString = false
        var i = position
        while i < bytes.count {
            let byte = bytes[i]
            if inString {
                if byte == UInt8(ascii: "\\") {
                    i += 2
                    continue
                }
                if byte == UInt8(ascii: "\"") { inString = false }
            } else {
                switch byte {
                case UInt8(ascii: "\""): inString = true
                case UInt8(ascii: "["), UInt8(ascii: "{"): depth += 1
                case UInt8(ascii: "]"), UInt8(ascii: "}"):
                    depth -= 1
                    if depth <= 0 { return nil }
                case UInt8(ascii: ","):
                    if depth == 1 && i >= middle { return i + 1 }
                default: break
                }
            }
            i += 1
        }
        return nil
    }

    /// Reads the top-level array at `position` as `value(depth:)` does, its elements from `split` on on
    /// another thread. A failure in the first half is the one thrown, as a single reading would meet it
    /// first; a first half that does not end at `split` (the scan was misled by text that is not JSON)
    /// is read again whole, on this thread.
    private mutating func arrayInTwoHalves(splittingAt split: Int) throws(Failure) -> JSONNode {
        let start = position
        nonisolated(unsafe) var first: Result<[JSONNode]?, Failure> = .success(nil)
        nonisolated(unsafe) var second: Result<(elements: [JSONNode], end: Int), Failure> = .success(([], 0))
        nonisolated(unsafe) let bytes = self.bytes
        nonisolated(unsafe) var reader = self
        DispatchQueue.concurrentPerform(iterations: 2) { half in
            if half == 0 {
                first = Result { () throws(Failure) in
                    reader.position += 1
                    let elements = try reader.elements(depth: 1, stoppingAt: split)
                    return reader.position == split ? elements : nil
                }
            } else {
                var rest = JSONReader(bytes)
                rest.position = split
                second = Result { () throws(Failure) in (try rest.elements(depth: 1, stoppingAt: nil), rest.position) }
            }
        }
        guard var elements = try first.get() else {
            position = start
            return try value(depth: 0)
        }
        self = reader
        let (rest, end) = try second.get()
        elements.append(contentsOf: rest)
        position = end
        return .array(elements)
    }

    /// The elements of an array from the start of one, up to past the array's `]` or up to `stop` (just
    /// past a comma).
    private mutating func elements(depth: Int, stoppingAt stop: Int?) throws(Failure) -> [JSONNode] {
        var elements: [JSONNode] = []
        while true {
            skipWhitespace()
            elements.append(try value(depth: depth))
            skipWhitespace()
            guard position < bytes.count else { throw failure("unexpected end of text in an array") }
            switch bytes[position] {
            case UInt8(ascii: ","):
                position += 1
                if position == stop { return elements }
            case UInt8(ascii: "]"):
                position += 1
                return elements
            default: throw failure("expected ',' or ']' in an array")
            }
        }
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0
    /// Scratch space for strings with escapes.
    private var scratch: [UInt8] = []
    /// The key last read at each member position of an object (up to `recentKeyLimit`), with where its
    /// text lies in the input. The objects of an array mostly repeat their keys in order, and a key
    /// whose bytes match the one before at its position is taken again instead of being made anew:
    /// making (and validating) the key strings was a third of reading an array of flat objects.
    private var recentKeys: [(start: Int, count: Int, text: String)] = []
    private static let recentKeyLimit = 64

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    private func failure(_ message: String) -> Failure {
        Failure(message: message, offset: position)
    }

    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    private mutating func value(depth: Int) throws(Failure) -> JSONNode {
        guard position < bytes.count else { throw failure("unexpected end of text") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw failure("unexpected character '\(Character(Unicode.Scalar(bytes[position])))'")
        }
    }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        let count = word.utf8CodeUnitCount
        guard position + count <= bytes.count else { throw failure("unexpected end of text") }
        let start = word.utf8Start
        for i in 0..<count where bytes[position + i] != start[i] { throw failure("unknown literal") }
        position += count
    }

    private mutating func object(depth: Int) throws(Failure) -> JSONNode {
        guard depth <= Self.depthLimit else { throw failure("arrays and objects nested deeper than \(Self.depthLimit)") }
        position += 1
        var members: [(key: String, value: JSONNode)] = []
        // Objects from web services are mostly small: growing from empty copied each one three times.
        members.reserveCapacity(8)
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
            position += 1
            return .object(JSONObject(members))
        }
        while true {
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw failure("expected a key in quotes") }
            let key = try key(at: members.count)
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { throw failure("expected ':' after a key") }
            position += 1
            skipWhitespace()
            members.append((key, try value(depth: depth)))
            skipWhitespace()
            guard position < bytes.count else { throw failure("unexpected end of text in an object") }
            switch bytes[position] {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"): position += 1; return .object(JSONObject(members))
            default: throw failure("expected ',' or '}' in an object")
            }
        }
    }

    private mutating func array(depth: Int) throws(Failure) -> JSONNode {
        guard depth <= Self.depthLimit else { throw failure("arrays and objects nested deeper than \(Self.depthLimit)") }
        position += 1
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
            position += 1
            return .array([])
        }
        return .array(try elements(depth: depth, stoppingAt: nil))
    }

    /// The key of the member at position `k` of an object, at its opening quote: the key read at that
    /// position before when the text is the same (see `recentKeys`), else read as any string.
    private mutating func key(at k: Int) throws(Failure) -> String {
        let start = position + 1
        if k < recentKeys.count {
            let recent = recentKeys[k]
            let end = start + recent.count
            if end < bytes.count, bytes[end] == UInt8(ascii: "\""),
                memcmp(bytes.baseAddress! + start, bytes.baseAddress! + recent.start, recent.count) == 0
            {
                position = end + 1
                return recent.text
            }
        }
        let text = try string()
        // Remembered only when it had no escape, so that its text is its bytes (an escape is longer
        // than what it stands for).
        let count = position - 1 - start
        if text.utf8.count == count && k < Self.recentKeyLimit {
            if k < recentKeys.count {
                recentKeys[k] = (start, count, text)
            } else if k == recentKeys.count {
                recentKeys.append((start, count, text))
            }
        }
        return text
    }

    private mutating func string() throws(Failure) -> String {
        position += 1
        let start = position
        // Most strings have no escape: one scan, then one copy, validated only when not ASCII (ASCII is
        // valid UTF-8 by construction).
        var highBits: UInt8 = 0
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<position])
                let text = highBits < 0x80 ? String(decoding: slice, as: UTF8.self) : try utf8(slice)
                position += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw failure("a control character inside a string") }
            highBits |= byte
            position += 1
        }
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<position]))
        while position < bytes.count {
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                return try scratch.withUnsafeBufferPointer { buffer throws(Failure) in try utf8(buffer) }
            case UInt8(ascii: "\\"):
                position += 1
                guard position < bytes.count else { throw failure("unexpected end of text in an escape") }
                let escaped = bytes[position]
                position += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(escaped)
                case UInt8(ascii: "b"): scratch.append(0x08)
                case UInt8(ascii: "f"): scratch.append(0x0C)
                case UInt8(ascii: "n"): scratch.append(0x0A)
                case UInt8(ascii: "r"): scratch.append(0x0D)
                case UInt8(ascii: "t"): scratch.append(0x09)
                case UInt8(ascii: "u"): try unicodeEscape()
                // At the backslash.
                default: throw Failure(message: "unknown escape '\\\(Character(Unicode.Scalar(escaped)))'", offset: position - 2)
                }
            default:
                if byte < 0x20 { throw failure("a control character inside a string") }
                scratch.append(byte)
                position += 1
            }
        }
        throw failure("unexpected end of text in a string")
    }

    /// A `\uXXXX` escape (the `\u` read), with a surrogate pair's second half when there is one.
    private mutating func unicodeEscape() throws(Failure) {
        var scalar = try hex4()
        if (0xD800...0xDBFF).contains(scalar) {
            guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") else {
                throw failure("a lone surrogate in a \\u escape")
            }
            position += 2
            let low = try hex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw failure("a lone surrogate in a \\u escape") }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(scalar) {
            throw failure("a lone surrogate in a \\u escape")
        }
        guard let unicode = Unicode.Scalar(scalar) else { throw failure("an invalid \\u escape") }
        scratch.append(contentsOf: UTF8.encode(unicode)!)
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard position + 4 <= bytes.count else { throw failure("unexpected end of text in a \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("a \\u escape needs four hexadecimal digits")
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }

    private func utf8(_ buffer: UnsafeBufferPointer<UInt8>) throws(Failure) -> String {
        guard let text = String(validating: buffer, as: UTF8.self) else { throw failure("a string that is not valid UTF-8") }
        return text
    }

    private mutating func number() throws(Failure) -> JSONNode {
        let start = position
        var isInteger = true
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        guard position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) else {
            throw failure("a number needs a digit")
        }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
        } else {
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) { position += 1 }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            let digits = position
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) { position += 1 }
            guard position > digits else { throw failure("a number needs digits after '.'") }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            isInteger = false
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") { position += 1 }
            let digits = position
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) { position += 1 }
            guard position > digits else { throw failure("a number needs digits in its exponent") }
        }
        let text = UnsafeBufferPointer(rebasing: bytes[start..<position])
        if isInteger, let value = Self.integer(text) { return .int(value) }
        // The grammar was checked above, so Swift's parser sees a well-formed number.
        // Swift's parser gives infinity for a number beyond Double's range; Foundation refuses it, and so do we.
        guard let value = Double(String(decoding: text, as: UTF8.self)), value.isFinite else {
            throw Failure(message: "a number beyond the range of Double", offset: start)
        }
        return .double(value)
    }

    /// A decimal integer that fits in 64 bits, or nil.
    private static func integer(_ text: UnsafeBufferPointer<UInt8>) -> Int64? {
        var index = 0
        let negative = text[0] == UInt8(ascii: "-")
        if negative { index = 1 }
        var magnitude: UInt64 = 0
        while index < text.count {
            let (times10, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(UInt64(text[index] - UInt8(ascii: "0")))
            if o1 || o2 { return nil }
            magnitude = sum
            index += 1
        }
        if negative {
            return magnitude <= UInt64(Int64.max) + 1 ? Int64(truncatingIfNeeded: 0 &- magnitude) : nil
        }
        return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
    }
}
