/// Turns the element tree of an Xcode `contents` file into the entity descriptions and configurations a
/// `ManagedObjectModel` is built from, remembering where each declaration was for error messages.
///
/// What is read: entities (name, class, parent, abstract, renaming identifier from `renamingIdentifier`
/// or `elementID`), attributes (see `XcodeAttributeDecoder`; derived ones included), relationships,
/// fetched properties (see `XcodeFetchedPropertyDecoder`), uniqueness constraints, fetch indexes and the
/// older compound indexes, configurations. What is skipped on purpose: the diagram layout (`<elements>`),
/// `<userInfo>` dictionaries, fetch request templates (`<fetchRequest>` at model level: Granary's
/// `FetchRequest` is built in code), Xcode 4's `name` on `<model>`, and attributes that only concern code
/// generation, Spotlight, CloudKit or Core Data's SQLite layout. What Core Data ignores where it is written
/// (`ordered` on a to-one, `indexed` on a relationship) and unknown attributes whose value is `NO` or empty
/// are skipped with a warning. Everything else, known or not, is an error, so nothing in the file is lost
/// silently.
///
/// A problem skips the element it is about (an attribute, a relationship, an index…) and is reported to
/// `diagnostics`; reading goes on, so that one pass finds every problem of the file.
struct XcodeModelDecoder {
    /// What a file declares, ready for `ManagedObjectModel(entities:configurations:versionIdentifier:)`
    /// when `problems` is empty.
    struct Result {
        var entities: [EntityDescription] = []
        var configurations: [String: Set<String>] = [:]
        /// The keys of `classes` that bound an entity.
        var boundClassKeys: Set<String> = []
        var sourceMap: XcodeSourceMap
        /// Every problem found, in document order; the declarations above lack the elements they are about.
        var problems: [XcodeModelError] = []
        /// What Core Data would load with a warning.
        var warnings: [XcodeModelWarning] = []
    }

    private static let modelType = "com.apple.IDECoreDataModeler.DataModel"
    private static let modelAttributes: Set<String> = [
        "type", "documentVersion", "lastSavedToolsVersion", "systemVersion", "minimumToolsVersion", "sourceLanguage",
        "userDefinedModelVersionIdentifier", "iOSVersion", "macOSVersion", "usedWithCloudKit", "usedWithSwiftData",
        // Xcode 4 wrote `name=""`; the model compiler ignores it (a version's name is its package's).
        "name",
    ]
    private static let entityAttributes: Set<String> = [
        "name", "representedClassName", "parentEntity", "isAbstract", "renamingIdentifier", "elementID",
        // Ignored: code generation, CloudKit and version-hash details with no effect on a Granary store.
        "syncable", "codeGenerationType", "versionHashModifier",
    ]
    private static let relationshipAttributes: Set<String> = [
        "name", "destinationEntity", "inverseName", "inverseEntity", "optional", "toMany", "ordered", "minCount",
        "maxCount", "deletionRule", "renamingIdentifier", "elementID", "transient",
        // Read and ignored with a warning (see `relationship(_:entity:)`).
        "indexed",
        // Ignored, as for attributes.
        "syncable", "versionHashModifier", "spotlightIndexingEnabled", "storedInTruthFile",
    ]
    private static let deleteRules: [String: DeleteRule] = [
        "Nullify": .nullify, "Cascade": .cascade, "Deny": .deny, "No Action": .noAction,
    ]

    /// The file the tree was read from, for error locations.
    let path: String
    let classes: XcodeClassBinding
    private let diagnostics = XcodeDiagnostics()

    init(path: String, classes: XcodeClassBinding) {
        self.path = path
        self.classes = classes
    }

    /// Everything the file declares, with every problem found in it (each element or attribute that is
    /// unknown, unsupported, missing or invalid, in document order) in `Result.problems`.
    func decode(_ root: XMLReader.Element) -> Result {
        var result = Result(sourceMap: XcodeSourceMap(path: path))
        let model = XcodeModelElement(element: root, path: path, diagnostics: diagnostics)
        if model.tag == "model" {
            diagnostics.attempt { () throws(XcodeModelError) in try modelContents(model, into: &result) }
            XcodeInverseCheck(sourceMap: result.sourceMap, diagnostics: diagnostics).reconcile(&result.entities)
        } else {
            diagnostics.report(.notAModel(model.location, reason: "the root element is <\(model.tag)>, where Xcode writes <model>"))
        }
        result.problems = diagnostics.problems
        result.warnings = diagnostics.warnings
        return result
    }

    private func modelContents(_ model: XcodeModelElement, into result: inout Result) throws(XcodeModelError) {
        try model.checkAttributes(Self.modelAttributes)
        if let type = model.string("type"), type != Self.modelType {
            throw model.invalid("type", "expected \(Self.modelType)")
        }
        for child in model.children {
            diagnostics.attempt { () throws(XcodeModelError) in
                switch child.tag {
                case "entity":
                    result.entities.append(try entity(child, into: &result))
                case "configuration":
                    try configuration(child, into: &result)
                case "fetchRequest", "elements":
                    break
                case "composite", "compositeAttribute":
                    throw .unsupported(
                        child.location, feature: "composite attributes (Xcode 15)",
                        reason: "Granary stores no composite attribute; declare the composite's fields as attributes "
                            + "of the entities that use it")
                default:
                    throw .unknownElement(child.location, parent: model.tag)
                }
            }
        }
    }

    // MARK: Entities

    private func entity(_ element: XcodeModelElement, into result: inout Result) throws(XcodeModelError) -> EntityDescription {
        try element.checkAttributes(Self.entityAttributes)
        let name = try element.required("name")
        result.sourceMap.recordEntity(name, at: element.location)
        var objectType: ManagedObject.Type?
        if let className = element.nonEmpty("representedClassName"), let bound = classes.lookup(className) {
            objectType = bound.type
            result.boundClassKeys.insert(bound.key)
        }
        var properties: [PropertyDescription] = []
        var constraints: [[String]] = []
        var indexes: [FetchIndexDescription] = []
        var fetchedProperties: [FetchedPropertyDescription] = []
        var entityUserInfo: [String: String] = [:]
        for child in element.children {
            diagnostics.attempt { () throws(XcodeModelError) in
                switch child.tag {
                case "attribute":
                    try checkPropertyChildren(child)
                    let attribute = try XcodeAttributeDecoder(element: child).decode()
                    result.sourceMap.recordProperty(attribute.name, of: name, at: child.location)
                    properties.append(.attribute(attribute))
                case "relationship":
                    let relationship = try relationship(child, entity: name)
                    result.sourceMap.recordProperty(relationship.name, of: name, at: child.location)
                    properties.append(.relationship(relationship))
                case "fetchedProperty":
                    let fetched = try XcodeFetchedPropertyDecoder(element: child).decode()
                    result.sourceMap.recordProperty(fetched.name, of: name, at: child.location)
                    fetchedProperties.append(fetched)
                case "uniquenessConstraints":
                    try child.checkAttributes([])
                    for constraint in child.children {
                        diagnostics.attempt { () throws(XcodeModelError) in
                            let properties = try valueList(constraint, tag: "uniquenessConstraint", item: "constraint", parent: child.tag)
                            result.sourceMap.recordConstraint(properties, of: name, at: constraint.location)
                            constraints.append(properties)
                        }
                    }
                case "fetchIndex":
                    let index = try fetchIndex(child)
                    result.sourceMap.recordIndex(index.name, of: name, at: child.location)
                    indexes.append(index)
                case "compoundIndexes":
                    try child.checkAttributes([])
                    for compound in child.children {
                        diagnostics.attempt { () throws(XcodeModelError) in
                            let properties = try valueList(compound, tag: "compoundIndex", item: "index", parent: child.tag)
                            // Compound indexes have no names; this one is stable and cannot clash with a fetch
                            // index Xcode would name ("by…Index").
                            let index = FetchIndexDescription(
                                name: (["compoundIndex"] + properties).joined(separator: "_"),
                                elements: properties.map { FetchIndexElement(propertyName: $0) })
                            result.sourceMap.recordIndex(index.name, of: name, at: compound.location)
                            indexes.append(index)
                        }
                    }
                case "userInfo":
                    entityUserInfo.merge(try userInfo(child)) { _, new in new }
                default:
                    throw .unknownElement(child.location, parent: element.tag)
                }
            }
        }
        return EntityDescription(
            name: name, objectType: objectType, isAbstract: try element.flag("isAbstract"),
            superentityName: element.nonEmpty("parentEntity"), properties: properties, uniquenessConstraints: constraints,
            indexes: indexes, renamingIdentifier: element.renamingIdentifier,
            fetchedProperties: fetchedProperties, userInfo: entityUserInfo)
    }

    /// Attributes and relationships may carry a `<userInfo>`, and nothing else; anything else is reported.
    private func checkPropertyChildren(_ element: XcodeModelElement) throws(XcodeModelError) {
        for child in element.children {
            diagnostics.attempt { () throws(XcodeModelError) in
                guard child.tag == "userInfo" else { throw .unknownElement(child.location, parent: element.tag) }
                try userInfo(child)
            }
        }
    }

    /// `<userInfo><entry key="…" value="…"/></userInfo>`: checked for shape, then dropped, since Granary's
    /// descriptions carry no user info.
    /// The `<entry key= value=/>` pairs of a `<userInfo>` (an entry without a value maps to "").
    @discardableResult
    private func userInfo(_ element: XcodeModelElement) throws(XcodeModelError) -> [String: String] {
        try element.checkAttributes([])
        var entries: [String: String] = [:]
        for entry in element.children {
            diagnostics.attempt { () throws(XcodeModelError) in
                guard entry.tag == "entry" else { throw .unknownElement(entry.location, parent: element.tag) }
                try entry.checkAttributes(["key", "value"])
                try entry.checkNoChildren()
                entries[try entry.required("key")] = entry.string("value") ?? ""
            }
        }
        return entries
    }

    /// `<tag><item value="a"/><item value="b"/></tag>`, as uniqueness constraints and compound indexes write
    /// their property names.
    private func valueList(
        _ element: XcodeModelElement, tag: String, item: String, parent: String
    ) throws(XcodeModelError) -> [String] {
        guard element.tag == tag else { throw .unknownElement(element.location, parent: parent) }
        try element.checkAttributes([])
        var values: [String] = []
        for child in element.children {
            guard child.tag == item else { throw .unknownElement(child.location, parent: tag) }
            try child.checkAttributes(["value"])
            try child.checkNoChildren()
            values.append(try child.required("value"))
        }
        return values
    }

    // MARK: Relationships

    private func relationship(_ element: XcodeModelElement, entity: String) throws(XcodeModelError) -> RelationshipDescription {
        try element.checkAttributes(Self.relationshipAttributes)
        try checkPropertyChildren(element)
        let name = try element.required("name")
        let isTransient = try element.flag("transient")
        let destination = try element.required("destinationEntity")
        let inverse = element.nonEmpty("inverseName")
        if inverse == nil { diagnostics.warn(.relationshipWithoutInverse(element.location, entity: entity, relationship: name)) }
        var deleteRule = DeleteRule.nullify
        if let ruleName = element.string("deletionRule") {
            guard let rule = Self.deleteRules[ruleName] else {
                throw element.invalid("deletionRule", "expected Nullify, Cascade, Deny or No Action")
            }
            deleteRule = rule
        }
        // Core Data reads a maximum of 0 as "no limit"; Xcode writes it for cleared fields.
        let maxCount = try element.count("maxCount").flatMap { $0 == 0 ? nil : $0 }
        let isToMany = try element.flag("toMany")
        var isOrdered = try element.flag("ordered")
        if isOrdered && !isToMany {
            // Xcode keeps the checkbox's state after a to-many becomes to-one; Core Data ignores it there.
            element.ignore("ordered", "a to-one relationship has no order")
            isOrdered = false
        }
        if try element.flag("indexed") {
            element.ignore(
                "indexed",
                "Granary declares no index on a relationship; the relationship is stored the same, only fetches by it may be slower")
        }
        return RelationshipDescription(
            name: name, destinationEntityName: destination, inverseName: inverse, isToMany: isToMany,
            isOrdered: isOrdered, deleteRule: deleteRule, isOptional: try element.flag("optional"),
            minCount: try element.count("minCount") ?? 0, maxCount: maxCount,
            renamingIdentifier: element.renamingIdentifier, isTransient: isTransient)
    }

    // MARK: Indexes

    /// `<fetchIndex name="…"><fetchIndexElement property="…" type="Binary" order="ascending"/></fetchIndex>`.
    private func fetchIndex(_ element: XcodeModelElement) throws(XcodeModelError) -> FetchIndexDescription {
        try element.checkAttributes(["name"])
        let name = try element.required("name")
        var elements: [FetchIndexElement] = []
        for child in element.children {
            guard child.tag == "fetchIndexElement" else { throw .unknownElement(child.location, parent: element.tag) }
            try child.checkAttributes(["property", "expression", "expressionType", "type", "order"])
            try child.checkNoChildren()
            if child.string("expression") != nil {
                throw .unsupported(
                    child.location, feature: "expression index",
                    reason: "Granary indexes stored properties; index the property the expression reads")
            }
            switch child.string("type") {
            case nil, "Binary":
                break
            case "RTree":
                throw .unsupported(
                    child.location, feature: "R-tree index",
                    reason: "Granary's indexes are B-trees; use type Binary, with range predicates on each coordinate")
            default:
                throw child.invalid("type", "expected Binary")
            }
            let isAscending: Bool
            switch child.string("order") {
            case nil, "ascending": isAscending = true
            case "descending": isAscending = false
            default: throw child.invalid("order", "expected ascending or descending")
            }
            elements.append(FetchIndexElement(propertyName: try child.required("property"), isAscending: isAscending))
        }
        return FetchIndexDescription(name: name, elements: elements)
    }

    // MARK: Configurations

    /// `<configuration name="…"><memberEntity name="…"/></configuration>`; `usedWithCloudKit` is ignored.
    private func configuration(_ element: XcodeModelElement, into result: inout Result) throws(XcodeModelError) {
        try element.checkAttributes(["name", "usedWithCloudKit"])
        let name = try element.required("name")
        result.sourceMap.recordConfiguration(name, at: element.location)
        if result.configurations[name] != nil {
            throw .invalidModel(element.location, error: .duplicateConfiguration(name))
        }
        var members: Set<String> = []
        for member in element.children {
            diagnostics.attempt { () throws(XcodeModelError) in
                guard member.tag == "memberEntity" else { throw .unknownElement(member.location, parent: element.tag) }
                try member.checkAttributes(["name"])
                try member.checkNoChildren()
                let entity = try member.required("name")
                result.sourceMap.recordMember(entity, of: name, at: member.location)
                members.insert(entity)
            }
        }
        result.configurations[name] = members
    }
}
