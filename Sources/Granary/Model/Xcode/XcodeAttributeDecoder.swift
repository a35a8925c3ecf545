import Foundation

/// Reads one `<attribute>` element of a model file: its Xcode type name, flags, default value and the
/// minimum, maximum and pattern Xcode's inspector offers, as an `AttributeDescription`.
///
/// Xcode stores every value as text: defaults in `defaultValueString` (dates in `defaultDateTimeInterval`,
/// seconds since 2001-01-01 UTC), bounds in `minValueString`/`maxValueString` (lengths for strings and
/// binary data, values for numbers; dates in `minDateTimeInterval`/`maxDateTimeInterval`). Each is parsed
/// into the attribute type's own Swift value here, so a value that does not parse is reported with the
/// element's line rather than later without one.
struct XcodeAttributeDecoder {
    /// Attributes of `<attribute>` that are read, or that only concern code generation, Spotlight,
    /// CloudKit or how Core Data's SQLite store lays out data, and are ignored.
    static let knownAttributes: Set<String> = [
        "name", "attributeType", "optional", "transient", "indexed", "defaultValueString", "defaultDateTimeInterval",
        "minValueString", "maxValueString", "minDateTimeInterval", "maxDateTimeInterval", "regularExpressionString",
        "renamingIdentifier", "elementID", "customClassName", "valueTransformerName", "derived", "derivationExpression",
        // Xcode's "Preserve After Deletion" checkbox: `preservesValueInHistoryOnDeletion`.
        "preserveAfterDeletion",
        // The composite a Composite attribute uses; the type is refused with its own message.
        "composite",
        // Ignored: none of these changes what is stored or how it validates in Granary.
        "usesScalarValueType", "syncable", "versionHashModifier", "allowsExternalBinaryDataStorage",
        "spotlightIndexingEnabled", "storedInTruthFile", "allowsCloudEncryption",
    ]

    /// Xcode's names of attribute types, as its model editor writes them in `attributeType`.
    private static let types: [String: AttributeType] = [
        "Integer 16": .integer16, "Integer 32": .integer32, "Integer 64": .integer64, "Decimal": .decimal,
        "Double": .double, "Float": .float, "String": .string, "Boolean": .boolean, "Date": .date,
        "Binary": .binaryData, "UUID": .uuid, "URI": .uri,
    ]

    private static let posix = Locale(identifier: "en_US_POSIX")

    let element: XcodeModelElement

    /// The attribute the element declares. Problems with its default value, bounds or flags are reported
    /// to the element's diagnostics and the attribute is still returned, so that each is found; a problem
    /// that leaves no attribute to return is thrown.
    /// - Throws: `XcodeModelError.missingAttribute` (`name`), `.invalidValue` (an unknown type),
    ///   `.unsupported` (composite attributes, the Undefined type — no `attributeType` — on an attribute
    ///   that is not transient, and types Granary lacks). Reported:
    ///   `.unknownAttribute`, `.invalidValue` for a flag that is not YES/NO or a
    ///   default or bound that does not parse as the attribute's type or that the type does not take.
    func decode() throws(XcodeModelError) -> AttributeDescription {
        try element.checkAttributes(Self.knownAttributes)
        let name = try element.required("name")
        let derivation = XcodeDerivedAttribute.derivation(of: element, isDerived: flag("derived"))
        let type = try attributeType()
        var rules = element.diagnostics.attempt { () throws(XcodeModelError) in try bounds(for: type) } ?? []
        if let pattern = element.string("regularExpressionString"), !pattern.isEmpty {
            rules.append(.regex(pattern))
        }
        let initial: (any Sendable)? = element.diagnostics.attempt { () throws(XcodeModelError) -> (any Sendable)? in
            try defaultValue(for: type)
        } ?? nil
        return AttributeDescription(
            name: name, type: type, isOptional: flag("optional"), defaultValue: initial,
            isTransient: flag("transient"), isIndexed: flag("indexed"), validationRules: rules,
            renamingIdentifier: element.renamingIdentifier, derivationExpression: derivation,
            preservesValueInHistoryOnDeletion: flag("preserveAfterDeletion"))
    }

    /// A YES/NO flag; one that is neither is reported and read as NO.
    private func flag(_ name: String) -> Bool {
        element.diagnostics.attempt { () throws(XcodeModelError) in try element.flag(name) } ?? false
    }

    // MARK: Type

    private func attributeType() throws(XcodeModelError) -> AttributeType {
        // Xcode writes no attributeType for its "Undefined" type; it is allowed on transient attributes only
        // (Core Data's model compiler refuses it elsewhere, and the model check reports it).
        guard let name = element.nonEmpty("attributeType") else { return try undefined() }
        if let type = Self.types[name] { return type }
        switch name {
        case "Transformable":
            let type = transformableType()
            if case .transformable(let typeName) = type, type != .secureUnarchiveFromData {
                element.diagnostics.warn(.transformerNeeded(element.location, attribute: element.string("name") ?? "", typeName: typeName))
            }
            return type
        case "Undefined":
            // Not what Xcode writes (it leaves the type out), but unambiguous.
            return try undefined()
        case "Composite":
            throw .unsupported(
                element.location, feature: "composite attributes (Xcode 15)",
                reason: "Granary stores no composite attribute; declare the composite's fields as attributes of the "
                    + "entity (address_city, address_street…)")
        case "Object ID":
            throw .unsupported(
                element.location, feature: "attribute type \(name)",
                reason: "Granary's attribute types are integers, Double, Float, Decimal, Boolean, String, Date, Binary, "
                    + "UUID, URI, Transformable and (for transient attributes) Undefined")
        default:
            throw element.invalid("attributeType", "not an attribute type Xcode writes")
        }
    }

    /// The Undefined type, which only a transient attribute may have.
    private func undefined() throws(XcodeModelError) -> AttributeType {
        guard flag("transient") else {
            throw .unsupported(
                element.location, feature: "attribute type Undefined on a stored attribute",
                reason: "Core Data refuses it too (such values have no storage form): choose a type, or make the "
                    + "attribute transient")
        }
        return .undefined
    }

    /// The transformable type of the attribute, named after what codes its values, as Core Data decides:
    /// - an app's transformer (`valueTransformerName` other than Foundation's archiving ones) codes them
    ///   whatever the custom class says, so its name is the type's name, under which the app registers it;
    /// - otherwise Foundation's keyed archiver does: for no custom class, or a property-list class
    ///   (`NSArray`, `[String]`…), the type is `secureUnarchiveFromData`, so changing the default
    ///   transformer's name or declaring the class changes nothing stored, as in Core Data;
    /// - any other class (`UIColor`, `CKRecordID`, an app's `NSSecureCoding` class) keeps its name (a
    ///   leading "." means the current module): the model loads, and storing or reading such a value
    ///   needs a transformer registered under that name.
    private func transformableType() -> AttributeType {
        if let transformer = element.nonEmpty("valueTransformerName"), !KeyedArchive.archivingTransformerNames.contains(transformer) {
            return .transformable(valueTypeName: transformer)
        }
        guard let className = element.nonEmpty("customClassName") else { return .secureUnarchiveFromData }
        let name = className.hasPrefix(".") ? String(className.dropFirst()) : className
        return PropertyListTypeName.isArchived(name) ? .secureUnarchiveFromData : .transformable(valueTypeName: name)
    }

    // MARK: Default value

    private func defaultValue(for type: AttributeType) throws(XcodeModelError) -> (any Sendable)? {
        if type == .date {
            if element.string("defaultDateTimeInterval") != nil {
                return try date("defaultDateTimeInterval")
            }
            // Old files wrote a date default as text; "now" and other words never had an effect in Core Data.
            if let text = element.string("defaultValueString"), Double(text) != nil {
                return try date("defaultValueString")
            }
            return nil
        }
        guard let text = element.string("defaultValueString") else { return nil }
        // Xcode writes an empty default for a cleared field; only a string can default to "".
        if text.isEmpty && type != .string { return nil }
        func invalid(_ reason: String) -> XcodeModelError { element.invalid("defaultValueString", reason) }
        switch type {
        case .integer16:
            guard let value = integer(text).flatMap({ Int16(exactly: $0) }) else { throw invalid("not a 16-bit integer") }
            return value
        case .integer32:
            guard let value = integer(text).flatMap({ Int32(exactly: $0) }) else { throw invalid("not a 32-bit integer") }
            return value
        case .integer64:
            guard let value = integer(text) else { throw invalid("not a 64-bit integer") }
            return value
        case .double:
            guard let value = Double(text) else { throw invalid("not a number") }
            return value
        case .float:
            guard let value = Float(text) else { throw invalid("not a number") }
            return value
        case .decimal:
            guard let value = decimal(text) else { throw invalid("not a decimal number") }
            return value
        case .boolean:
            switch text {
            case "YES", "true": return true
            case "NO", "false": return false
            default:
                // Older Xcode versions wrote Boolean defaults as numbers ("0.0", "1.0", even "100"); Core Data
                // reads any nonzero number as true.
                guard let number = Double(text), number.isFinite else { throw invalid("expected YES or NO") }
                return number != 0
            }
        case .string:
            return text
        case .uuid:
            guard let value = UUID(uuidString: text) else { throw invalid("not a UUID") }
            return value
        case .uri:
            guard let value = URL(string: text) else { throw invalid("not a URI") }
            return value
        case .date, .binaryData, .transformable, .undefined:
            throw invalid("a \(type) attribute takes no default value")
        }
    }

    // MARK: Bounds

    /// The validation rules for Xcode's minimum and maximum: a length for strings and binary data, a range
    /// for numbers and dates.
    private func bounds(for type: AttributeType) throws(XcodeModelError) -> [ValidationRule] {
        if type == .date {
            let min = try dateBound("minDateTimeInterval", orText: "minValueString")
            let max = try dateBound("maxDateTimeInterval", orText: "maxValueString")
            return min == nil && max == nil ? [] : [.range(min: min.map(ValidationBound.date), max: max.map(ValidationBound.date))]
        }
        let minText = element.nonEmpty("minValueString")
        let maxText = element.nonEmpty("maxValueString")
        if minText == nil && maxText == nil { return [] }
        switch type {
        case .string, .binaryData:
            return [.length(min: try element.count("minValueString"), max: try element.count("maxValueString"))]
        case .integer16, .integer32, .integer64, .double, .float, .decimal:
            return [.range(min: try numericBound("minValueString", type), max: try numericBound("maxValueString", type))]
        default:
            let attribute = minText != nil ? "minValueString" : "maxValueString"
            throw element.invalid(attribute, "a \(type) attribute has no minimum or maximum")
        }
    }

    private func numericBound(_ attribute: String, _ type: AttributeType) throws(XcodeModelError) -> ValidationBound? {
        guard let text = element.nonEmpty(attribute) else { return nil }
        switch type {
        case .integer16, .integer32, .integer64:
            guard let value = Int64(text) else { throw element.invalid(attribute, "not an integer") }
            return .integer(value)
        case .decimal:
            guard let value = decimal(text) else { throw element.invalid(attribute, "not a decimal number") }
            return .decimal(value)
        default:
            guard let value = Double(text) else { throw element.invalid(attribute, "not a number") }
            return .double(value)
        }
    }

    private func dateBound(_ attribute: String, orText fallback: String) throws(XcodeModelError) -> Date? {
        if element.string(attribute) != nil { return try date(attribute) }
        guard element.nonEmpty(fallback) != nil else { return nil }
        return try date(fallback)
    }

    private func date(_ attribute: String) throws(XcodeModelError) -> Date {
        guard let text = element.string(attribute), let seconds = Double(text), seconds.isFinite else {
            throw element.invalid(attribute, "expected seconds since 2001-01-01 00:00:00 UTC")
        }
        return Date(timeIntervalSinceReferenceDate: seconds)
    }

    /// An integer default as files from older Xcode versions write them too: a whole number written as a
    /// decimal ("0.0", "12.0"), or YES/NO (1 and 0), which Core Data's model compiler accepts. A number with
    /// a fractional part is not an integer default, and stays an error.
    private func integer(_ text: String) -> Int64? {
        if let value = Int64(text) { return value }
        switch text {
        case "YES": return 1
        case "NO": return 0
        default:
            guard let number = Double(text), number.rounded() == number else { return nil }
            return Int64(exactly: number)
        }
    }

    /// A decimal number written the plain way (`-12.50`, `1e3`); `Decimal(string:)` alone would accept a
    /// number followed by anything.
    private func decimal(_ text: String) -> Decimal? {
        guard text.wholeMatch(of: /[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?/) != nil else { return nil }
        return Decimal(string: text, locale: Self.posix)
    }
}
