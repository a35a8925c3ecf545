/// Recognises the names of types whose values Core Data's default transformer archives and Granary's
/// keyed archive reads: the property-list classes (`NSArray`, `NSString`…) and their Swift spellings as
/// Xcode's "Custom Class" field holds them (`[String]`, `[String: Any]`, `Set<UUID>`, `Array<Date>`).
///
/// A transformable attribute whose custom class is one of these, with an archiving transformer or none,
/// stores the same bytes as one with no custom class: the class only told Xcode's code generator what
/// type to declare.
enum PropertyListTypeName {
    private static let scalars: Set<String> = [
        "NSString", "NSMutableString", "NSNumber", "NSDate", "NSData", "NSMutableData", "NSURL", "NSUUID",
        "String", "Substring", "Int", "Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32",
        "Double", "Float", "Bool", "Date", "Data", "URL", "UUID",
    ]
    /// Names that stand for "any property-list value".
    private static let untyped: Set<String> = [
        "NSArray", "NSMutableArray", "NSDictionary", "NSMutableDictionary", "NSSet", "NSMutableSet", "NSObject",
        "Any", "AnyObject", "AnyHashable",
    ]

    /// Whether values of `name` are stored as the default transformer's keyed archive.
    static func isArchived(_ name: String) -> Bool {
        if KeyedArchive.archivingTransformerNames.contains(name) { return true }
        var parser = Parser(text: Array(name.filter { !$0.isWhitespace }))
        return parser.type(depth: 0) && parser.isAtEnd
    }

    /// A recursive-descent reader of the Swift type spellings above, nested at most a few levels.
    private struct Parser {
        let text: [Character]
        var position = 0

        var isAtEnd: Bool { position == text.count }

        mutating func type(depth: Int) -> Bool {
            guard depth < 16 else { return false }
            let matched: Bool
            if eat("[") {
                guard type(depth: depth + 1) else { return false }
                if eat(":") { guard type(depth: depth + 1) else { return false } }
                matched = eat("]")
            } else {
                let name = identifier()
                switch name {
                case "Array", "Set", "NSArray", "NSSet":
                    matched = eat("<") ? (type(depth: depth + 1) && eat(">")) : true
                case "Dictionary", "NSDictionary":
                    matched = eat("<") ? (type(depth: depth + 1) && eat(",") && type(depth: depth + 1) && eat(">")) : true
                default:
                    matched = PropertyListTypeName.scalars.contains(name) || PropertyListTypeName.untyped.contains(name)
                }
            }
            // `String?` inside a collection is how some models spell an optional element.
            _ = eat("?")
            return matched
        }

        private mutating func identifier() -> String {
            var name = ""
            while position < text.count, text[position].isLetter || text[position].isNumber || text[position] == "_" || text[position] == "." {
                name.append(text[position])
                position += 1
            }
            for module in ["Swift.", "Foundation."] where name.hasPrefix(module) { name.removeFirst(module.count) }
            return name
        }

        private mutating func eat(_ character: Character) -> Bool {
            guard position < text.count, text[position] == character else { return false }
            position += 1
            return true
        }
    }
}
