import Foundation

/// A property mapping's value expression, in the subset of `NSExpression` format that mapping models
/// use: `$source.name`, `$source.address.city`, constants (`"text"`, `42`, `3.5`, `nil`, `YES`, `NO`),
/// and `FUNCTION(target, "selector:", arguments…)` calls on `$manager` or `$entityPolicy`.
public indirect enum MappingExpression: Sendable, Hashable, CustomStringConvertible {
    /// A variable (`source`, `manager`, `entityPolicy`, `entityMapping`, `propertyMapping`) followed by a
    /// key path, possibly empty.
    case variable(String, keyPath: [String])
    case string(String)
    case number(Double)
    case bool(Bool)
    case null
    /// `FUNCTION(target, "selector", arguments…)`.
    case function(target: MappingExpression, selector: String, arguments: [MappingExpression])

    public var description: String {
        switch self {
        case .variable(let name, let path): return (["$" + name] + path).joined(separator: ".")
        case .string(let s): return "\"\(s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\""))\""
        case .number(let n): return n == n.rounded() && abs(n) < 1e15 ? String(Int64(n)) : String(n)
        case .bool(let b): return b ? "YES" : "NO"
        case .null: return "nil"
        case .function(let target, let selector, let arguments):
            return "FUNCTION(" + ([target.description, MappingExpression.string(selector).description] + arguments.map(\.description))
                .joined(separator: ", ") + ")"
        }
    }

    /// Parses the text of a value expression.
    /// - Throws: `MappingExpression.SyntaxError` naming the offset and what was expected.
    public init(parsing text: String) throws(SyntaxError) {
        var parser = Parser(characters: Array(text))
        let expression = try parser.expression()
        parser.skipSpaces()
        guard parser.index == parser.characters.count else { throw parser.error("unexpected '\(parser.characters[parser.index])' after the expression") }
        self = expression
    }

    /// Why a value expression's text cannot be read.
    public struct SyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
        public let text: String
        public let offset: Int
        public let reason: String
        public var description: String { "cannot read the expression '\(text)' at offset \(offset): \(reason)" }
    }

    private struct Parser {
        let characters: [Character]
        var index = 0

        func error(_ reason: String) -> SyntaxError {
            SyntaxError(text: String(characters), offset: index, reason: reason)
        }

        mutating func skipSpaces() {
            while index < characters.count, characters[index].isWhitespace { index += 1 }
        }

        mutating func identifier() -> String {
            let start = index
            while index < characters.count, characters[index].isLetter || characters[index].isNumber || characters[index] == "_" { index += 1 }
            return String(characters[start..<index])
        }

        mutating func expression() throws(SyntaxError) -> MappingExpression {
            skipSpaces()
            guard index < characters.count else { throw error("an expression is missing") }
            let c = characters[index]
            if c == "$" {
                index += 1
                let name = identifier()
                guard !name.isEmpty else { throw error("a variable name must follow '$'") }
                var path: [String] = []
                while index < characters.count, characters[index] == "." {
                    index += 1
                    let key = identifier()
                    guard !key.isEmpty else { throw error("a key must follow '.'") }
                    path.append(key)
                }
                return .variable(name, keyPath: path)
            }
            if c == "\"" || c == "'" { return .string(try string()) }
            if c.isNumber || c == "-" || c == "+" {
                let start = index
                index += 1
                while index < characters.count, characters[index].isNumber || characters[index] == "." || characters[index] == "e" { index += 1 }
                guard let value = Double(String(characters[start..<index])) else {
                    index = start
                    throw error("not a number")
                }
                return .number(value)
            }
            let start = index
            let word = identifier()
            switch word.uppercased() {
            case "NIL", "NULL": return .null
            case "YES", "TRUE", "TRUEPREDICATE": return .bool(true)
            case "NO", "FALSE", "FALSEPREDICATE": return .bool(false)
            case "FUNCTION":
                skipSpaces()
                guard index < characters.count, characters[index] == "(" else { throw error("'(' must follow FUNCTION") }
                index += 1
                let target = try expression()
                try comma()
                skipSpaces()
                guard index < characters.count, characters[index] == "\"" || characters[index] == "'" else {
                    throw error("FUNCTION's second argument must be a selector in quotes")
                }
                let selector = try string()
                var arguments: [MappingExpression] = []
                skipSpaces()
                while index < characters.count, characters[index] == "," {
                    index += 1
                    arguments.append(try expression())
                    skipSpaces()
                }
                guard index < characters.count, characters[index] == ")" else { throw error("')' or ',' expected") }
                index += 1
                return .function(target: target, selector: selector, arguments: arguments)
            default:
                index = start
                throw error(word.isEmpty ? "unexpected '\(c)'" : "'\(word)' is not supported in a mapping expression (only $variables, constants and FUNCTION)")
            }
        }

        mutating func comma() throws(SyntaxError) {
            skipSpaces()
            guard index < characters.count, characters[index] == "," else { throw error("',' expected") }
            index += 1
        }

        mutating func string() throws(SyntaxError) -> String {
            let quote = characters[index]
            index += 1
            var result = ""
            while index < characters.count {
                let c = characters[index]
                index += 1
                if c == quote { return result }
                if c == "\\", index < characters.count {
                    let next = characters[index]
                    index += 1
                    switch next {
                    case "n": result.append("\n")
                    case "t": result.append("\t")
                    default: result.append(next)
                    }
                } else {
                    result.append(c)
                }
            }
            throw error("the string is not closed")
        }
    }
}
