import Granary

/// A `Persistable` that can be imported from JSON: its ID is read at ``jsonKey`` and every other value
/// is mapped by ``mapValues(from:)``, usually with the `<-` operator.
///
/// ```swift
/// extension User: Parsable {
///     static var jsonKey: String { "id" }
///     func mapValues(from map: MappingValues) throws {
///         firstName <- map["first_name"]
///         birthDate <- (map["birth_date"], dateFormats: ["yyyy-MM-dd"])
///         address <- map["address"]          // a nested object, or the address's ID
///     }
/// }
/// ```
///
/// The ID type must be readable from JSON and usable in a fetch (`String`, the integer types, `UUID`):
/// imports look existing IDs up with `IN` queries.
public protocol Parsable: Persistable where EntityID: JSONConvertible & PredicateValueConvertible {
    /// The (dotted) key of the ID in the JSON object: `"id"`, `"user.id"`. Defaults to the name of the
    /// property `idKeyPath` names; that default is read from a live model the class is bound to, and is
    /// empty while there is none (an import then takes the name from its context's model).
    static var jsonKey: String { get }
    /// Copies the JSON object's values into the receiver. Called after the ID is set, on the context's
    /// queue; the object is the existing one for its ID or a new one.
    /// - Throws: what the `<-` operators throw (a ``ParsingError`` naming key and value); any error fails
    ///   the element.
    func mapValues(from map: MappingValues) throws
}

extension Parsable {
    public static var jsonKey: String {
        KeyPathNames.components(of: idKeyPath, rootedAt: Self.self)?.joined(separator: ".") ?? ""
    }
}
