import Foundation
import Testing
@testable import Granary

@Suite struct ModelAttributeTypeTests {
    typealias Point = ModelFixtures.Point

    @Test func everyTypeMapsToItsColumnType() {
        let expected: [(AttributeType, ColumnType)] = [
            (.integer16, .int), (.integer32, .int), (.integer64, .int), (.double, .double), (.float, .double),
            (.decimal, .string), (.boolean, .bool), (.string, .string), (.date, .date), (.binaryData, .bytes),
            (.uuid, .uuid), (.uri, .string), (.transformable(valueTypeName: "X"), .bytes),
        ]
        for (type, column) in expected {
            #expect(type.columnType == column, "\(type)")
        }
    }

    @Test func nilAndBoxedNilBecomeNull() throws {
        let none: Int? = nil
        let boxed: Any = none as Any
        for type in [AttributeType.integer16, .string, .date, .decimal] {
            #expect(try type.storageValue(for: nil) == .null)
            #expect(try type.storageValue(for: boxed) == .null)
            #expect(try type.swiftValue(from: .null) == nil)
        }
        let some: Int? = 5
        #expect(try AttributeType.integer32.storageValue(for: some as Any) == .int(5))
    }

    // MARK: Integers

    @Test func integerTypesAcceptEveryIntegerWidthThatFits() throws {
        let values: [Any] = [Int(7), Int8(7), Int16(7), Int32(7), Int64(7), UInt(7), UInt8(7), UInt16(7), UInt32(7), UInt64(7)]
        for type in [AttributeType.integer16, .integer32, .integer64] {
            for value in values {
                #expect(try type.storageValue(for: value) == .int(7), "\(type) \(Swift.type(of: value))")
            }
        }
        #expect(try AttributeType.integer16.swiftValue(from: .int(-32768)) as? Int16 == Int16.min)
        #expect(try AttributeType.integer32.swiftValue(from: .int(70000)) as? Int32 == 70000)
        #expect(try AttributeType.integer64.swiftValue(from: .int(.max)) as? Int64 == .max)
    }

    @Test func integer16RejectsSeventyThousandNamingTheAttribute() throws {
        let age = try ModelFixtures.resolved(Attribute("age", .integer16), entity: "Employee")
        #expect(throws: ValueConversionError.outOfRange(attribute: "Employee.age", type: .integer16, value: "70000")) {
            try age.storageValue(for: 70000)
        }
        do {
            _ = try age.storageValue(for: 70000)
        } catch {
            #expect(error.description == "70000 does not fit integer16 attribute 'Employee.age' (-32768...32767)")
        }
        #expect(try age.storageValue(for: 32767) == .int(32767))
        #expect(throws: ValueConversionError.self) { try age.storageValue(for: -32769) }
    }

    @Test func integerRangesAreCheckedPerWidth() throws {
        #expect(throws: ValueConversionError.outOfRange(attribute: nil, type: .integer32, value: "2147483648")) {
            try AttributeType.integer32.storageValue(for: Int64(Int32.max) + 1)
        }
        #expect(try AttributeType.integer32.storageValue(for: Int32.min) == .int(Int64(Int32.min)))
        #expect(throws: ValueConversionError.self) { try AttributeType.integer64.storageValue(for: UInt64.max) }
        // A stored value too wide for the attribute means the store holds something this model did not write.
        #expect(throws: ValueConversionError.unexpectedStorageValue(attribute: nil, type: .integer16, value: "70000")) {
            try AttributeType.integer16.swiftValue(from: .int(70000))
        }
    }

    @Test func integersRejectOtherTypes() {
        #expect(throws: ValueConversionError.typeMismatch(attribute: nil, type: .integer32, valueType: "String")) {
            try AttributeType.integer32.storageValue(for: "12")
        }
        #expect(throws: ValueConversionError.self) { try AttributeType.integer64.storageValue(for: true) }
        #expect(throws: ValueConversionError.self) { try AttributeType.integer64.storageValue(for: 1.5) }
    }

    // MARK: Floating point and decimal

    @Test func doubleAcceptsFloatsAndExactIntegers() throws {
        #expect(try AttributeType.double.storageValue(for: 2.5) == .double(2.5))
        #expect(try AttributeType.double.storageValue(for: Float(0.5)) == .double(0.5))
        #expect(try AttributeType.double.storageValue(for: 3) == .double(3))
        #expect(throws: ValueConversionError.self) { try AttributeType.double.storageValue(for: Int64(1 << 53) + 1) }
        #expect(try AttributeType.double.swiftValue(from: .double(-1.25)) as? Double == -1.25)
    }

    @Test func floatRoundTripsThroughDouble() throws {
        let value = Float(0.1)
        let stored = try AttributeType.float.storageValue(for: value)
        #expect(stored == .double(Double(value)))
        #expect(try AttributeType.float.swiftValue(from: stored) as? Float == value)
        // A Double is narrowed when stored, so what is read back is exactly the Float the app would hold.
        #expect(try AttributeType.float.storageValue(for: 0.1) == .double(Double(Float(0.1))))
        #expect(throws: ValueConversionError.self) { try AttributeType.float.storageValue(for: 1e40) }
        #expect(throws: ValueConversionError.self) { try AttributeType.float.storageValue(for: 16_777_217) }
    }

    @Test func decimalIsStoredAsItsCanonicalDescription() throws {
        let price = Decimal(string: "1234.50")!
        let stored = try AttributeType.decimal.storageValue(for: price)
        #expect(stored == .string("1234.5"))
        #expect(try AttributeType.decimal.swiftValue(from: stored) as? Decimal == price)
        let tiny = Decimal(string: "-0.000000000000000000001")!
        #expect(try AttributeType.decimal.swiftValue(from: AttributeType.decimal.storageValue(for: tiny)) as? Decimal == tiny)
        #expect(try AttributeType.decimal.storageValue(for: 42) == .string("42"))
        #expect(try AttributeType.decimal.storageValue(for: UInt64.max) == .string("18446744073709551615"))
        // A Double goes by its shortest description, so 0.1 stays 0.1.
        #expect(try AttributeType.decimal.storageValue(for: 0.1) == .string("0.1"))
        #expect(throws: ValueConversionError.self) { try AttributeType.decimal.storageValue(for: Decimal.nan) }
        #expect(throws: ValueConversionError.self) { try AttributeType.decimal.storageValue(for: Double.infinity) }
        #expect(throws: ValueConversionError.self) { try AttributeType.decimal.swiftValue(from: .string("twelve")) }
    }

    // MARK: Other scalar types

    @Test func booleanStringDateAndUUIDRoundTrip() throws {
        let date = Date(timeIntervalSinceReferenceDate: 123_456.75)
        let uuid = UUID()
        let cases: [(AttributeType, Any, Value)] = [
            (.boolean, true, .bool(true)),
            (.string, "héllo", .string("héllo")),
            (.date, date, .date(date)),
            (.uuid, uuid, .uuid(uuid)),
        ]
        for (type, swift, stored) in cases {
            #expect(try type.storageValue(for: swift) == stored, "\(type)")
            #expect(try type.storageValue(for: type.swiftValue(from: stored)) == stored, "\(type)")
        }
        #expect(try AttributeType.string.storageValue(for: "abcdef".dropFirst(2)) == .string("cdef"))
        #expect(try AttributeType.string.swiftValue(from: .string("x")) as? String == "x")
        #expect(try AttributeType.date.swiftValue(from: .date(date)) as? Date == date)
        #expect(throws: ValueConversionError.self) { try AttributeType.boolean.storageValue(for: 1) }
        #expect(throws: ValueConversionError.self) { try AttributeType.uuid.storageValue(for: uuid.uuidString) }
        #expect(throws: ValueConversionError.self) { try AttributeType.string.swiftValue(from: .int(1)) }
    }

    @Test func binaryDataAcceptsDataAndByteArraysAndReturnsData() throws {
        let bytes: [UInt8] = [0, 1, 254, 255]
        #expect(try AttributeType.binaryData.storageValue(for: Data(bytes)) == .bytes(bytes))
        #expect(try AttributeType.binaryData.storageValue(for: bytes) == .bytes(bytes))
        #expect(try AttributeType.binaryData.storageValue(for: bytes[1...]) == .bytes([1, 254, 255]))
        #expect(try AttributeType.binaryData.swiftValue(from: .bytes(bytes)) as? Data == Data(bytes))
        #expect(throws: ValueConversionError.self) { try AttributeType.binaryData.storageValue(for: "bytes") }
    }

    @Test func uriIsStoredAsItsAbsoluteString() throws {
        let url = URL(string: "https://example.com/a%20b?q=1#frag")!
        let stored = try AttributeType.uri.storageValue(for: url)
        #expect(stored == .string("https://example.com/a%20b?q=1#frag"))
        #expect(try AttributeType.uri.swiftValue(from: stored) as? URL == url)
        #expect(throws: ValueConversionError.self) { try AttributeType.uri.storageValue(for: "https://example.com") }
    }

    // MARK: Transformable

    @Test func transformableCodableValuesRoundTripAsJSON() throws {
        let type = AttributeType.transformable(Point.self)
        #expect(type == .transformable(valueTypeName: String(reflecting: Point.self)))
        let point = Point(x: 1.5, y: -2, label: "origin")
        let stored = try type.storageValue(for: point)
        guard case .bytes(let bytes) = stored else {
            Issue.record("expected bytes, got \(stored)")
            return
        }
        // Sorted keys: equal values always encode to equal bytes.
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"label":"origin","x":1.5,"y":-2}"#)
        #expect(try type.swiftValue(from: stored) as? Point == point)
        #expect(throws: ValueConversionError.self) { try type.storageValue(for: "not a point") }
        #expect(throws: ValueConversionError.self) { try type.swiftValue(from: .bytes(Array("{}".utf8))) }
    }

    @Test func transformableTypesCanBeRegisteredUnderAStableName() throws {
        let type = AttributeType.transformable(Point.self, name: "Fixtures.Point")
        #expect(type == .transformable(valueTypeName: "Fixtures.Point"))
        #expect(AttributeType.isTransformableTypeRegistered("Fixtures.Point"))
        let point = Point(x: 0, y: 0, label: "")
        #expect(try type.swiftValue(from: type.storageValue(for: point)) as? Point == point)
    }

    @Test func unregisteredTransformableTypesFailWithTheirName() {
        let type = AttributeType.transformable(valueTypeName: "Nowhere.Unregistered")
        #expect(!AttributeType.isTransformableTypeRegistered("Nowhere.Unregistered"))
        #expect(throws: ValueConversionError.unregisteredTransformableType(attribute: nil, typeName: "Nowhere.Unregistered")) {
            try type.storageValue(for: 1)
        }
        #expect(throws: ValueConversionError.self) { try type.swiftValue(from: .bytes([])) }
    }

    @Test func attributeErrorsNameTheAttributeForReadsToo() throws {
        let count = try ModelFixtures.resolved(Attribute("count", .integer32), entity: "Stock")
        #expect(throws: ValueConversionError.unexpectedStorageValue(attribute: "Stock.count", type: .integer32, value: "\"x\"")) {
            try count.swiftValue(from: .string("x"))
        }
        #expect(throws: ValueConversionError.typeMismatch(attribute: "Stock.count", type: .integer32, valueType: "Double")) {
            try count.storageValue(for: 2.5)
        }
    }
}
