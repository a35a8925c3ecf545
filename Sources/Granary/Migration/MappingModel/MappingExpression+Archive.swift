import Foundation

extension MappingExpression {
    /// Reads an expression as Xcode archives it in a mapping model (`valueexpressiondata`): a keyed
    /// archive of `NSExpression` objects. Read: `NSFunctionExpression` and its `NSKeyPathExpression`
    /// subclass (`$source.name` is `valueForKeyPath:` on the variable `source`), `NSVariableExpression`,
    /// `NSConstantValueExpression` with a string, number, Boolean or nil, and `NSKeyPathSpecifierExpression`.
    /// - Throws: `ArchiveProblem` naming the class or field it cannot read.
    init(archived bytes: [UInt8]) throws(ArchiveProblem) {
        let plist: BinaryPropertyList
        do { plist = try BinaryPropertyList.read(bytes) } catch { throw ArchiveProblem(reason: "not a binary property list: \(error.reason)") }
        guard case .dictionary(let top) = plist, case .array(let objects)? = top["$objects"],
              case .dictionary(let roots)? = top["$top"], case .uid(let root)? = roots["root"] else {
            throw ArchiveProblem(reason: "not a keyed archive (no $objects or $top.root)")
        }
        var reader = ArchiveReader(objects: objects)
        self = try reader.expression(root, depth: 0)
    }

    /// Why an archived expression cannot be read.
    struct ArchiveProblem: Error, Sendable {
        let reason: String
    }

    private struct ArchiveReader {
        let objects: [BinaryPropertyList]
        static let maxDepth = 32

        func object(_ uid: UInt64) throws(ArchiveProblem) -> BinaryPropertyList {
            guard uid < UInt64(objects.count) else { throw ArchiveProblem(reason: "object reference \(uid) is out of range") }
            return objects[Int(uid)]
        }

        func className(of fields: [String: BinaryPropertyList]) throws(ArchiveProblem) -> String {
            guard case .uid(let uid)? = fields["$class"], case .dictionary(let info) = try object(uid),
                  case .string(let name)? = info["$classname"] else {
                throw ArchiveProblem(reason: "an archived object without a class")
            }
            return name
        }

        /// A field's plain value: inline, or a reference to a string, number or `NSString` object.
        func scalar(_ field: BinaryPropertyList?) throws(ArchiveProblem) -> BinaryPropertyList? {
            guard var value = field else { return nil }
            if case .uid(let uid) = value {
                if uid == 0 { return nil }
                value = try object(uid)
            }
            if case .dictionary(let fields) = value {
                let name = try className(of: fields)
                guard name == "NSString" || name == "NSMutableString" else { return value }
                return try scalar(fields["NS.string"])
            }
            if case .string("$null") = value { return nil }
            return value
        }

        func string(_ field: BinaryPropertyList?, _ key: String, _ className: String) throws(ArchiveProblem) -> String {
            guard case .string(let text)? = try scalar(field) else { throw ArchiveProblem(reason: "\(className) has no \(key) string") }
            return text
        }

        mutating func expression(_ uid: UInt64, depth: Int) throws(ArchiveProblem) -> MappingExpression {
            guard depth < Self.maxDepth else { throw ArchiveProblem(reason: "expressions nest deeper than \(Self.maxDepth) levels") }
            guard uid != 0, case .dictionary(let fields) = try object(uid) else { throw ArchiveProblem(reason: "an expression that is not an archived object") }
            let name = try className(of: fields)
            switch name {
            case "NSVariableExpression":
                return .variable(try string(fields["NSVariable"], "NSVariable", name), keyPath: [])
            case "NSKeyPathSpecifierExpression":
                return .string(try string(fields["NSKeyPath"], "NSKeyPath", name))
            case "NSConstantValueExpression":
                switch try scalar(fields["NSConstantValue"]) {
                case nil: return .null
                case .string(let s)?: return .string(s)
                case .int(let i)?: return .number(Double(i))
                case .real(let d)?: return .number(d)
                case .bool(let b)?: return .bool(b)
                case .dictionary(let inner)?: throw ArchiveProblem(reason: "a constant of class \(try className(of: inner))")
                default: throw ArchiveProblem(reason: "a constant Granary cannot read")
                }
            case "NSFunctionExpression", "NSKeyPathExpression":
                guard case .uid(let operandUID)? = fields["NSOperand"] else { throw ArchiveProblem(reason: "\(name) has no NSOperand") }
                let operand = try expression(operandUID, depth: depth + 1)
                let selector = try string(fields["NSSelectorName"], "NSSelectorName", name)
                var arguments: [MappingExpression] = []
                if case .uid(let listUID)? = fields["NSArguments"], listUID != 0 {
                    guard case .dictionary(let list) = try object(listUID), case .array(let items)? = list["NS.objects"] else {
                        throw ArchiveProblem(reason: "\(name)'s NSArguments is not an array")
                    }
                    for item in items {
                        guard case .uid(let itemUID) = item else { throw ArchiveProblem(reason: "\(name)'s arguments hold a bare value") }
                        arguments.append(try expression(itemUID, depth: depth + 1))
                    }
                }
                // `$source.a.b` is valueForKeyPath: with the key path as its one argument.
                if selector == "valueForKeyPath:", case .variable(let variable, let path) = operand, arguments.count == 1,
                   case .string(let keyPath) = arguments[0] {
                    return .variable(variable, keyPath: path + keyPath.split(separator: ".").map(String.init))
                }
                return .function(target: operand, selector: selector, arguments: arguments)
            default:
                throw ArchiveProblem(reason: "an expression of class \(name)")
            }
        }
    }
}
