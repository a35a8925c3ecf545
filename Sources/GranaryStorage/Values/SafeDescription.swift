import Foundation

/// The text an error message shows for a value that came from outside: a value set on an object or
/// passed to a batch request, a predicate argument, a stored value, an error a caller's code threw.
///
/// `String(describing:)` is not safe for such values. Foundation's `Date.description` traps on a date
/// whose time interval is NaN, and so does the description of every optional, collection, tuple or
/// struct that holds one; and a value of a million elements or characters would make a message of
/// megabytes. This walks optionals, collections and tuples itself, writes dates it cannot trust
/// Foundation with by their time interval, describes a struct or enum through its stored properties
/// when they hold such a date, and stops after `maximumLength` characters with a note of what was
/// left out. Every error message that interpolates a user value goes through it.
package enum SafeDescription {
    /// How many characters a description keeps before it is cut short.
    package static let maximumLength = 256
    /// How many elements of a collection are written before the rest is counted.
    static let maximumElements = 16
    /// How deeply nested collections, tuples and properties are written, and how many values are
    /// looked through to tell whether a struct or enum holds a date Foundation would trap on.
    static let maximumNesting = 8
    static let inspectionBudget = 256

    /// The value, described without trapping and cut to `maximumLength` characters.
    package static func of(_ value: Any?) -> String {
        var writer = Writer()
        writer.write(value, nesting: 0)
        return writer.finished()
    }

    /// A date as Foundation describes it (`2001-01-01 00:00:00 +0000`) within ±250 billion seconds
    /// of 2001 (about years −5900 to 9900), else by its time interval
    /// (`Date(timeIntervalSinceReferenceDate: nan)`): Foundation's description traps on NaN and reads
    /// "<description unavailable>" far from 2001.
    package static func of(date: Date) -> String {
        isDescribable(date) ? date.description : interval(of: date)
    }

    /// A date in ISO 8601 (`2001-01-01T00:00:00Z`) within the range `of(date:)` trusts Foundation
    /// with, else by its time interval: the ISO formatter writes NaN and distant times as years
    /// -4712 or 506713.
    package static func iso8601(_ date: Date) -> String {
        isDescribable(date) ? date.formatted(.iso8601) : interval(of: date)
    }

    private static func isDescribable(_ date: Date) -> Bool {
        let t = date.timeIntervalSinceReferenceDate
        return t.isFinite && abs(t) < 250e9
    }

    private static func interval(of date: Date) -> String {
        "Date(timeIntervalSinceReferenceDate: \(date.timeIntervalSinceReferenceDate))"
    }

    /// Whether Foundation could trap describing `value`, or the value is too big to tell within the
    /// budget: a date it cannot describe somewhere among the value's stored properties.
    static func mayTrap(_ value: Any, budget: inout Int) -> Bool {
        budget -= 1
        if budget < 0 { return true }
        if let date = value as? Date { return !isDescribable(date) }
        if value is String || value is Substring || value is any Numeric || value is Bool { return false }
        var mirror: Mirror? = Mirror(reflecting: value)
        while let current = mirror {
            for child in current.children where mayTrap(child.value, budget: &budget) { return true }
            mirror = current.superclassMirror
        }
        return false
    }

    /// Builds the description into one string and stops adding once it is long enough.
    private struct Writer {
        private var out = ""
        private var length = 0
        private var isCut = false

        private var isFull: Bool { length >= SafeDescription.maximumLength }

        mutating func append(_ text: some StringProtocol) {
            guard !isFull else {
                isCut = isCut || !text.isEmpty
                return
            }
            let room = SafeDescription.maximumLength - length
            let head = text.prefix(room + 1)
            if head.count > room {
                out += head.prefix(room)
                length += room
                isCut = true
            } else {
                out += head
                length += head.count
            }
        }

        func finished() -> String {
            isCut ? out + "… (cut at \(SafeDescription.maximumLength) characters)" : out
        }

        mutating func write(_ value: Any?, nesting: Int) {
            guard let value else { return append("nil") }
            guard !isFull else { return append("…") }
            switch value {
            case let date as Date: return append(SafeDescription.of(date: date))
            case let date as NSDate:
                return append(SafeDescription.of(date: Date(timeIntervalSinceReferenceDate: date.timeIntervalSinceReferenceDate)))
            case let text as String: return append(text)
            case let text as Substring: return append(text)
            case let data as Data: return append("\(data.count) bytes")
            case .string(let text) as Value:
                append("\"")
                append(text)
                return append("\"")
            case .references(let references) as Value: return write(references, nesting: nesting)
            case let stored as Value: return append(stored.description)
            case let error as NSError where type(of: value) is NSError.Type:
                // Its description includes the user info, which may hold anything.
                append("\(error.domain) error \(error.code)")
                if !error.userInfo.isEmpty {
                    append(" ")
                    write(error.userInfo, nesting: nesting + 1)
                }
                return
            default: break
            }
            let mirror = Mirror(reflecting: value)
            switch mirror.displayStyle {
            case .optional:
                write(mirror.children.first?.value, nesting: nesting)
            case .collection, .set:
                elements(mirror, nesting: nesting, open: "[", close: "]") { writer, element, nesting in writer.write(element, nesting: nesting) }
            case .dictionary:
                guard !mirror.children.isEmpty else { return append("[:]") }
                elements(mirror, nesting: nesting, open: "[", close: "]") { writer, pair, nesting in
                    let parts = Array(Mirror(reflecting: pair).children)
                    writer.write(parts.first?.value, nesting: nesting)
                    writer.append(": ")
                    writer.write(parts.dropFirst().first?.value, nesting: nesting)
                }
            case .tuple:
                properties(mirror, nesting: nesting, prefix: "")
            case .class:
                // Objects describe themselves, usually by identity; a managed object by its ID.
                append(String(describing: value))
            default:
                var budget = SafeDescription.inspectionBudget
                if !SafeDescription.mayTrap(value, budget: &budget) {
                    append(String(describing: value))
                } else if mirror.displayStyle == .enum, let payload = mirror.children.first {
                    append("\(type(of: value)).\(payload.label ?? "?")(")
                    write(payload.value, nesting: nesting + 1)
                    append(")")
                } else {
                    properties(mirror, nesting: nesting, prefix: "\(type(of: value))")
                }
            }
        }

        /// `open` the first elements, separated by commas, and a count of the rest, `close`.
        private mutating func elements(_ mirror: Mirror, nesting: Int, open: String, close: String,
                                       _ element: (inout Writer, Any, Int) -> Void) {
            guard nesting < SafeDescription.maximumNesting else { return append(open + "…" + close) }
            append(open)
            var count = 0
            for child in mirror.children {
                if count == SafeDescription.maximumElements {
                    append(", … (\(mirror.children.count) elements in all)")
                    break
                }
                if count > 0 { append(", ") }
                element(&self, child.value, nesting + 1)
                count += 1
                if isFull { break }
            }
            append(close)
        }

        /// `prefix(label: value, …)`, for tuples and for structs whose own description could trap.
        private mutating func properties(_ mirror: Mirror, nesting: Int, prefix: String) {
            guard nesting < SafeDescription.maximumNesting else { return append(prefix + "(…)") }
            append(prefix + "(")
            for (i, child) in mirror.children.enumerated() {
                if i > 0 { append(", ") }
                if let label = child.label, !label.hasPrefix(".") { append(label + ": ") }
                write(child.value, nesting: nesting + 1)
                if isFull { break }
            }
            append(")")
        }
    }
}
