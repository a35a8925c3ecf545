/// An element of a model file as the decoder sees it: typed access to its attributes whose failures name
/// the file, the element and its line, and a check that it says nothing the decoder would skip.
struct XcodeModelElement {
    let element: XMLReader.Element
    /// The file the element came from, for error locations.
    let path: String

    /// The element's tag.
    var tag: String { element.name }

    /// Where the element is, for errors about it.
    var location: XcodeModelError.Location {
        XcodeModelError.Location(path: path, line: element.line, element: element.name, name: element.attribute("name"))
    }

    /// The child elements in document order.
    var children: [XcodeModelElement] {
        element.children.map { XcodeModelElement(element: $0, path: path) }
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
    /// element holds no text, so nothing in the file is silently dropped.
    /// - Throws: `XcodeModelError.unknownAttribute` for the first attribute not in `known`,
    ///   `.unsupported` for text inside the element.
    func checkAttributes(_ known: Set<String>) throws(XcodeModelError) {
        for attribute in element.attributes where !known.contains(attribute.name) {
            throw .unknownAttribute(location, attribute: attribute.name)
        }
        if element.text.contains(where: { !$0.isWhitespace }) {
            throw .unsupported(location, feature: "text inside <\(tag)>", reason: "Xcode writes none there")
        }
    }

    /// Checks that the element has no child elements.
    /// - Throws: `XcodeModelError.unknownElement` for the first child.
    func checkNoChildren() throws(XcodeModelError) {
        if let child = children.first { throw .unknownElement(child.location, parent: tag) }
    }
}
