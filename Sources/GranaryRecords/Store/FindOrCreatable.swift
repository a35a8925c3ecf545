/// What lets `Persistable`'s find-or-create be an initializer, `User(entityID:context:)`, that hands
/// back an existing object: Swift lets an initializer replace `self` only in an extension of a
/// protocol that is not bound to classes, and `Persistable` is. Every `Persistable` is one; there is
/// nothing to implement.
public protocol FindOrCreatable {}
