import Foundation

/// The part of a model that decides storage, as a store keeps it in its metadata.
///
/// A store records the model that wrote it, not just that model's hash, so that a migration can infer
/// its mapping from the store alone (Core Data needs the old model file at hand; an app that lost it
/// cannot open its users' stores) and `granary migrate` can show what a new model changes. Default
/// values, validation, classes and delete rules are left out: migration does not read them from the
/// source side.
struct StoredModel: Codable, Sendable, Equatable {
    /// Bumped if the shape of this record changes.
    var format = 1
    var versionIdentifier: String?
    var entities: [Entity]

    struct Entity: Codable, Sendable, Equatable {
        var name: String
        var isAbstract: Bool
        var superentity: String?
        var renamingIdentifier: String?
        var attributes: [Attribute]
        var relationships: [Relationship]
        var uniquenessConstraints: [[String]]
        var indexes: [Index]
    }

    struct Attribute: Codable, Sendable, Equatable {
        var name: String
        var type: String
        var isOptional: Bool
        var isTransient: Bool
        var isIndexed: Bool
        var renamingIdentifier: String?
    }

    struct Relationship: Codable, Sendable, Equatable {
        var name: String
        var destination: String
        /// Nil for a one-sided relationship (its hidden inverse is made again from it).
        var inverse: String?
        var isToMany: Bool
        var isOrdered: Bool
        var isOptional: Bool
        var renamingIdentifier: String?
        /// Written only when true, so records of models without transient relationships read as before.
        var isTransient: Bool?
    }

    struct Index: Codable, Sendable, Equatable {
        var name: String
        var properties: [String]
        var ascending: [Bool]
    }

    /// The metadata key under which a store keeps its record.
    static let metadataKey = "GranaryModel"

    init(_ model: ManagedObjectModel) {
        versionIdentifier = model.versionIdentifier
        entities = model.entities.map { entity in
            let own = entity.declaredProperties
            return Entity(
                name: entity.name, isAbstract: entity.isAbstract, superentity: entity.superentity?.name,
                renamingIdentifier: entity.renamingIdentifier,
                attributes: own.compactMap(\.attribute).map {
                    Attribute(name: $0.name, type: $0.type.description, isOptional: $0.isOptional, isTransient: $0.isTransient,
                              isIndexed: $0.isIndexed, renamingIdentifier: $0.renamingIdentifier)
                },
                relationships: own.compactMap(\.relationship).map {
                    Relationship(name: $0.name, destination: $0.destinationEntityName, inverse: $0.inverseName,
                                 isToMany: $0.isToMany, isOrdered: $0.isOrdered, isOptional: $0.isOptional,
                                 renamingIdentifier: $0.renamingIdentifier, isTransient: $0.isTransient ? true : nil)
                },
                uniquenessConstraints: entity.uniquenessConstraints,
                indexes: entity.indexes.map { index in
                    Index(name: index.name, properties: index.elements.map(\.propertyName), ascending: index.elements.map(\.isAscending))
                })
        }
    }

    /// The record as the text stored in metadata.
    var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        // Encoding plain strings, booleans and arrays cannot fail.
        return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
    }

    /// The record a store keeps, or nil when it keeps none (written before stores recorded their model).
    /// - Throws: `MigrationError.unreadableStoredModel` when the record is there but damaged.
    static func from(_ metadata: StoreMetadata) throws(MigrationError) -> StoredModel? {
        guard let text = metadata.userInfo[metadataKey] else { return nil }
        do {
            return try JSONDecoder().decode(StoredModel.self, from: Data(text.utf8))
        } catch {
            throw .unreadableStoredModel("\(error)")
        }
    }

    /// A model with this record's storage: what the store's rows were written with. Transformable types
    /// need not be registered, since migration only copies their bytes.
    /// - Throws: `MigrationError.unreadableStoredModel` when the record does not describe a valid model.
    func makeModel() throws(MigrationError) -> ManagedObjectModel {
        var descriptions: [EntityDescription] = []
        for entity in entities {
            var properties: [PropertyDescription] = []
            for a in entity.attributes {
                guard let type = AttributeType(storedName: a.type) else {
                    throw .unreadableStoredModel("attribute '\(entity.name).\(a.name)' has unknown type '\(a.type)'")
                }
                properties.append(.attribute(AttributeDescription(
                    name: a.name, type: type, isOptional: a.isOptional, isTransient: a.isTransient, isIndexed: a.isIndexed,
                    renamingIdentifier: a.renamingIdentifier)))
            }
            for r in entity.relationships {
                properties.append(.relationship(RelationshipDescription(
                    name: r.name, destinationEntityName: r.destination, inverseName: r.inverse, isToMany: r.isToMany,
                    isOrdered: r.isOrdered, isOptional: r.isOptional, renamingIdentifier: r.renamingIdentifier,
                    isTransient: r.isTransient ?? false)))
            }
            descriptions.append(EntityDescription(
                name: entity.name, isAbstract: entity.isAbstract, superentityName: entity.superentity, properties: properties,
                uniquenessConstraints: entity.uniquenessConstraints,
                indexes: entity.indexes.map { index in
                    FetchIndexDescription(name: index.name, elements: zip(index.properties, index.ascending).map {
                        FetchIndexElement(propertyName: $0, isAscending: $1)
                    })
                },
                renamingIdentifier: entity.renamingIdentifier))
        }
        do {
            return try ManagedObjectModel(entities: descriptions, configurations: [:], versionIdentifier: versionIdentifier)
        } catch {
            throw .unreadableStoredModel("\(error)")
        }
    }
}

extension StoreMetadata {
    /// The entries that describe the model rather than the user's data; replacing user metadata keeps
    /// them.
    static let modelKeys = [PersistentStore.modelHashKey, StoredModel.metadataKey]

    /// Records `model` as the one the store's rows are written with: its version hash and its record.
    mutating func record(_ model: ManagedObjectModel) {
        userInfo[PersistentStore.modelHashKey] = model.versionHash
        userInfo[StoredModel.metadataKey] = StoredModel(model).json
    }
}

extension AttributeType {
    /// The type named by `description`, as a stored model records it.
    init?(storedName name: String) {
        let plain: [String: AttributeType] = [
            "integer16": .integer16, "integer32": .integer32, "integer64": .integer64, "double": .double, "float": .float,
            "decimal": .decimal, "boolean": .boolean, "string": .string, "date": .date, "binaryData": .binaryData,
            "uuid": .uuid, "uri": .uri, "undefined": .undefined,
        ]
        if let type = plain[name] {
            self = type
        } else if name.hasPrefix("transformable("), name.hasSuffix(")") {
            self = .transformable(valueTypeName: String(name.dropFirst("transformable(".count).dropLast()))
        } else {
            return nil
        }
    }
}
