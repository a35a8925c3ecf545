import Granary

extension FetchedResultsController {
    /// A controller of a Core Data fetch request: Core Data's
    /// `init(fetchRequest:managedObjectContext:sectionNameKeyPath:cacheName:)`. The request is read
    /// once, here; `cacheName` is accepted and not used (Granary keeps no section cache on disk).
    ///
    /// A request whose predicate did not parse makes a controller whose `performFetch()` throws the
    /// parse error.
    public convenience init(fetchRequest: NSFetchRequest<Result>, managedObjectContext context: ManagedObjectContext,
                            sectionNameKeyPath: String?, cacheName name: String?) {
        var request: FetchRequest<Result>
        do {
            request = try fetchRequest.granaryRequest(of: Result.self, model: context.model)
        } catch {
            // The controller's own fetch reports it: a predicate that matches nothing would hide it.
            request = FetchRequest<Result>(entityName: fetchRequest.entityName ?? "\(Result.self)")
            request.filter = .compare(["\u{0}unparsed predicate: \(error)"], .equal, .value(.null))
        }
        self.init(fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: sectionNameKeyPath)
    }
}
