import Foundation
import Testing
@testable import Granary

/// `AnyBox` reads values out of `Any?` boxes by their type word; every answer must match a cast's.
@Suite struct AnyBoxTests {
    static var samples: [Any?] { [
        nil, "short", String(repeating: "long string beyond fifteen bytes ", count: 3), Int64(-7), Int32(42), Int16(3),
        Int(42), 2.5, Float(2.5), true, false, Date(timeIntervalSince1970: 1_700_000_000), UUID(), Optional<String>.some("boxed"),
        Optional<Int64>.none as Any, NSString(string: "bridged"), [1, 2, 3], Decimal(string: "1.5")!,
    ] }

    @Test func holdsMatchesTheDynamicTypeExactly() {
        for value in Self.samples {
            let isString = value.map { type(of: $0) == String.self } ?? false
            #expect(AnyBox.holds(value, exactly: String.self) == isString, "\(String(describing: value))")
            let isInt64 = value.map { type(of: $0) == Int64.self } ?? false
            #expect(AnyBox.holds(value, exactly: Int64.self) == isInt64, "\(String(describing: value))")
            let isDate = value.map { type(of: $0) == Date.self } ?? false
            #expect(AnyBox.holds(value, exactly: Date.self) == isDate, "\(String(describing: value))")
        }
    }

    @Test func valueReadsWhatACastReads() {
        for value in Self.samples {
            if let v = value, type(of: v) == String.self { #expect(AnyBox.value(value, as: String.self) == (v as! String)) }
            if let v = value, type(of: v) == UUID.self { #expect(AnyBox.value(value, as: UUID.self) == (v as! UUID)) }
            if let v = value, type(of: v) == Double.self { #expect(AnyBox.value(value, as: Double.self) == (v as! Double)) }
            if let v = value, type(of: v) == Bool.self { #expect(AnyBox.value(value, as: Bool.self) == (v as! Bool)) }
        }
        #expect(AnyBox.value(Int(42) as Any?, as: Int64.self) == nil)
        #expect(AnyBox.value(nil, as: String.self) == nil)
    }

    @Test func equalComparesValuesOfTheOwnTypeAndDeclinesOthers() {
        let a = "a string long enough to live on the heap, not inline"
        let b = String(a.reversed().reversed())   // equal text, other storage
        #expect(AnyBox.equal(a, b, as: String.self) == true)
        #expect(AnyBox.equal("x", "y", as: String.self) == false)
        #expect(AnyBox.equal(Int32(1), Int32(1), as: Int32.self) == true)
        #expect(AnyBox.equal(Int32(1), Int32(2), as: Int32.self) == false)
        #expect(AnyBox.equal(Int32(1), Int64(1), as: Int32.self) == nil)
        #expect(AnyBox.equal(nil, nil, as: Int32.self) == nil)
        let d = Date(timeIntervalSince1970: 12.5)
        #expect(AnyBox.equal(d, Date(timeIntervalSince1970: 12.5), as: Date.self) == true)
        // An optional boxed inside the `Any` is another type: the caller's slower path looks through it.
        #expect(AnyBox.equal(Optional<Date>.some(d) as Any, d, as: Date.self) == nil)
    }

    @Test func sameAgreesWithAnyHashableForEveryPairOfSamples() {
        let types: [AttributeType] = [.string, .integer64, .integer32, .integer16, .double, .float, .boolean, .date, .uuid, .decimal]
        for x in Self.samples {
            for y in Self.samples {
                let reference = ManagedObjectContext.same(x, y)
                for type in types {
                    #expect(ManagedObjectContext.same(x, y, as: type) == reference, "\(String(describing: x)) vs \(String(describing: y)) as \(type)")
                }
            }
        }
    }
}
