import Foundation

extension MappingModel {
    /// Reads an `.xcmappingmodel` package (or the `xcmapping.xml` inside it).
    ///
    /// The file is the XML store Xcode's mapping editor saves: one `XDDEVMAPPINGMODEL` object naming the
    /// two model versions by path and listing its `XDDEVENTITYMAPPING` objects, each with its
    /// `XDDEVATTRIBUTEMAPPING` and `XDDEVRELATIONSHIPMAPPING` objects. Xcode's own copies of the two
    /// models (other object types) are skipped: the versions come from the model bundle.
    ///
    /// Read: entity mappings (`name`, `sourcename`, `destinationname`, `mappingtypename`,
    /// `migrationpolicyclassname`, `mappingnumber`); property mappings with an expression Xcode
    /// generates (`autogenerateexpression`, `sourcekeypath`, `sourcemappingname`) or one written as text
    /// in a `valueexpression` string attribute, or archived by Xcode (`valueexpressiondata`, see
    /// `MappingExpression(archived:)`); source filter predicates (`sourcefilterpredicatestring`).
    /// Refused, naming the element: an archived expression of a kind Granary does not read, a filter it
    /// cannot parse, a custom source fetch.
    /// - Throws: `MappingModelError.unreadable`, `.malformed`, `.unsupported`, `.badExpression`.
    public init(contentsOf url: URL) throws(MappingModelError) {
        var isDirectory: ObjCBool = false
        let fileURL = FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && isDirectory.boolValue
            ? url.appendingPathComponent("xcmapping.xml") : url
        let path = url.path
        let data: Data
        do { data = try Data(contentsOf: fileURL) } catch {
            throw .unreadable(path: path, reason: "\(fileURL.lastPathComponent) cannot be read (\(error.localizedDescription))")
        }
        let root: XMLReader.Element
        do { root = try XMLReader.parse(Array(data)) } catch {
            throw .malformed(path: path, line: error.line, reason: error.reason)
        }
        guard root.name == "database" else {
            throw .malformed(path: path, line: root.line, reason: "the root element is <\(root.name)>, not <database>")
        }
        var objects: [String: StoredObject] = [:]
        for element in root.children where element.name == "object" {
            guard let id = element.attribute("id"), let type = element.attribute("type") else {
                throw .malformed(path: path, line: element.line, reason: "an <object> without id or type")
            }
            var object = StoredObject(type: type.uppercased(), id: id, line: element.line)
            for child in element.children {
                guard let name = child.attribute("name")?.lowercased() else { continue }
                if child.name == "attribute" {
                    object.attributes[name] = child.text
                } else if child.name == "relationship" {
                    object.relationships[name] = (child.attribute("idrefs") ?? "").split(separator: " ").map(String.init)
                }
            }
            objects[id] = object
        }
        guard let model = objects.values.first(where: { $0.type == "XDDEVMAPPINGMODEL" }) else {
            throw .malformed(path: path, line: nil, reason: "it holds no XDDEVMAPPINGMODEL object")
        }
        func versionName(_ recorded: String?) -> String? {
            guard let recorded, !recorded.isEmpty else { return nil }
            return ((recorded as NSString).lastPathComponent as NSString).deletingPathExtension
        }
        var mappings: [(number: Int, mapping: EntityMapping)] = []
        for id in model.relationships["entitymappings"] ?? [] {
            guard let object = objects[id], object.type == "XDDEVENTITYMAPPING" else {
                throw .malformed(path: path, line: model.line, reason: "entitymappings names \(id), which is no XDDEVENTITYMAPPING object")
            }
            mappings.append((Int(object.attributes["mappingnumber"] ?? "") ?? Int.max, try Self.entityMapping(object, objects: objects, path: path)))
        }
        self.init(from: versionName(model.attributes["sourcemodelpath"]), to: versionName(model.attributes["destinationmodelpath"]),
                  entityMappings: mappings.enumerated().sorted { ($0.element.number, $0.offset) < ($1.element.number, $1.offset) }.map(\.element.mapping),
                  path: path)
    }

    /// The mapping models shipped beside a model bundle, as Core Data finds them in the app's bundle:
    /// every `.xcmappingmodel` in the directory holding `bundleURL` whose recorded versions are versions
    /// of that bundle (one that records none is taken too), in file name order.
    ///
    /// Use it to fill `MigrationOptions.mappingModels` for an `.xcdatamodeld` shipped as a resource.
    /// - Throws: `MappingModelError` for a mapping model that cannot be read; `.unreadable` when the
    ///   directory or the bundle cannot be listed.
    public static func all(besideBundleAt bundleURL: URL) throws(MappingModelError) -> [MappingModel] {
        let folder = bundleURL.deletingLastPathComponent()
        let versions: Set<String>
        let entries: [String]
        do {
            versions = Set(try XcodeModelBundle.listing(of: bundleURL).packages.map(\.name))
            entries = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        } catch {
            throw .unreadable(path: bundleURL.path, reason: "\(error)")
        }
        var result: [MappingModel] = []
        for entry in entries.sorted() where entry.hasSuffix(".xcmappingmodel") {
            let mapping = try MappingModel(contentsOf: folder.appendingPathComponent(entry))
            if [mapping.sourceVersionName, mapping.destinationVersionName].compactMap({ $0 }).allSatisfy(versions.contains) {
                result.append(mapping)
            }
        }
        return result
    }

    /// One `<object>` of the file: its attributes as text, its relationships as ID lists.
    private struct StoredObject {
        var type: String
        var id: String
        var line: Int
        var attributes: [String: String] = [:]
        var relationships: [String: [String]] = [:]

        var element: String { "\(type) object \(id) (line \(line))" }
        func flag(_ name: String) -> Bool { ["1", "yes", "true"].contains((attributes[name] ?? "").lowercased()) }
        func text(_ name: String) -> String? { attributes[name].flatMap { $0.isEmpty ? nil : $0 } }
    }

    private static func entityMapping(_ object: StoredObject, objects: [String: StoredObject], path: String) throws(MappingModelError) -> EntityMapping {
        let source = object.text("sourcename")
        let destination = object.text("destinationname")
        let name = object.text("name") ?? (source.flatMap { s in destination.map { "\(s)To\($0)" } } ?? destination ?? source ?? object.id)
        let filter = object.text("sourcefilterpredicatestring").flatMap { $0 == "TRUEPREDICATE" ? nil : $0 }
        if let filter {
            do { _ = try PredicateParser.parse(filter) } catch {
                throw .unsupported(path: path, element: "\(object.element) sourcefilterpredicatestring",
                                   reason: "a filter predicate Granary cannot read ('\(filter)': \(error))")
            }
        }
        if object.text("sourceexpressiondata") != nil && object.attributes["autogenerateexpression"] != nil && !object.flag("autogenerateexpression") {
            throw .unsupported(path: path, element: "\(object.element) sourceexpressiondata", reason: "a custom fetch of the source objects")
        }
        let type: MappingType
        // Xcode writes the plain name ("Transform"); Core Data's constant names are accepted too.
        var typeName = (object.text("mappingtypename") ?? "").lowercased()
        if typeName.hasPrefix("ns") && typeName.hasSuffix("entitymappingtype") { typeName = String(typeName.dropFirst(2).dropLast("entitymappingtype".count)) }
        switch typeName {
        case "custom": type = .custom
        case "add": type = .add
        case "remove": type = .remove
        case "copy": type = .copy
        case "transform": type = .transform
        case "", "undefined": type = source == nil ? .add : destination == nil ? .remove : .transform
        case let other:
            throw .unsupported(path: path, element: "\(object.element) mappingtypename", reason: "unknown mapping type '\(other)'")
        }
        func properties(_ key: String, kind: String) throws(MappingModelError) -> [PropertyMapping] {
            var result: [PropertyMapping] = []
            for id in object.relationships[key] ?? [] {
                guard let property = objects[id], property.type == kind else {
                    throw .malformed(path: path, line: object.line, reason: "\(key) of \(object.element) names \(id), which is no \(kind) object")
                }
                guard let propertyName = property.text("name") else {
                    throw .malformed(path: path, line: property.line, reason: "\(property.element) has no name")
                }
                result.append(PropertyMapping(name: propertyName, valueExpression: try expression(of: property, mapping: name, path: path)))
            }
            return result
        }
        return EntityMapping(name: name, mappingType: type, sourceEntityName: source, destinationEntityName: destination,
                             migrationPolicyClassName: object.text("migrationpolicyclassname"),
                             attributeMappings: try properties("attributemappings", kind: "XDDEVATTRIBUTEMAPPING"),
                             relationshipMappings: try properties("relationshipmappings", kind: "XDDEVRELATIONSHIPMAPPING"),
                             sourceFilter: filter)
    }

    /// A property mapping's expression: written as text, spelled out by key path and mapping name
    /// (relationships), or nil for the one Xcode generates (the source property of the same name).
    private static func expression(of property: StoredObject, mapping: String, path: String) throws(MappingModelError) -> MappingExpression? {
        let name = property.text("name") ?? property.id
        if let text = property.text("valueexpression") {
            do { return try MappingExpression(parsing: text) } catch {
                throw .badExpression(path: path, mapping: mapping, property: name, reason: error.description)
            }
        }
        if let encoded = property.text("valueexpressiondata"), !property.flag("autogenerateexpression") {
            guard let data = Data(base64Encoded: encoded, options: .ignoreUnknownCharacters) else {
                throw .malformed(path: path, line: property.line, reason: "\(property.element): valueexpressiondata is not base64")
            }
            do { return try MappingExpression(archived: Array(data)) } catch {
                throw .unsupported(path: path, element: "\(property.element) valueexpressiondata",
                                   reason: "an archived NSExpression Granary cannot read (\(error.reason)); write the expression as text in a 'valueexpression' string attribute")
            }
        }
        if property.type == "XDDEVRELATIONSHIPMAPPING", property.text("sourcekeypath") != nil || property.text("sourcemappingname") != nil {
            let keyPath = (property.text("sourcekeypath") ?? name).split(separator: ".").map(String.init)
            guard let through = property.text("sourcemappingname") else {
                return .function(target: .variable("manager", keyPath: []), selector: MappingModelMigration.bySourceRelationship,
                                 arguments: [.string(keyPath.joined(separator: ".")), .variable("source", keyPath: keyPath)])
            }
            return .function(target: .variable("manager", keyPath: []), selector: MappingModelMigration.byEntityMapping,
                             arguments: [.string(through), .variable("source", keyPath: keyPath)])
        }
        return nil
    }
}
