import Granary

/// A managed object class whose objects carry their own global identifier (Ensembles 3's `Syncable`).
///
/// Objects created on two devices with the same global identifier become one object when the devices
/// merge, with the relationships of both. Choose a value that is stable for the object's life (a UUID, a
/// server ID); an auto-increment number differs between devices and makes duplicates instead.
public protocol Syncable: ManagedObject {
    /// The name of the string or UUID attribute that holds the object's global identifier.
    static var globalIdentifierKey: String { get }
}
