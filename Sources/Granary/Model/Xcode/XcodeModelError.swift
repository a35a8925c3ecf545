/// Why an Xcode model file (`.xcdatamodel` or `.xcdatamodeld`) could not be loaded. Every message starts
/// with the file and line, as a compiler's would, and names the element involved.
///
/// Thrown by `ManagedObjectModel(contentsOf:classes:)` and `XcodeModelBundle(contentsOf:classes:)`.
/// Anything the loader does not understand is an error rather than something skipped, so a model never
/// loads with less in it than the file says. The loader reads on past a problem (skipping the element it
/// is about) to find every other one, so that one run lists everything to fix: a single problem is thrown
/// as itself, several as `.problems`, and `problems` gives the list either way.
public enum XcodeModelError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Where in a model file a problem was found.
    public struct Location: Sendable, Hashable, CustomStringConvertible {
        /// The path of the file (a `contents` file, or the package or bundle directory for problems with
        /// the directory itself).
        public let path: String
        /// The line of the element involved, counted from 1; nil for problems with no line of their own.
        public let line: Int?
        /// The tag of the element involved (`attribute`, `entity`…), if any.
        public let element: String?
        /// The element's `name` attribute, if it has one.
        public let name: String?

        /// A location in `path`, at an element when one is given.
        public init(path: String, line: Int? = nil, element: String? = nil, name: String? = nil) {
            self.path = path
            self.line = line
            self.element = element
            self.name = name
        }

        /// `path:line: <element name="…">`.
        public var description: String {
            var text = path
            if let line { text += ":\(line)" }
            if let element {
                text += ": <\(element)"
                if let name { text += " name=\"\(name)\"" }
                text += ">"
            }
            return text
        }
    }

    /// The file or directory could not be read (missing, not a directory, not UTF-8, permissions).
    case unreadable(Location, reason: String)
    /// The URL is neither an `.xcdatamodel` package nor an `.xcdatamodeld` bundle.
    case notAModel(Location, reason: String)
    /// An `.xcdatamodel` package in Xcode 3's binary format (`elements` and `layout` files, no `contents`),
    /// which Granary does not read: opening the model in a current Xcode and saving it rewrites it as the
    /// XML `contents` file Granary reads.
    case xcode3Format(Location)
    /// The `contents` file is not well-formed XML.
    case malformedXML(Location, reason: String)
    /// An element Xcode does not write inside `parent`, or one this loader does not know.
    case unknownElement(Location, parent: String)
    /// An attribute the element's tag does not have in Xcode's format, or one this loader does not know.
    case unknownAttribute(Location, attribute: String)
    /// An attribute the element needs is absent.
    case missingAttribute(Location, attribute: String)
    /// An attribute whose value cannot be read (an unknown `attributeType`, "maybe" for a YES/NO flag, a
    /// default value that does not parse as the attribute's type).
    case invalidValue(Location, attribute: String, value: String, reason: String)
    /// A Core Data feature Granary does not have: R-tree or expression indexes, composite attributes
    /// (Xcode 15), the Undefined type on a stored attribute.
    case unsupported(Location, feature: String, reason: String)
    /// A key of the `classes` dictionary names a class that no entity of the model represents.
    case unknownClass(Location, className: String)
    /// The entities read fine one by one, but the model they form is invalid; `error` says why and the
    /// location points at the element involved.
    case invalidModel(Location, error: ModelError)
    /// A versioned bundle whose current version cannot be told: no versions, several versions and no
    /// `.xccurrentversion`, or a current version name with no such version.
    case noCurrentVersion(Location, reason: String)
    /// Several problems, in the order found: file by file (a bundle's versions oldest first), each in
    /// document order. Never nested and never fewer than two; read them through `problems`.
    case problems([XcodeModelError])

    /// The problems this error stands for: its list for `.problems`, otherwise the error itself.
    ///
    /// Use it to handle each problem of a file on its own (to show them in an editor, or to look for one
    /// case) without caring whether one or several were found.
    public var problems: [XcodeModelError] {
        if case .problems(let list) = self { return list.flatMap(\.problems) }
        return [self]
    }

    /// The error to throw for `problems`: the problem itself when there is one, `.problems` for several.
    /// `problems` must not be empty.
    static func combining(_ problems: [XcodeModelError]) -> XcodeModelError {
        let flat = problems.flatMap(\.problems)
        precondition(!flat.isEmpty, "combining no problems")
        return flat.count == 1 ? flat[0] : .problems(flat)
    }

    /// Where the problem was found; for `.problems`, where the first one was.
    public var location: Location {
        switch self {
        case .problems(let list):
            return list.first?.location ?? Location(path: "")
        case .xcode3Format(let location):
            return location
        case .unreadable(let location, _), .notAModel(let location, _), .malformedXML(let location, _),
            .unknownElement(let location, _), .unknownAttribute(let location, _), .missingAttribute(let location, _),
            .invalidValue(let location, _, _, _), .unsupported(let location, _, _),
            .unknownClass(let location, _), .invalidModel(let location, _), .noCurrentVersion(let location, _):
            return location
        }
    }

    /// The line of the element involved, when there is one: shorthand for `location.line`.
    public var line: Int? { location.line }

    public var description: String {
        if case .problems(let list) = self {
            return "\(list.count) problems:\n" + list.map(\.description).joined(separator: "\n")
        }
        let prefix = location.description + ": "
        switch self {
        case .unreadable(_, let reason):
            return prefix + "cannot read the model: \(reason)"
        case .notAModel(_, let reason):
            return prefix + "not an Xcode model: \(reason)"
        case .xcode3Format:
            return prefix + "this model is in Xcode 3's binary format (elements and layout files, no contents file), "
                + "which Granary cannot read: open the model in a current Xcode and save it, which rewrites it as the "
                + "XML contents file"
        case .malformedXML(_, let reason):
            return prefix + "malformed XML: \(reason)"
        case .unknownElement(_, let parent):
            return prefix + "unknown element inside <\(parent)>"
        case .unknownAttribute(_, let attribute):
            return prefix + "unknown attribute '\(attribute)'; Granary refuses what it cannot map rather than drop it"
        case .missingAttribute(_, let attribute):
            return prefix + "missing attribute '\(attribute)'"
        case .invalidValue(_, let attribute, let value, let reason):
            return prefix + "\(attribute)=\"\(SafeDescription.of(value))\": \(reason)"
        case .unsupported(_, let feature, let reason):
            return prefix + "\(feature) not supported: \(reason)"
        case .unknownClass(_, let className):
            return prefix + "classes names '\(className)', but no entity of the model has representedClassName "
                + "'\(className)'"
        case .invalidModel(_, let error):
            return prefix + "invalid model: \(error)"
        case .noCurrentVersion(_, let reason):
            return prefix + "no current version: \(reason)"
        case .problems:
            return ""  // Handled above.
        }
    }
}
