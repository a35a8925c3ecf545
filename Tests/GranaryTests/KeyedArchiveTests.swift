import Foundation
import Testing

@testable import Granary

/// The keyed archive Granary stores for transformables with Core Data's default transformer: it reads
/// what Foundation's `NSKeyedArchiver` writes, writes what `NSKeyedUnarchiver` reads, surfaces values as
/// their Swift types, and refuses damaged or disallowed archives with an error, never a crash.
@Suite struct KeyedArchiveTests {
    static let uuid = UUID(uuidString: "6FC7BEAB-2162-4B9A-A121-8C9F3FE1A6A3")!
    static let date = Date(timeIntervalSinceReferenceDate: 12.5)

    static func roundTrip(_ value: Any) throws -> any Sendable {
        let codec = TransformableRegistry.keyedArchive
        let bytes = try #require(try codec.encode(value))
        return try codec.decode(bytes)
    }

    @Test func valuesSurfaceAsTheirSwiftTypes() throws {
        #expect(try Self.roundTrip(["a", "b"]) as? [String] == ["a", "b"])
        #expect(type(of: try Self.roundTrip(["a", "b"])) == [String].self)
        #expect(try Self.roundTrip([1, 2]) as? [Int] == [1, 2])
        #expect(try Self.roundTrip(["k": 2.5]) as? [String: Double] == ["k": 2.5])
        #expect(try Self.roundTrip(Set(["x", "y"])) as? Set<String> == ["x", "y"])
        #expect(try Self.roundTrip(Self.uuid) as? UUID == Self.uuid)
        #expect(try Self.roundTrip(Self.date) as? Date == Self.date)
        #expect(try Self.roundTrip(URL(string: "https://example.com/a?b=c")!) as? URL == URL(string: "https://example.com/a?b=c"))
        #expect(try Self.roundTrip(Data([0, 255])) as? Data == Data([0, 255]))
        #expect(try Self.roundTrip("é😀") as? String == "é😀")
        // An integer, a real and a Boolean stay apart, even when equal as numbers.
        let mixed = try #require(try Self.roundTrip([true, 1, 1.0] as [Any]) as? [any Sendable])
        #expect(mixed[0] as? Bool == true && mixed[1] as? Int == 1 && mixed[2] as? Double == 1.0)
        #expect(mixed[0] as? Int == nil && mixed[1] as? Bool == nil)
        // A heterogeneous collection still casts to the type its members share.
        let nested = try Self.roundTrip([["a"], ["b", "c"]])
        #expect(nested as? [[String]] == [["a"], ["b", "c"]])
        let empty = try Self.roundTrip([String]())
        #expect((empty as? [String])?.isEmpty == true)
    }

    /// Equal values archive to equal bytes whatever order their sets and dictionaries were built in, so
    /// stored values compare, and an unchanged value is not a change.
    @Test func equalValuesArchiveToEqualBytes() throws {
        let keys = (0..<200).map { "key\($0)" }
        var forward: [String: Int] = [:]
        for (index, key) in keys.enumerated() { forward[key] = index }
        // Another capacity gives another iteration order.
        var backward = [String: Int](minimumCapacity: 5_000)
        for (index, key) in keys.enumerated().reversed() { backward[key] = index }
        var bigSet = Set<String>(minimumCapacity: 5_000)
        for key in keys.reversed() { bigSet.insert(key) }
        #expect(Array(forward.keys) != Array(backward.keys) || Array(Set(keys)) != Array(bigSet))
        let codec = TransformableRegistry.keyedArchive
        #expect(try codec.encode(forward) == codec.encode(backward))
        #expect(try codec.encode(Set(keys)) == codec.encode(bigSet))
        #expect(try codec.encode(Set([Data([1]), Data([2])])) == codec.encode(Set([Data([2]), Data([1])])))
    }

    /// Large archives take wider references and offsets (two, then four bytes) and long counts.
    @Test func largeArchivesRoundTrip() throws {
        for count in [14, 15, 300, 70_000] {
            let value = ArchivedValue.array((0..<count).map { .string("s\($0)") } + [.data(Data(repeating: 7, count: count))])
            #expect(try KeyedArchive.unarchive(try KeyedArchive.archive(value)) == value, "\(count)")
        }
        let long = String(repeating: "é", count: 40_000)
        #expect(try KeyedArchive.unarchive(try KeyedArchive.archive(.string(long))) == .string(long))
        #expect(try KeyedArchive.unarchive(try KeyedArchive.archive(.int(Int64.min))) == .int(Int64.min))
    }

    @Test func valuesSwiftCannotHoldAsOneTypeAreRefusedOnTheWayIn() throws {
        #expect(throws: TransformerFailure.self) { _ = try TransformableRegistry.keyedArchive.encode(Set<AnyHashable>([1, "a"])) }
        #expect(throws: TransformerFailure.self) { _ = try TransformableRegistry.keyedArchive.encode([AnyHashable(1): 1, AnyHashable("a"): 2]) }
        #expect(throws: TransformerFailure.self) { _ = try TransformableRegistry.keyedArchive.encode([UInt64.max]) }
        // Not a property-list type at all: no bytes, which the attribute type reports as a type mismatch.
        struct Point { var x = 1 }
        #expect(try TransformableRegistry.keyedArchive.encode(Point()) == nil)
        #expect(throws: TransformerFailure.self) { _ = try TransformableRegistry.keyedArchive.encode([Point()]) }
    }

    /// Foundation reads what Granary writes, with the secure unarchiver and the default transformer's classes.
    @Test func foundationReadsGranarysArchives() throws {
        let value: [Any] = ["a", 3, 2.5, true, Self.date, Data([1, 2]), URL(string: "http://x.org/a")!, Self.uuid,
                            ["k": "v"], Set(["s"]), "é😀", -70_000, Int64.max]
        let bytes = try KeyedArchive.archive(try #require(try ArchivedValue(swift: value)))
        let classes: [AnyClass] = [NSArray.self, NSDictionary.self, NSSet.self, NSString.self, NSNumber.self, NSDate.self,
                                   NSData.self, NSURL.self, NSUUID.self]
        let decoded = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClasses: classes, from: Data(bytes)) as? NSArray)
        #expect(decoded.count == 13)
        #expect(decoded[10] as? String == "é😀")
        #expect((decoded[11] as? NSNumber)?.int64Value == -70_000 && (decoded[12] as? NSNumber)?.int64Value == Int64.max)
        #expect(decoded[0] as? String == "a")
        #expect((decoded[1] as? NSNumber)?.intValue == 3)
        #expect((decoded[2] as? NSNumber)?.doubleValue == 2.5)
        #expect(decoded[4] as? Date == Self.date)
        #expect(decoded[5] as? Data == Data([1, 2]))
        #expect(decoded[6] as? URL == URL(string: "http://x.org/a"))
        #expect(decoded[7] as? UUID == Self.uuid)
        #expect((decoded[8] as? [AnyHashable: Any])?["k"] as? String == "v")
    }

    /// Granary reads what Foundation's archiver writes.
    @Test func granaryReadsFoundationsArchives() throws {
        let object = NSArray(array: [NSString(string: "a"), NSNumber(value: 3), NSNumber(value: 2.5), NSDate(timeIntervalSinceReferenceDate: 12.5),
                                     NSData(data: Data([1, 2])), NSURL(string: "http://x.org/a")!, NSUUID(uuidString: Self.uuid.uuidString)!,
                                     NSDictionary(dictionary: ["k": NSString(string: "v")]), NSSet(array: [NSString(string: "s")])])
        let data = try NSKeyedArchiver.archivedData(withRootObject: object, requiringSecureCoding: true)
        let value = try KeyedArchive.unarchive(Array(data))
        #expect(value == .array([.string("a"), .int(3), .double(2.5), .date(Self.date), .data(Data([1, 2])),
                                 .url(URL(string: "http://x.org/a")!), .uuid(Self.uuid),
                                 .dictionary([.string("k"): .string("v")]), .set([.string("s")])]))
    }

    // MARK: Damaged and hostile archives

    static func archive(objects: [BinaryPropertyList], root: UInt64 = 1) -> [UInt8] {
        BinaryPropertyList.dictionary([
            "$archiver": .string("NSKeyedArchiver"), "$version": .int(100_000),
            "$top": .dictionary(["root": .uid(root)]), "$objects": .array(objects),
        ]).bytes()
    }

    static func problem(_ bytes: [UInt8]) -> String? {
        do {
            _ = try KeyedArchive.unarchive(bytes)
            return nil
        } catch {
            return error.reason
        }
    }

    @Test func aClassTheDefaultTransformerDoesNotAllowIsRefused() {
        let bytes = Self.archive(objects: [
            .string("$null"), .dictionary(["$class": .uid(2), "UIRed": .real(1)]),
            .dictionary(["$classname": .string("UIColor"), "$classes": .array([.string("UIColor"), .string("NSObject")])]),
        ])
        #expect(Self.problem(bytes)?.contains("class UIColor is not one the default transformer allows") == true)
    }

    @Test func cyclesAndSharedObjectsCannotHangOrExhaustMemory() {
        // An array holding itself.
        let cycle = Self.archive(objects: [
            .string("$null"), .dictionary(["$class": .uid(2), "NS.objects": .array([.uid(1)])]),
            .dictionary(["$classname": .string("NSArray"), "$classes": .array([.string("NSArray")])]),
        ])
        #expect(Self.problem(cycle)?.contains("contains itself") == true)
        // Forty arrays each holding the next twice: 2^40 objects once expanded, a few hundred bytes on disk.
        var objects: [BinaryPropertyList] = [.string("$null"), .dictionary(["$classname": .string("NSArray")])]
        for level in 0..<40 {
            let next = UInt64(objects.count + 1)
            objects.append(.dictionary(["$class": .uid(1), "NS.objects": .array(level == 39 ? [] : [.uid(next), .uid(next)])]))
        }
        #expect(Self.problem(Self.archive(objects: objects, root: 2))?.contains("expands to more than") == true)
    }

    /// What is written can be read: nesting and size are bounded the same way on both sides.
    @Test func nestingAndSizeAreBoundedAlikeWhenWritingAndReading() throws {
        func nested(_ levels: Int) -> ArchivedValue {
            var value = ArchivedValue.string("core")
            for _ in 0..<levels { value = .array([value]) }
            return value
        }
        let deepest = nested(KeyedArchive.maxNesting)
        #expect(try KeyedArchive.unarchive(try KeyedArchive.archive(deepest)) == deepest)
        #expect(throws: ArchivedValue.Problem.self) { try KeyedArchive.archive(nested(KeyedArchive.maxNesting + 1)) }
        #expect(throws: ArchivedValue.Problem.self) {
            try KeyedArchive.archive(.array(Array(repeating: .int(1), count: KeyedArchive.maxExpandedObjects)))
        }
        // A hostile archive nesting a thousand arrays is refused, not a stack overflow.
        var objects: [BinaryPropertyList] = [.string("$null"), .dictionary(["$classname": .string("NSArray")])]
        for level in 0..<1_000 {
            let next = UInt64(objects.count + 1)
            objects.append(.dictionary(["$class": .uid(1), "NS.objects": .array(level == 999 ? [] : [.uid(next)])]))
        }
        #expect(Self.problem(Self.archive(objects: objects, root: 2))?.contains("nest deeper than") == true)
        // Shared objects decoded once and then wrapped again and again nest as deep, though each is reached
        // shallowly the first time: a root holding o1, o2 = [o1], o3 = [o2]…
        var shared: [BinaryPropertyList] = [.string("$null"), .dictionary(["$classname": .string("NSArray")]), .string("leaf")]
        let first = shared.count
        for level in 0..<200 {
            shared.append(.dictionary(["$class": .uid(1), "NS.objects": .array([.uid(UInt64(level == 0 ? 2 : first + level - 1))])]))
        }
        shared.append(.dictionary(["$class": .uid(1), "NS.objects": .array((first..<first + 200).map { .uid(UInt64($0)) })]))
        #expect(Self.problem(Self.archive(objects: shared, root: UInt64(shared.count - 1)))?.contains("nest deeper than") == true)
    }

    @Test func garbageAndTruncatedBytesAreErrors() throws {
        for bytes: [UInt8] in [[], [1, 2, 3], Array("bplist00".utf8), Array(repeating: 0, count: 100), Array("bplist00".utf8) + Array(repeating: 0xFF, count: 40)] {
            #expect(Self.problem(bytes) != nil)
        }
        let valid = try KeyedArchive.archive(.array([.string("a")]))
        for length in 0..<valid.count { #expect(Self.problem(Array(valid.prefix(length))) != nil, "prefix \(length)") }
    }

    /// Random damage to valid archives: every outcome is a value or an error. A crash fails the run.
    @Test func damagedArchivesNeverCrash() throws {
        let value = try #require(try ArchivedValue(swift: ["a": [1, 2], "b": ["x", "é"], "c": [Self.date: true], "d": Set([Self.uuid])] as [String: Any]))
        let valid = try KeyedArchive.archive(value)
        var random = FetchingPlannerPropertyTests.Random(state: 0x7A5F)
        var errors = 0
        for _ in 0..<3_000 {
            var bytes = valid
            for _ in 0...random.int(4) { bytes[random.int(bytes.count)] = UInt8(random.int(256)) }
            if random.int(4) == 0 { bytes = Array(bytes.prefix(random.int(bytes.count))) }
            if Self.problem(bytes) != nil { errors += 1 }
        }
        #expect(errors > 0)
    }

    @Test func propertyListTypeNamesAreRecognised() {
        for name in ["NSArray", "[String]", "[String: Any]", "Array<Date>", "Set<UUID>", "Dictionary<String, [Int]>", "NSDictionary",
                     "NSSecureUnarchiveFromData", "NSKeyedUnarchiveFromData", "[[String: Swift.Double]]", "Foundation.URL", "NSObject"] {
            #expect(PropertyListTypeName.isArchived(name), "\(name)")
        }
        for name in ["UIColor", "CKRecordID", "NSColor", "CLLocation", "[UIColor]", "MyApp.Thing", "[String", "Array<>", "MyColorTransformer"] {
            #expect(!PropertyListTypeName.isArchived(name), "\(name)")
        }
    }
}

/// Archive variants other archivers write, and how names resolve to codecs.
@Suite struct KeyedArchiveVariantTests {
    @Test func mutableStringsAndDataReadWhetherInlineOrReferenced() throws {
        let mutableString = BinaryPropertyList.dictionary(["$classname": .string("NSMutableString")])
        let mutableData = BinaryPropertyList.dictionary(["$classname": .string("NSMutableData")])
        let bytes = KeyedArchiveTests.archive(objects: [
            .string("$null"),
            .dictionary(["$class": .uid(7), "NS.objects": .array([.uid(2), .uid(3), .uid(4), .uid(5)])]),
            .dictionary(["$class": .uid(8), "NS.string": .string("inline")]),
            .dictionary(["$class": .uid(8), "NS.string": .uid(6)]),
            .dictionary(["$class": .uid(9), "NS.data": .data([1])]),
            .dictionary(["$class": .uid(9), "NS.bytes": .data([2])]),
            .string("referenced"),
            .dictionary(["$classname": .string("NSMutableArray")]), mutableString, mutableData,
        ])
        #expect(try KeyedArchive.unarchive(bytes) == .array([.string("inline"), .string("referenced"), .data(Data([1])), .data(Data([2]))]))
    }

    @Test func namesResolveToTheRightCodec() throws {
        #expect(AttributeType.isTransformableTypeRegistered("NSSecureUnarchiveFromData"))
        #expect(AttributeType.isTransformableTypeRegistered("[String: Int]"))
        #expect(!AttributeType.isTransformableTypeRegistered("UIColor"))
        // A Granary registration takes precedence over a ValueTransformer of the same name.
        let name = "PrecedenceTransformer\(UUID().uuidString.prefix(8))"
        ValueTransformer.setValueTransformer(HexColorTransformer(), forName: NSValueTransformerName(name))
        let type = AttributeType.transformable(valueTypeName: name)
        #expect(try type.swiftValue(from: type.storageValue(for: "#010203")) as? String == "#010203")
        AttributeType.registerTransformer(named: name, valueType: String.self, transform: { Data($0.utf8.reversed()) },
                                          reverseTransform: { String(decoding: $0.reversed(), as: UTF8.self) })
        #expect(try type.storageValue(for: "ab") == .bytes(Array("ba".utf8)))
        ValueTransformer.setValueTransformer(nil, forName: NSValueTransformerName(name))
    }
}
