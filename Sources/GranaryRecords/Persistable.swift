import Granary

/// A managed object identified by an ID of its own (a server's ID, a UUID), which the records services
/// use to find, create, update and delete it and to link JSON to it.
///
/// Adopt it on a `ManagedObject` subclass whose ID attribute is unique in the model (a uniqueness
/// constraint on that attribute): `StoreManager` checks this when it starts.
///
/// ```swift
/// final class User: ManagedObject, Persistable {
///     @Managed var uuid: String
///     static var idKeyPath: ReferenceWritableKeyPath<User, String> { \.uuid }
/// }
/// ```
public protocol Persistable: ManagedObject, FindOrCreatable {
    /// The type of the ID: a string, an integer or a UUID, as the ID attribute stores it.
    associatedtype EntityID: Hashable & Sendable
    /// The `@Managed` property that holds the object's ID.
    static var idKeyPath: ReferenceWritableKeyPath<Self, EntityID> { get }
}
