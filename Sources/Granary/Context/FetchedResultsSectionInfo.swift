/// What a section of a `FetchedResultsController` tells a list (Core Data's
/// `NSFetchedResultsSectionInfo`): its name, index title and objects.
///
/// `FetchedResultsController.Section` is the controller's conforming value; write code that draws a
/// section against this protocol to accept any source of sections.
public protocol FetchedResultsSectionInfo<Result> {
    /// The kind of object the section holds.
    associatedtype Result: ManagedObject
    /// The section's name: the section key path's value as text, `""` without one.
    var name: String { get }
    /// The section's title in a section index, if it has one.
    var indexTitle: String? { get }
    /// How many objects the section holds.
    var numberOfObjects: Int { get }
    /// The section's objects, in order.
    var objects: [Result] { get }
}
