/// Reads one `<fetchedProperty>` element of a model file as a `FetchedPropertyDescription`:
///
/// ```xml
/// <fetchedProperty name="sameAuthor" optional="YES">
///     <fetchRequest name="fetchedPropertyFetchRequest" entity="Book" predicateString="author == $FETCH_SOURCE.author"/>
///     <userInfo><entry key="word" value="great"/></userInfo>
/// </fetchedProperty>
/// ```
///
/// Xcode's editor gives a fetched property a destination entity, a predicate and user info, and nothing
/// else; `optional`, `transient` and the code-generation and CloudKit attributes mean nothing for a
/// value that is computed when read, and are accepted and ignored.
struct XcodeFetchedPropertyDecoder {
    static let knownAttributes: Set<String> = [
        "name", "optional", "transient", "syncable", "elementID", "renamingIdentifier", "versionHashModifier",
    ]
    static let fetchRequestAttributes: Set<String> = [
        "name", "entity", "predicateString",
        // Ignored: a fetched property always returns objects, whole, with sub-entities' objects.
        "resultType", "returnObjectsAsFaults", "includesSubentities", "includePropertyValues", "fetchBatchSize",
    ]

    let element: XcodeModelElement

    /// The fetched property the element declares.
    /// - Throws: `XcodeModelError.missingAttribute` (`name`, the `<fetchRequest>` or its `entity`),
    ///   `.unknownElement` for a second `<fetchRequest>` or another child. Reported: `.unknownAttribute`.
    func decode() throws(XcodeModelError) -> FetchedPropertyDescription {
        try element.checkAttributes(Self.knownAttributes)
        let name = try element.required("name")
        var request: XcodeModelElement?
        var userInfo: [String: String] = [:]
        for child in element.children {
            switch child.tag {
            case "fetchRequest":
                if request != nil { throw .unknownElement(child.location, parent: element.tag) }
                request = child
            case "userInfo":
                userInfo = try Self.userInfo(child)
            default:
                throw .unknownElement(child.location, parent: element.tag)
            }
        }
        guard let request else { throw .missingAttribute(element.location, attribute: "fetchRequest") }
        try request.checkAttributes(Self.fetchRequestAttributes)
        try request.checkNoChildren()
        let predicate = request.nonEmpty("predicateString")
        return FetchedPropertyDescription(
            name: name, destinationEntityName: try request.required("entity"), predicateFormat: predicate,
            userInfo: userInfo)
    }

    /// `<userInfo><entry key="…" value="…"/></userInfo>` as a dictionary; an entry without a value holds "".
    static func userInfo(_ element: XcodeModelElement) throws(XcodeModelError) -> [String: String] {
        try element.checkAttributes([])
        var entries: [String: String] = [:]
        for entry in element.children {
            guard entry.tag == "entry" else { throw .unknownElement(entry.location, parent: element.tag) }
            try entry.checkAttributes(["key", "value"])
            try entry.checkNoChildren()
            entries[try entry.required("key")] = entry.string("value") ?? ""
        }
        return entries
    }
}
