/// An element of a model file as the decoder sees it: typed access to its attributes whose failures name
/// the file, the element and its line, and a check that it says nothing the decoder would skip.
struct XcodeModelElement {
    let element: XMLReader.Element
    /// The file the element came from, for error locations.
    let path: String
    /// Where problems that do not stop this element from being read, and warnings, go.
    let diagnostics: XcodeDiagnostics

    /// The element's tag.
    var tag: String { element.name }

    /// Where the element is, for errors about it.
    var location: XcodeModelError.Location {
        XcodeModelError.Location(path: path, line: element.line, element: element.name, name: element.attribute("name"))
    }

    /// The child elements in document order.
    var children: [XcodeModelElement] {
        element.children.map { XcodeModelElement(element: $0, path: path, diagnostics: diagnostics) }
    }

    /// The attribute's value as written, or nil when absent.
    func string(_ name: String) -> String? {
        element.attribute(name)
    }

    /// The attribute's value, or nil when it is absent or empty: Xcode writes some cleared fields as `""`.
    func nonEmpty(_ name: String) -> String? {
        guard let value = element.attribute(name), !value.isEmpty else { return nil }
        return value
    }

    /// The attribute's value, which must be present and not empty.
    /// - Throws: `XcodeModelError.missingAttribute` when it is absent or empty.
    func required(_ name: String) throws(XcodeModelError) -> String {
        guard let value = element.attribute(name), !value.isEmpty else {
            throw .missingAttribute(location, attribute: name)
        }
        return value
    }

    /// The renaming identifier of an entity or property: `renamingIdentifier` as older files write it, else
    /// `elementID`, where Xcode's inspector saves its "Renaming ID" field; nil when neither is given. Core
    /// Data's model compiler turns `elementID` into the description's renaming identifier, and the older
    /// attribute takes precedence when both are present.
    var renamingIdentifier: String? {
        nonEmpty("renamingIdentifier") ?? nonEmpty("elementID")
    }

    /// A `YES`/`NO` flag; absent means `NO`, as Xcode writes only the flags that are set.
    /// - Throws: `XcodeModelError.invalidValue` for any other value.
    func flag(_ name: String) throws(XcodeModelError) -> Bool {
        switch element.attribute(name) {
        case nil, "NO": return false
        case "YES": return true
        case let value?: throw .invalidValue(location, attribute: name, value: value, reason: "expected YES or NO")
        }
    }

    /// A non-negative integer, or nil when absent or empty.
    /// - Throws: `XcodeModelError.invalidValue` for anything but decimal digits.
    func count(_ name: String) throws(XcodeModelError) -> Int? {
        guard let value = nonEmpty(name) else { return nil }
        guard let number = Int(value), number >= 0 else {
            throw .invalidValue(location, attribute: name, value: value, reason: "expected a whole number of 0 or more")
        }
        return number
    }

    /// An error about one of the element's attributes.
    func invalid(_ name: String, _ reason: String) -> XcodeModelError {
        .invalidValue(location, attribute: name, value: element.attribute(name) ?? "", reason: reason)
    }

    /// Checks that every attribute is one the decoder knows (reads or deliberately ignores) and that the
    /// element holds no text, so nothing in the file is silently dropped. Each unknown attribute is reported
    /// and the element is still read, so that its other problems are found too.
    ///
    /// An unknown attribute whose value is `NO` or empty is only a warning: Xcode writes a flag that is off,
    /// or a field left empty, as it would leave the attribute out, so such a value cannot change what the
    /// model means. Any other value of an attribute Granary does not know might, and is a problem.
    /// - Throws: `XcodeModelError.unsupported` for text inside the element.
    func checkAttributes(_ known: Set<String>) throws(XcodeModelError) {
        for attribute in element.attributes where !known.contains(attribute.name) {
            if attribute.value == "NO" || attribute.value.isEmpty {
                ignore(attribute.name, "not an attribute Granary knows, and its value means the same as leaving it out")
            } else {
                diagnostics.report(.unknownAttribute(location, attribute: attribute.name))
            }
        }
        if element.text.contains(where: { !$0.isWhitespace }) {
            throw .unsupported(location, feature: "text inside <\(tag)>", reason: "Xcode writes none there")
        }
    }

    /// Checks that the element has no child elements, reporting each one. (Declared throwing so that
    /// callers read alike; it reports rather than throws.)
    func checkNoChildren() throws(XcodeModelError) {
        for child in children { diagnostics.report(.unknownElement(child.location, parent: tag)) }
    }

    /// Records that Core Data ignores `name` on this element, and so does Granary.
    func ignore(_ name: String, _ reason: String) {
        diagnostics.warn(.ignoredAttribute(location, attribute: name, reason: reason))
    }
}
