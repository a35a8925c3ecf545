/// A named index over one or more properties of an entity: Core Data's `NSFetchIndexDescription`.
///
/// Declare it with `Index(_:_:)` in an `Entity` block or pass it to `EntityDescription(indexes:)`.
/// The store creates it as the engine index `"<Entity>_<name>"` (see `StorageMapping`); the fetch layer
/// uses it to plan queries.
public struct FetchIndexDescription: Sendable, Hashable, CustomStringConvertible {
    /// The index's name, unique among the entity's indexes.
    public let name: String
    /// The indexed properties in key order.
    public let elements: [FetchIndexElement]

    /// An index over `elements`, compared in the order given.
    public init(name: String, elements: [FetchIndexElement]) {
        self.name = name
        self.elements = elements
    }

    /// An index from `(property, ascending)` pairs, in Core Data's element-description shape.
    public init(name: String, elements: [(property: String, ascending: Bool)]) {
        self.init(name: name, elements: elements.map { FetchIndexElement(propertyName: $0.property, isAscending: $0.ascending) })
    }

    public var description: String {
        "index \(name)(" + elements.map(\.description).joined(separator: ", ") + ")"
    }
}

/// One property of a `FetchIndexDescription` and its sort direction.
public struct FetchIndexElement: Sendable, Hashable, CustomStringConvertible {
    /// An attribute or to-one relationship of the entity, own or inherited.
    public let propertyName: String
    public let isAscending: Bool

    /// An element sorting `propertyName` ascending unless `isAscending` is false.
    public init(propertyName: String, isAscending: Bool = true) {
        self.propertyName = propertyName
        self.isAscending = isAscending
    }

    /// An ascending element, for `Index("byName", .ascending("name"))`.
    public static func ascending(_ property: String) -> FetchIndexElement {
        FetchIndexElement(propertyName: property, isAscending: true)
    }

    /// A descending element, for `Index("byBorn", .descending("born"))`.
    public static func descending(_ property: String) -> FetchIndexElement {
        FetchIndexElement(propertyName: property, isAscending: false)
    }

    public var description: String { "\(propertyName) \(isAscending ? "asc" : "desc")" }
}
