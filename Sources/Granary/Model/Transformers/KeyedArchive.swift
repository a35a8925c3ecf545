import Foundation

/// The keyed archive of an `ArchivedValue`: the bytes `NSKeyedArchiver` writes for the equivalent
/// Foundation objects (a binary property list with `$archiver`, `$version`, `$top` and `$objects`), so a
/// value stored by Granary is what Core Data's `NSSecureUnarchiveFromData` transformer would store.
///
/// Reading accepts only the classes that transformer allows — `NSString`, `NSNumber`, `NSDate`, `NSData`,
/// `NSArray`, `NSDictionary`, `NSSet`, `NSURL`, `NSUUID` and their mutable variants — as its secure
/// unarchiving does. Granary reads the archive itself: on Linux, `NSKeyedUnarchiver` stops the process
/// with a fatal error when an archive names a class it does not allow, and a stored value must never be
/// able to do that. Writing avoids `NSKeyedArchiver` too: on Linux it merges equal numbers of different
/// kinds (`true` and `1`) into one archived object, so `[true, 1]` would read back as `[true, true]`.
enum KeyedArchive {
    /// The name Granary gives the transformable type of an attribute whose values are archived this way:
    /// a transformable with no custom class (or a property-list class) and Core Data's default transformer.
    static let transformerName = "NSSecureUnarchiveFromData"

    /// Foundation's transformer names that archive with `NSKeyedArchiver`; none of them says anything about
    /// the value's type.
    static let archivingTransformerNames: Set<String> = [
        "NSSecureUnarchiveFromData", "NSSecureUnarchiveFromDataTransformer", "NSKeyedUnarchiveFromData",
        "NSUnarchiveFromData", "NSSecureUnarchiveFromDataTransformerName", "NSKeyedUnarchiveFromDataTransformerName",
    ]

    /// The most archived objects one value may expand to, counting shared objects once per use: an archive
    /// that shares one array many times over is small on disk but not in memory.
    static let maxExpandedObjects = 1_000_000

    /// The deepest nesting of collections read or written: deep enough for any real value, shallow enough
    /// that reading a hostile archive cannot exhaust a thread's stack. Writing checks both bounds, so that
    /// nothing is stored that could not be read back.
    static let maxNesting = 100

    // MARK: Writing

    /// The archive of `value`.
    /// - Throws: `ArchivedValue.Problem` when the value nests deeper than `maxNesting` or holds more than
    ///   `maxExpandedObjects` objects: the reader would refuse it.
    static func archive(_ value: ArchivedValue) throws(ArchivedValue.Problem) -> [UInt8] {
        var budget = maxExpandedObjects
        try check(value, nesting: 0, budget: &budget)
        return unchecked(value)
    }

    private static func check(_ value: ArchivedValue, nesting: Int, budget: inout Int) throws(ArchivedValue.Problem) {
        budget -= 1
        guard budget >= 0 else { throw ArchivedValue.Problem(reason: "the value holds more than \(maxExpandedObjects) objects") }
        switch value {
        case .array(let items):
            guard nesting < maxNesting else { throw ArchivedValue.Problem(reason: "collections nest deeper than \(maxNesting) levels") }
            for item in items { try check(item, nesting: nesting + 1, budget: &budget) }
        case .dictionary(let entries):
            guard nesting < maxNesting else { throw ArchivedValue.Problem(reason: "collections nest deeper than \(maxNesting) levels") }
            for (key, item) in entries {
                try check(key, nesting: nesting + 1, budget: &budget)
                try check(item, nesting: nesting + 1, budget: &budget)
            }
        case .set(let members):
            budget -= members.count
            guard budget >= 0 else { throw ArchivedValue.Problem(reason: "the value holds more than \(maxExpandedObjects) objects") }
        default:
            break
        }
    }

    private static func unchecked(_ value: ArchivedValue) -> [UInt8] {
        var writer = Writer()
        let root = writer.add(value)
        let top: BinaryPropertyList = .dictionary([
            "$archiver": .string("NSKeyedArchiver"),
            "$version": .int(100_000),
            "$top": .dictionary(["root": .uid(UInt64(root))]),
            "$objects": .array(writer.objects),
        ])
        return top.bytes()
    }

    private struct Writer {
        var objects: [BinaryPropertyList] = [.string("$null")]
        var classes: [String: Int] = [:]

        mutating func add(_ value: ArchivedValue) -> Int {
            switch value {
            case .string(let s): return append(.string(s))
            case .int(let i): return append(.int(i))
            case .double(let d): return append(.real(d))
            case .bool(let b): return append(.bool(b))
            case .data(let d): return append(.data(Array(d)))
            case .date(let d):
                return object("NSDate", ["NS.time": .real(d.timeIntervalSinceReferenceDate)])
            case .url(let u):
                let relative = append(.string(u.absoluteString))
                return object("NSURL", ["NS.base": .uid(0), "NS.relative": .uid(UInt64(relative))])
            case .uuid(let u):
                let bytes = withUnsafeBytes(of: u.uuid) { Array($0) }
                return object("NSUUID", ["NS.uuidbytes": .data(bytes)])
            case .array(let items):
                let refs = items.map { BinaryPropertyList.uid(UInt64(add($0))) }
                return object("NSArray", ["NS.objects": .array(refs)])
            case .set(let members):
                // Sorted, so equal sets archive to equal bytes.
                let refs = Self.sorted(members).map { BinaryPropertyList.uid(UInt64(add($0))) }
                return object("NSSet", ["NS.objects": .array(refs)])
            case .dictionary(let entries):
                var keys: [BinaryPropertyList] = []
                var values: [BinaryPropertyList] = []
                for key in Self.sorted(entries.keys) {
                    guard let item = entries[key] else { continue }
                    keys.append(.uid(UInt64(add(key))))
                    values.append(.uid(UInt64(add(item))))
                }
                return object("NSDictionary", ["NS.keys": .array(keys), "NS.objects": .array(values)])
            }
        }

        /// Set members or dictionary keys (scalars) in a fixed order, each one's key computed once.
        private static func sorted(_ values: some Collection<ArchivedValue>) -> [ArchivedValue] {
            values.map { (sortKey($0), $0) }.sorted { $0.0 < $1.0 }.map(\.1)
        }

        /// A text that orders scalars and tells apart any two that are not equal.
        private static func sortKey(_ value: ArchivedValue) -> String {
            switch value {
            case .string(let s): return "s" + s
            case .int(let i): return "i\(i)"
            case .double(let d): return "d\(d.bitPattern)"
            case .bool(let b): return b ? "b1" : "b0"
            case .date(let d): return "t\(d.timeIntervalSinceReferenceDate.bitPattern)"
            case .data(let d): return "x" + d.map { String($0, radix: 16) }.joined(separator: ",")
            case .url(let u): return "u" + u.absoluteString
            case .uuid(let u): return "g" + u.uuidString
            case .array, .dictionary, .set: return "c" + String(describing: value)  // never a member or key
            }
        }

        private mutating func append(_ object: BinaryPropertyList) -> Int {
            objects.append(object)
            return objects.count - 1
        }

        private mutating func object(_ className: String, _ fields: [String: BinaryPropertyList]) -> Int {
            var fields = fields
            fields["$class"] = .uid(UInt64(classReference(className)))
            return append(.dictionary(fields))
        }

        private mutating func classReference(_ name: String) -> Int {
            if let known = classes[name] { return known }
            let index = append(.dictionary(["$classname": .string(name), "$classes": .array([.string(name), .string("NSObject")])]))
            classes[name] = index
            return index
        }
    }

    // MARK: Reading

    /// The value archived in `bytes`.
    /// - Throws: `ArchivedValue.Problem` naming what is wrong: not a binary property list, not a keyed
    ///   archive, a class the default transformer does not allow, a damaged object, or a set or dictionary
    ///   whose members Swift cannot hold as one type.
    static func unarchive(_ bytes: [UInt8]) throws(ArchivedValue.Problem) -> ArchivedValue {
        let plist: BinaryPropertyList
        do {
            plist = try BinaryPropertyList.read(bytes)
        } catch {
            throw ArchivedValue.Problem(reason: "not a keyed archive: \(error.reason)")
        }
        guard case .dictionary(let top) = plist, case .string(let archiver)? = top["$archiver"], archiver == "NSKeyedArchiver",
            case .array(let objects)? = top["$objects"], case .dictionary(let roots)? = top["$top"],
            case .uid(let root)? = roots["root"]
        else {
            throw ArchivedValue.Problem(reason: "not a keyed archive: no $archiver, $objects or $top.root")
        }
        var reader = Reader(objects: objects)
        return try reader.value(root, depth: 0)
    }

    private struct Reader {
        let objects: [BinaryPropertyList]
        var decoded: [UInt64: ArchivedValue] = [:]
        /// How many objects each decoded object expands to, counting a shared member once per use: the
        /// size of the Swift value it becomes.
        var sizes: [UInt64: Int] = [:]
        /// How deep collections nest inside each decoded object: a shared object reached again deeper down
        /// must still fit within `maxNesting` where it is used.
        var heights: [UInt64: Int] = [:]
        var inProgress: Set<UInt64> = []

        typealias Problem = ArchivedValue.Problem

        mutating func value(_ uid: UInt64, depth: Int) throws(Problem) -> ArchivedValue {
            if let done = decoded[uid] {
                guard depth + (heights[uid] ?? 0) <= KeyedArchive.maxNesting else { throw tooDeep }
                return done
            }
            guard depth <= KeyedArchive.maxNesting else { throw tooDeep }
            guard uid > 0, uid < UInt64(objects.count) else {
                throw Problem(reason: uid == 0 ? "a nil where a value is needed" : "object reference \(uid) is out of range")
            }
            guard inProgress.insert(uid).inserted else { throw Problem(reason: "object \(uid) contains itself") }
            defer { inProgress.remove(uid) }
            var size = 1
            var height = 0
            let result = try decode(objects[Int(uid)], depth: depth, size: &size, height: &height)
            guard size <= KeyedArchive.maxExpandedObjects else {
                throw Problem(reason: "the archive expands to more than \(KeyedArchive.maxExpandedObjects) objects")
            }
            guard depth + height <= KeyedArchive.maxNesting else { throw tooDeep }
            decoded[uid] = result
            sizes[uid] = size
            heights[uid] = height
            return result
        }

        private var tooDeep: Problem { Problem(reason: "collections nest deeper than \(KeyedArchive.maxNesting) levels") }

        /// The value of one archived object; `size` grows by the sizes of the members it holds, and
        /// `height` becomes one more than the tallest member's for a collection.
        private mutating func decode(_ object: BinaryPropertyList, depth: Int, size: inout Int, height: inout Int) throws(Problem) -> ArchivedValue {
            switch object {
            case .string(let s): return .string(s)
            case .int(let i): return .int(i)
            case .real(let d): return .double(d)
            case .bool(let b): return .bool(b)
            case .data(let d): return .data(Data(d))
            case .date, .uid, .array:
                throw Problem(reason: "an archived object that is a bare \(Self.kind(object))")
            case .dictionary(let fields):
                guard case .uid(let classUID)? = fields["$class"] else {
                    throw Problem(reason: "an archived object without a $class")
                }
                let className = try self.className(classUID)
                switch className {
                case "NSString", "NSMutableString":
                    return .string(try inline(fields["NS.string"], "NS.string", className) { object in
                        if case .string(let text) = object { return text }
                        return nil
                    })
                case "NSDate":
                    switch fields["NS.time"] {
                    case .real(let seconds)?: return .date(Date(timeIntervalSinceReferenceDate: seconds))
                    case .int(let seconds)?: return .date(Date(timeIntervalSinceReferenceDate: Double(seconds)))
                    default: throw missing("NS.time", className)
                    }
                case "NSData", "NSMutableData":
                    return .data(Data(try inline(fields["NS.data"] ?? fields["NS.bytes"], "NS.data", className) { object in
                        if case .data(let bytes) = object { return bytes }
                        return nil
                    }))
                case "NSUUID":
                    guard case .data(let bytes)? = fields["NS.uuidbytes"], bytes.count == 16 else { throw missing("NS.uuidbytes", className) }
                    let uuid = UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
                    return .uuid(uuid)
                case "NSURL":
                    return .url(try url(fields, depth: depth))
                case "NSArray", "NSMutableArray":
                    return .array(try members(fields["NS.objects"], "NS.objects", depth: depth, size: &size, height: &height))
                case "NSSet", "NSMutableSet":
                    let items = try members(fields["NS.objects"], "NS.objects", depth: depth, size: &size, height: &height)
                    var set = Set<ArchivedValue>()
                    for item in items where !set.insert(try scalar(item, "set member")).inserted {
                        throw Problem(reason: "a set holds the same member twice")
                    }
                    try checkOneKind(set, "set members")
                    return .set(set)
                case "NSDictionary", "NSMutableDictionary":
                    let keys = try members(fields["NS.keys"], "NS.keys", depth: depth, size: &size, height: &height)
                    let values = try members(fields["NS.objects"], "NS.objects", depth: depth, size: &size, height: &height)
                    guard keys.count == values.count else { throw Problem(reason: "a dictionary with \(keys.count) keys and \(values.count) values") }
                    var entries: [ArchivedValue: ArchivedValue] = [:]
                    for (key, item) in zip(keys, values) where entries.updateValue(item, forKey: try scalar(key, "dictionary key")) != nil {
                        throw Problem(reason: "a dictionary holds the same key twice")
                    }
                    try checkOneKind(Set(entries.keys), "dictionary keys")
                    return .dictionary(entries)
                default:
                    throw Problem(reason: "class \(className) is not one the default transformer allows "
                        + "(NSString, NSNumber, NSDate, NSData, NSArray, NSDictionary, NSSet, NSURL, NSUUID)")
                }
            }
        }

        private func className(_ uid: UInt64) throws(Problem) -> String {
            guard uid < UInt64(objects.count), case .dictionary(let info) = objects[Int(uid)],
                case .string(let name)? = info["$classname"] else {
                throw Problem(reason: "an archived object whose $class is not a class description")
            }
            return name
        }

        /// A mutable string's text or mutable data's bytes, which archivers write either in the field itself
        /// or as a reference to a plain object.
        private func inline<T>(_ field: BinaryPropertyList?, _ key: String, _ className: String,
                               _ extract: (BinaryPropertyList) -> T?) throws(Problem) -> T {
            var object = field
            if case .uid(let uid)? = field, uid < UInt64(objects.count) { object = objects[Int(uid)] }
            guard let object, let value = extract(object) else { throw missing(key, className) }
            return value
        }

        private mutating func url(_ fields: [String: BinaryPropertyList], depth: Int) throws(Problem) -> URL {
            guard case .uid(let relativeUID)? = fields["NS.relative"], relativeUID > 0, relativeUID < UInt64(objects.count) else {
                throw missing("NS.relative", "NSURL")
            }
            guard case .string(let relative) = try value(relativeUID, depth: depth) else {
                throw Problem(reason: "an NSURL whose NS.relative is not a string")
            }
            var base: URL?
            if case .uid(let baseUID)? = fields["NS.base"], baseUID != 0 {
                guard case .url(let baseURL) = try value(baseUID, depth: depth + 1) else {
                    throw Problem(reason: "an NSURL whose NS.base is not a URL")
                }
                base = baseURL
            }
            guard let url = URL(string: relative, relativeTo: base) else { throw Problem(reason: "an NSURL that is not a valid URL") }
            // Granary surfaces absolute URLs: the base is folded in, as `absoluteURL` would.
            return base == nil ? url : url.absoluteURL
        }

        private mutating func members(_ field: BinaryPropertyList?, _ key: String, depth: Int, size: inout Int,
                                      height: inout Int) throws(Problem) -> [ArchivedValue] {
            guard case .array(let refs)? = field else { throw Problem(reason: "a collection without its \(key) array") }
            var items: [ArchivedValue] = []
            items.reserveCapacity(refs.count)
            for ref in refs {
                guard case .uid(let uid) = ref else { throw Problem(reason: "a collection member that is not an object reference") }
                items.append(try value(uid, depth: depth + 1))
                // Capped as it goes, so that the sum cannot overflow.
                size = min(size + (sizes[uid] ?? 1), KeyedArchive.maxExpandedObjects + 1)
                height = max(height, 1 + (heights[uid] ?? 0))
            }
            // An empty collection is still one level.
            height = max(height, 1)
            return items
        }

        private func scalar(_ value: ArchivedValue, _ role: String) throws(Problem) -> ArchivedValue {
            switch value {
            case .array, .dictionary, .set:
                throw Problem(reason: "a \(role) that is a collection, which Swift cannot hold as a hashable value")
            default:
                return value
            }
        }

        private func checkOneKind(_ values: Set<ArchivedValue>, _ role: String) throws(Problem) {
            let kinds = Set(values.compactMap(\.scalarKind))
            guard kinds.count <= 1 else { throw Problem(reason: "\(role) of several types (\(kinds.sorted().joined(separator: ", ")))") }
        }

        private func missing(_ key: String, _ className: String) -> Problem {
            Problem(reason: "an \(className) without a valid \(key)")
        }

        private static func kind(_ object: BinaryPropertyList) -> String {
            switch object {
            case .date: return "date"
            case .uid: return "reference"
            case .array: return "array"
            default: return "value"
            }
        }
    }
}
