import Foundation

/// The expression a derived attribute is computed from: the subset of `NSExpression` syntax that Core
/// Data accepts in a derived attribute's `derivationExpression`.
///
/// Forms: a key path to an attribute, through to-one relationships (`name`, `author.name`);
/// `lowercase:(path)`, `uppercase:(path)` and `canonical:(path)` of a string attribute (canonical folds
/// case and diacritics, as `[cd]` comparisons do); `path.@count` of a to-many relationship;
/// `path.@sum.attribute`, `@max`, `@min` and `@avg` over a to-many relationship's objects; and `now()`.
struct DerivationExpression: Sendable, Hashable, CustomStringConvertible {
    enum Function: String, Sendable, Hashable {
        case lowercase, uppercase, canonical
    }

    enum Aggregate: String, Sendable, Hashable {
        case sum, max, min, avg
    }

    enum Form: Sendable, Hashable {
        /// The value at a key path (to-one relationships, then an attribute).
        case keyPath([String])
        /// A string function of the value at a key path.
        case function(Function, [String])
        /// The number of objects of the to-many relationship at the key path.
        case count([String])
        /// An aggregate of an attribute over the objects of the to-many relationship at the key path.
        case aggregate(Aggregate, [String], attribute: String)
        /// The time of the save.
        case now
    }

    let form: Form

    var description: String {
        switch form {
        case .keyPath(let path): return path.joined(separator: ".")
        case .function(let f, let path): return "\(f.rawValue):(\(path.joined(separator: ".")))"
        case .count(let path): return path.joined(separator: ".") + ".@count"
        case .aggregate(let a, let path, let attribute): return path.joined(separator: ".") + ".@\(a.rawValue).\(attribute)"
        case .now: return "now()"
        }
    }

    /// The relationship names an expression goes through first, and the key it ends with; for checking
    /// it against a model and for finding which objects depend on which.
    var path: [String] {
        switch form {
        case .keyPath(let path), .function(_, let path), .count(let path): return path
        case .aggregate(_, let path, _): return path
        case .now: return []
        }
    }

    /// Parses Xcode's text of a derivation.
    ///
    /// - Throws: a message saying what is wrong, for `ModelError.invalidDerivation`.
    init(parsing text: String) throws(DerivationParseFailure) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty { throw DerivationParseFailure("the expression is empty") }
        if trimmed.replacingOccurrences(of: " ", with: "") == "now()" {
            form = .now
            return
        }
        for function in [Function.lowercase, .uppercase, .canonical] {
            let prefix = function.rawValue + ":"
            guard trimmed.hasPrefix(prefix) else { continue }
            var rest = trimmed.dropFirst(prefix.count).trimmingCharacters(in: .whitespaces)
            guard rest.hasPrefix("("), rest.hasSuffix(")") else {
                throw DerivationParseFailure("\(prefix) needs a key path in parentheses, as in \(prefix)(name)")
            }
            rest = String(rest.dropFirst().dropLast())
            let path = try Self.keyPath(rest)
            form = .function(function, path)
            return
        }
        let components = trimmed.split(separator: ".", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        if let at = components.firstIndex(where: { $0.hasPrefix("@") }) {
            let path = try Self.keyPath(components[..<at].joined(separator: "."))
            let operator_ = components[at]
            let after = Array(components[(at + 1)...])
            if operator_ == "@count" {
                guard after.isEmpty else { throw DerivationParseFailure("nothing may follow @count") }
                form = .count(path)
                return
            }
            guard let aggregate = Aggregate(rawValue: String(operator_.dropFirst())) else {
                throw DerivationParseFailure(
                    "\(operator_) is not a supported operator (use @count, @sum, @max, @min or @avg)")
            }
            guard after.count == 1, Self.isName(after[0]) else {
                throw DerivationParseFailure("\(operator_) needs one attribute name after it, as in books.\(operator_).pages")
            }
            form = .aggregate(aggregate, path, attribute: after[0])
            return
        }
        form = .keyPath(try Self.keyPath(trimmed))
    }

    private static func keyPath(_ text: String) throws(DerivationParseFailure) -> [String] {
        let components = text.split(separator: ".", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        for component in components where !isName(component) {
            throw DerivationParseFailure(
                component.isEmpty ? "'\(text)' is not a key path" : "'\(component)' is not a property name (supported: "
                    + "a key path, lowercase:(), uppercase:(), canonical:(), .@count, .@sum/@max/@min/@avg and now())")
        }
        return components
    }

    private static func isName(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, first.properties.isAlphabetic || first == "_" else { return false }
        return text.unicodeScalars.allSatisfy { $0.properties.isAlphabetic || $0.properties.numericType != nil || $0 == "_" }
    }
}

/// Why a derivation expression does not parse.
struct DerivationParseFailure: Error, Sendable {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}
