import Granary
import GranaryStack

// Core Data's class names for Granary's own types, which are the same classes: an object made through one
// name is the other. Where Core Data's signatures differ from Granary's, extensions in this module add
// Core Data's forms.

/// Core Data's `NSManagedObject`: Granary's `ManagedObject`. Subclass it and declare properties with
/// `@Managed` where Core Data code says `@NSManaged`.
public typealias NSManagedObject = ManagedObject
/// Core Data's `NSManagedObjectContext`: Granary's `ManagedObjectContext`.
public typealias NSManagedObjectContext = ManagedObjectContext
/// Core Data's `NSManagedObjectID`: Granary's `ManagedObjectID` (a value, not a class).
public typealias NSManagedObjectID = ManagedObjectID
/// Core Data's `NSManagedObjectModel`: Granary's `ManagedObjectModel`.
public typealias NSManagedObjectModel = ManagedObjectModel
/// Core Data's `NSEntityDescription`: Granary's `EntityDescription`.
public typealias NSEntityDescription = EntityDescription
/// Core Data's `NSAttributeDescription`: Granary's `AttributeDescription`.
public typealias NSAttributeDescription = AttributeDescription
/// Core Data's `NSRelationshipDescription`: Granary's `RelationshipDescription`.
public typealias NSRelationshipDescription = RelationshipDescription
/// Core Data's `NSFetchedPropertyDescription`: Granary's `FetchedPropertyDescription`, whose fetch is a
/// destination entity, a predicate format and sort keys rather than an `NSFetchRequest`.
public typealias NSFetchedPropertyDescription = FetchedPropertyDescription
/// Core Data's `NSDerivedAttributeDescription`: an `AttributeDescription` with a `derivationExpression`
/// (text, where Core Data holds an `NSExpression`).
public typealias NSDerivedAttributeDescription = AttributeDescription
/// Core Data's `NSPersistentStoreCoordinator`: Granary's `PersistentStoreCoordinator`.
public typealias NSPersistentStoreCoordinator = PersistentStoreCoordinator
/// Core Data's `NSPersistentStore`: Granary's `PersistentStore`.
public typealias NSPersistentStore = PersistentStore
/// Core Data's `NSPersistentContainer`: GranaryStack's `PersistentContainer`.
public typealias NSPersistentContainer = PersistentContainer
/// Core Data's `NSPersistentStoreDescription`: GranaryStack's `PersistentStoreDescription`.
public typealias NSPersistentStoreDescription = PersistentStoreDescription
/// Core Data's `NSMergePolicy`: Granary's `MergePolicy`.
public typealias NSMergePolicy = MergePolicy
/// Core Data's `NSFetchedResultsChangeType`: Granary's `FetchedResultsChangeType`.
public typealias NSFetchedResultsChangeType = FetchedResultsChangeType
#if !canImport(Darwin)
/// Foundation's `UndoManager`, which Linux's Foundation lacks: Granary's `ContextUndoManager`, so that
/// `context.undoManager = UndoManager()` compiles as written. Not declared where Foundation has its own
/// (Apple's platforms), which would make the name ambiguous.
public typealias UndoManager = ContextUndoManager
#endif
