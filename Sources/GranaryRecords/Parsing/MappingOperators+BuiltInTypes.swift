import Foundation

// The `<-` operators for the attribute types imports map most, each written for its own type. The
// generic forms reach the caller's module unspecialized: each `<-` then asked the runtime for
// `Optional<T>`'s metadata and picked the conversion by comparing metatypes, a fifth of mapping one
// value. These behave exactly as the generic forms do (absent key: unchanged; `null`: unchanged for a
// non-optional, `nil` for an optional; a value that does not convert throws).

extension MappedValue {
    /// Sets a `String` property (as the generic form does).
    /// - Throws: ``ParsingError`` (`.unconvertible`) naming the key and value when it does not convert.
    public static func <- (property: inout String, right: MappedValue) throws { try right.assign(&property, String.init(node:)) }

    /// Sets an `Int` property (as the generic form does).
    /// - Throws: ``ParsingError`` (`.unconvertible`) naming the key and value when it does not convert.
    public static func <- (property: inout Int, right: MappedValue) throws { try right.assign(&property, Int.init(node:)) }

    /// Sets an `Int64` property (as the generic form does).
    /// - Throws: ``ParsingError`` (`.unconvertible`) naming the key and value when it does not convert.
    public static func <- (property: inout Int64, right: MappedValue) throws { try right.assign(&property, Int64.init(node:)) }

    /// Sets an `Int32` property (as the generic form does).
    /// - Throws: ``ParsingError`` (`.unconvertible`) naming the key and value when it does not convert.
    public static func <- (property: inout Int32, right: MappedValue) throws { try right.assign(&property, Int32.init(node:)) }

    /// Sets a `Double` property (as the generic form does).
    /// - Throws: ``ParsingError`` (`.unconvertible`) naming the key and value when it does not convert.
    public static func <- (property: inout Double, right: MappedValue) throws { try right.assign(&property, Double.init(node:)) }

    /// Sets a `Bool` property (as the generic form does).
    /// - Throws: ``ParsingError`` (`.unconvertible`) naming the key and value when it does not convert.
    public static func <- (property: inout Bool, right: MappedValue) throws { try right.assign(&property, Bool.init(node:)) }

    /// Sets a `Date` property (ISO 8601 text or Unix seconds) (as the generic form does).
    /// - Throws: ``ParsingError`` (`.unconvertible`) naming the key and value when it does not convert.
    public static func <- (property: inout Date, right: MappedValue) throws { try right.assign(&property, Date.init(node:)) }

    /// Sets an optional `String` property; `null` sets it to `nil` (as the generic form does).
    /// - Throws: ``ParsingError`` (`.unconvertible`) naming the key and value when it does not convert.
    public static func <- (property: inout String?, right: MappedValue) throws { try right.assign(&property, String.init(node:)) }

    /// Sets an optional `Int` property; `null` sets it to `nil` (as the generic form does).
    /// - Throws: ``ParsingError`` (`.unconvertible`) naming the key and value when it does not convert.
    public static func <- (property: inout Int?, right: MappedValue) throws { try right.assign(&property, Int.init(node:)) }

    /// Sets an optional `Double` property; `null` sets it to `nil` (as the generic form does).
    /// - Throws: ``ParsingError`` (`.unconvertible`) naming the key and value when it does not convert.
    public static func <- (property: inout Double?, right: MappedValue) throws { try right.assign(&property, Double.init(node:)) }

    /// Sets an optional `Date` property; `null` sets it to `nil` (as the generic form does).
    /// - Throws: ``ParsingError`` (`.unconvertible`) naming the key and value when it does not convert.
    public static func <- (property: inout Date?, right: MappedValue) throws { try right.assign(&property, Date.init(node:)) }

    /// The non-optional forms: a present, non-null value converted, or an error.
    private func assign<T>(_ property: inout T, _ convert: (JSONNode) -> T?) throws {
        guard case .value(let v) = lookup else { return }
        guard let converted = convert(v) else { throw unconvertible(T.self, v) }
        property = converted
    }

    /// The optional forms: `null` clears.
    private func assign<T>(_ property: inout T?, _ convert: (JSONNode) -> T?) throws {
        switch lookup {
        case .absent: return
        case .null: property = nil
        case .value(let v):
            guard let converted = convert(v) else { throw unconvertible(T.self, v) }
            property = converted
        }
    }
}
