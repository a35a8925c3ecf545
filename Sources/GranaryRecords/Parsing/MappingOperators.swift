import Foundation
import Granary

infix operator <- : AssignmentPrecedence

// The `<-` operators are members of the types they work on (MappedValue, Date, Optional,
// JSONConvertible), so that each is documented with its type.

extension MappedValue {
    // Values. An absent key leaves the property alone; `null` clears an optional and leaves a
    // non-optional alone; a value that does not convert throws instead of writing a default.

    /// Sets a non-optional property from a JSON value when the key is present and not `null`.
    /// - Throws: ``ParsingError`` (`.unconvertible`) naming the key and value when it does not convert.
    public static func <- <T: JSONConvertible>(property: inout T, right: MappedValue) throws {
        guard case .value(let v) = right.lookup else { return }
        guard let converted = v.converted(to: T.self) else { throw right.unconvertible(T.self, v) }
        property = converted
    }

    /// Sets an optional property from a JSON value; `null` sets it to `nil`, an absent key leaves it alone.
    /// - Throws: ``ParsingError`` (`.unconvertible`) naming the key and value when it does not convert.
    public static func <- <T: JSONConvertible>(property: inout T?, right: MappedValue) throws {
        switch right.lookup {
        case .absent: return
        case .null: property = nil
        case .value(let v):
            guard let converted = v.converted(to: T.self) else { throw right.unconvertible(T.self, v) }
            property = converted
        }
    }

    /// Sets an enum property by its raw value.
    /// - Throws: ``ParsingError`` when the raw value does not convert or names no case.
    @_disfavoredOverload
    public static func <- <T: RawRepresentable>(property: inout T, right: MappedValue) throws where T.RawValue: JSONConvertible {
        guard case .value(let v) = right.lookup else { return }
        guard let raw = v.converted(to: T.RawValue.self), let converted = T(rawValue: raw) else { throw right.unconvertible(T.self, v) }
        property = converted
    }

    /// Sets an optional enum property by its raw value; `null` sets it to `nil`.
    /// - Throws: ``ParsingError`` when the raw value does not convert or names no case.
    @_disfavoredOverload
    public static func <- <T: RawRepresentable>(property: inout T?, right: MappedValue) throws where T.RawValue: JSONConvertible {
        switch right.lookup {
        case .absent: return
        case .null: property = nil
        case .value(let v):
            guard let raw = v.converted(to: T.RawValue.self), let converted = T(rawValue: raw) else { throw right.unconvertible(T.self, v) }
            property = converted
        }
    }

    // Relationships. A nested object is found or created by its own ID and mapped recursively; a bare ID
    // links the existing object or a new stub holding only the ID.

    /// Sets a to-one relationship from a nested object, an ID, or a one-element array of either.
    /// `null` leaves a non-optional to-one alone.
    /// - Throws: ``ParsingError`` for a nested object without an ID, an ID of the wrong type, or a
    ///   conversion failure inside the nested object.
    public static func <- <T: Parsable>(property: inout T, right: MappedValue) throws {
        guard case .value(let v) = right.lookup else { return }
        property = try right.toOne(T.self, v)
    }

    /// Sets an optional to-one relationship; `null` clears it.
    /// - Throws: as the non-optional form.
    public static func <- <T: Parsable>(property: inout T?, right: MappedValue) throws {
        switch right.lookup {
        case .absent: return
        case .null: property = nil
        case .value(let v): property = try right.toOne(T.self, v)
        }
    }

    /// Replaces a to-many relationship's members with the objects an array of nested objects or IDs names
    /// (a single object or ID counts as a one-element array); `null` empties it.
    /// - Throws: ``ParsingError`` as for a to-one, for the first bad member.
    public static func <- <T: Parsable>(property: inout Set<T>, right: MappedValue) throws {
        switch right.lookup {
        case .absent: return
        case .null: property = []
        case .value(let v): property = Set(try right.toMany(T.self, v))
        }
    }

    /// Replaces an ordered to-many relationship's members, in the JSON's order (repeats collapse to the
    /// first place); `null` empties it.
    /// - Throws: ``ParsingError`` as for a to-one, for the first bad member.
    public static func <- <T: Parsable>(property: inout [T], right: MappedValue) throws {
        switch right.lookup {
        case .absent: return
        case .null: property = []
        case .value(let v):
            var seen = Set<ObjectIdentifier>()
            property = try right.toMany(T.self, v).filter { seen.insert(ObjectIdentifier($0)).inserted }
        }
    }
}

extension JSONConvertible {
    /// Sets a property with a conversion of your own; when it returns `nil`, the default conversion runs.
    /// - Throws: what the closure throws, or ``ParsingError`` when neither conversion works.
    public static func <- (property: inout Self, right: (MappedValue, (Any) throws -> Self?)) throws {
        guard case .value(let v) = right.0.lookup else { return }
        guard let converted = try right.1(v.anyValue) ?? v.converted(to: Self.self) else { throw right.0.unconvertible(Self.self, v) }
        property = converted
    }
}

extension Optional where Wrapped: JSONConvertible {
    /// Sets an optional property with a conversion of your own; `null` sets it to `nil`.
    /// - Throws: what the closure throws, or ``ParsingError`` when neither conversion works.
    public static func <- (property: inout Wrapped?, right: (MappedValue, (Any) throws -> Wrapped?)) throws {
        switch right.0.lookup {
        case .absent: return
        case .null: property = nil
        case .value(let v):
            guard let converted = try right.1(v.anyValue) ?? v.converted(to: Wrapped.self) else { throw right.0.unconvertible(Wrapped.self, v) }
            property = converted
        }
    }
}

// Dates in custom formats: each format is tried in order, in the POSIX locale and UTC (or `timeZone`);
// ISO 8601 and Unix seconds are still accepted after them.

extension Date {
    /// Sets a date from text in one of `dateFormats` (POSIX locale, UTC), ISO 8601 or Unix seconds.
    /// - Throws: ``ParsingError`` when no format matches.
    public static func <- (property: inout Date, right: (MappedValue, dateFormats: [String])) throws {
        guard case .value(let v) = right.0.lookup else { return }
        property = try right.0.date(v, formats: right.dateFormats, timeZone: TimeZone(identifier: "UTC")!)
    }


    /// Sets a date from text in one of `dateFormats`, read in `timeZone` (POSIX locale).
    /// - Throws: ``ParsingError`` when no format matches.
    public static func <- (property: inout Date, right: (MappedValue, dateFormats: [String], timeZone: TimeZone)) throws {
        guard case .value(let v) = right.0.lookup else { return }
        property = try right.0.date(v, formats: right.dateFormats, timeZone: right.timeZone)
    }
}

extension Optional where Wrapped == Date {
    /// Sets an optional date from text in one of `dateFormats` (POSIX locale, UTC); `null` sets `nil`.
    /// - Throws: ``ParsingError`` when no format matches.
    public static func <- (property: inout Date?, right: (MappedValue, dateFormats: [String])) throws {
        switch right.0.lookup {
        case .absent: return
        case .null: property = nil
        case .value(let v): property = try right.0.date(v, formats: right.dateFormats, timeZone: TimeZone(identifier: "UTC")!)
        }
    }


    /// Sets an optional date from text in one of `dateFormats`, read in `timeZone`; `null` sets `nil`.
    /// - Throws: ``ParsingError`` when no format matches.
    public static func <- (property: inout Date?, right: (MappedValue, dateFormats: [String], timeZone: TimeZone)) throws {
        switch right.0.lookup {
        case .absent: return
        case .null: property = nil
        case .value(let v): property = try right.0.date(v, formats: right.dateFormats, timeZone: right.timeZone)
        }
    }
}

extension MappedValue {
    func date(_ v: JSONNode, formats: [String], timeZone: TimeZone) throws -> Date {
        if case .string(let s) = v {
            for f in map.session.dateFormatters(formats, timeZone: timeZone) {
                if let d = f.date(from: s) { return d }
            }
        }
        guard let d = Date(node: v) else {
            throw map.error(.unconvertible(expected: "Date in \(formats)"), key: key, value: v)
        }
        return d
    }
}

extension MappedValue {
    func toOne<T: Parsable>(_: T.Type, _ value: JSONNode) throws -> T {
        var value = value
        if case .array(let array) = value {
            guard array.count == 1 else { throw map.error(.notAnObject, key: key, value: value) }
            value = array[0]
        }
        return try map.session.target(T.self, from: value, key: key, map: map)
    }

    func toMany<T: Parsable>(_: T.Type, _ value: JSONNode) throws -> [T] {
        let items: [JSONNode]
        if case .array(let array) = value { items = array } else { items = [value] }
        if items.count > 1 {
            // One IN query for the members' IDs instead of one fetch each; bad members are reported below.
            try map.session.prefetch(T.self, ids: map.session.targetIDs(value, as: T.self))
        }
        var result: [T] = []
        result.reserveCapacity(items.count)
        for (i, item) in items.enumerated() {
            result.append(try map.session.target(T.self, from: item, key: key + ".\(i)", map: map))
        }
        return result
    }
}
