/// A property whose value is the result of a fetch: Core Data's `NSFetchedPropertyDescription`.
///
/// Use one for a "weak", one-way link that a relationship cannot express, such as "the other books in
/// this book's language" or "the reviews that mention a word kept in the model". Reading the property
/// on an object (`ManagedObject.value(forKey:)` or `ManagedObject.fetchedObjects(forKey:as:)`) runs the
/// fetch the first time and keeps the result until the object is refreshed
/// (`ManagedObjectContext.refresh(_:mergeChanges:)`); nothing is stored, so a fetched property never
/// changes a store's version hash and adding or removing one needs no migration.
///
/// The predicate is Core Data's format syntax (`PredicateParser`) with two variables:
/// `$FETCH_SOURCE` is the object whose property is read (`author == $FETCH_SOURCE`,
/// `language == $FETCH_SOURCE.language`), and `$FETCHED_PROPERTY` is this description, so
/// `$FETCHED_PROPERTY.userInfo.word` reads `userInfo["word"]`.
///
/// ```swift
/// Entity("Author") {
///     Attribute("name", .string)
///     FetchedProperty("longBooks", entity: "Book", predicate: "author == $FETCH_SOURCE AND pages > 300",
///                     sortKeys: [SortKey("title")])
/// }
/// ```
public struct FetchedPropertyDescription: Sendable, Hashable, CustomStringConvertible {
    /// The property's key: unique among the entity's properties and fetched properties.
    public let name: String
    /// The entity whose objects the fetch returns (with its sub-entities' objects).
    public let destinationEntityName: String
    /// The filter, in `NSPredicate` format syntax, with `$FETCH_SOURCE` and `$FETCHED_PROPERTY`; nil
    /// fetches every object of the destination entity.
    public let predicateFormat: String?
    /// The order of the result; empty leaves it unspecified (the store's order).
    public let sortKeys: [SortKey]
    /// Values the predicate can read as `$FETCHED_PROPERTY.userInfo.<key>`; Xcode's "User Info" pane.
    public let userInfo: [String: String]
    /// The entity that declares the fetched property (for inherited ones, the superentity); nil until an
    /// `EntityDescription` holds it.
    public let entityName: String?

    /// A fetched property description.
    ///
    /// - Parameters:
    ///   - name: The key the objects read it by.
    ///   - destinationEntityName: The entity to fetch.
    ///   - predicateFormat: The filter in `NSPredicate` format syntax; nil for every object.
    ///   - sortKeys: The order of the result.
    ///   - userInfo: Values for `$FETCHED_PROPERTY.userInfo.<key>`.
    public init(
        name: String,
        destinationEntityName: String,
        predicateFormat: String? = nil,
        sortKeys: [SortKey] = [],
        userInfo: [String: String] = [:]
    ) {
        self.init(
            name: name, destinationEntityName: destinationEntityName, predicateFormat: predicateFormat,
            sortKeys: sortKeys, userInfo: userInfo, entityName: nil)
    }

    private init(
        name: String, destinationEntityName: String, predicateFormat: String?, sortKeys: [SortKey],
        userInfo: [String: String], entityName: String?
    ) {
        self.name = name
        self.destinationEntityName = destinationEntityName
        self.predicateFormat = predicateFormat
        self.sortKeys = sortKeys
        self.userInfo = userInfo
        self.entityName = entityName
    }

    /// `"Entity.fetchedProperty"`, or just the name before an entity holds it.
    public var qualifiedName: String {
        entityName.map { "\($0).\(name)" } ?? name
    }

    public var description: String {
        "fetched property \(qualifiedName) -> [\(destinationEntityName)]" + (predicateFormat.map { " where \($0)" } ?? "")
    }

    func declared(in entity: String) -> FetchedPropertyDescription {
        FetchedPropertyDescription(
            name: name, destinationEntityName: destinationEntityName, predicateFormat: predicateFormat,
            sortKeys: sortKeys, userInfo: userInfo, entityName: entity)
    }

    /// The predicate with `source` standing for `$FETCH_SOURCE` and this description for
    /// `$FETCHED_PROPERTY`.
    ///
    /// - Throws: `PredicateParseError` when the format does not parse, or a variable's key path names no
    ///   value (an unknown key of the source object, a missing user-info key).
    func predicate(source: ManagedObject) throws -> PredicateNode? {
        guard let predicateFormat else { return nil }
        return try PredicateParser.parse(
            predicateFormat, variables: [Self.sourceVariable: source, Self.propertyVariable: self])
    }

    /// Core Data's names of the two variables a fetched property's predicate may use.
    static let sourceVariable = "FETCH_SOURCE"
    static let propertyVariable = "FETCHED_PROPERTY"
}

extension FetchedPropertyDescription: PredicateVariableValue {
    /// `name`, `entityName`, `destinationEntityName` and `userInfo` (a dictionary), as key-value coding
    /// reads them from Core Data's description.
    func predicateVariableValue(forKey key: String) -> PredicateVariableLookup {
        switch key {
        case "name": return .value(name)
        case "entityName", "entity": return .value(entityName)
        case "destinationEntityName": return .value(destinationEntityName)
        case "userInfo": return .value(userInfo)
        default: return .unknownKey
        }
    }
}
