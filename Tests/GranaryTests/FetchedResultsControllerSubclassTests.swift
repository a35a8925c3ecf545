import Foundation
import Testing
@testable import Granary

/// A controller that indexes sections by salary band, the way an app subclasses
/// NSFetchedResultsController to change its section index.
final class BandController: FetchedResultsController<Employee> {
    override func sectionIndexTitle(forSectionName sectionName: String) -> String? {
        guard let salary = Int(sectionName) else { return nil }
        return salary < 20 ? "low" : "high"
    }
}

/// An index listing every band, whether or not a section has it.
final class FixedIndexController: FetchedResultsController<Employee> {
    override var sectionIndexTitles: [String] { ["A", "B", "C", "D"] }
}

@Suite struct FetchedResultsControllerSubclassTests {
    static func populate(_ context: ManagedObjectContext) throws {
        for (name, salary) in [("Ada", 10), ("Bea", 10), ("Cy", 20), ("Dee", 30)] { makeEmployee(context, name, salary: salary) }
        try context.save()
    }

    static var request: FetchRequest<Employee> {
        var request = FetchRequest<Employee>()
        request.sortKeys = [SortKey("salary"), SortKey("name")]
        return request
    }

    // Apple: NSFetchedResultsController.sectionIndexTitle(forSectionName:) — "The default implementation
    // returns the capitalized first letter of the section name. You should override this method if you
    // need a different way to convert from a section name to its name in the section index."
    // Apple: NSFetchedResultsController.sectionIndexTitles — "The default implementation returns the
    // array created by calling sectionIndexTitle(forSectionName:) on all the known sections."
    @Test func aSubclassOverridesTheSectionIndexTitle() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            try Self.populate(context)
            let controller = BandController(fetchRequest: Self.request, managedObjectContext: context, sectionNameKeyPath: "salary")
            try controller.performFetch()
            #expect(controller.sections.map(\.indexTitle) == ["low", "high", "high"])
            #expect(controller.sectionIndexTitles == ["low", "high"])
            #expect(controller.section(forSectionIndexTitle: "high", at: 1) == 1)
            // Apple: NSFetchedResultsControllerDelegate.controller(_:sectionIndexTitleForSectionName:) —
            // "If the delegate doesn't implement this method, the default implementation returns" the
            // controller's sectionIndexTitle(forSectionName:).
            let delegate = RecordingDelegate<Employee> { $0.name }
            controller.delegate = delegate
            try controller.performFetch()
            #expect(controller.sections.map(\.indexTitle) == ["low", "high", "high"])
        }
    }

    // Apple: NSFetchedResultsController.section(forSectionIndexTitle:at:) — "Returns the section number
    // for a given section title and index in the section index. … You should override this method if you
    // need a different way to convert from a section title to a section number."
    @Test func theIndexMayListTitlesNoSectionHas() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            try Self.populate(context)
            let controller = FixedIndexController(fetchRequest: Self.request, managedObjectContext: context, sectionNameKeyPath: "name")
            try controller.performFetch()
            #expect(controller.sectionIndexTitles == ["A", "B", "C", "D"])
            #expect(controller.section(forSectionIndexTitle: "C", at: 2) == 2)
            let plain = FetchedResultsController(fetchRequest: Self.request, managedObjectContext: context, sectionNameKeyPath: "salary")
            try plain.performFetch()
            #expect(plain.section(forSectionIndexTitle: "2", at: 1) == 1)
            #expect(plain.section(forSectionIndexTitle: "25", at: 0) == 1, "a title between sections shows the one before")
            #expect(plain.section(forSectionIndexTitle: "0", at: 0) == 0)
        }
    }

    // Apple: NSFetchedResultsSectionInfo — "A protocol that defines the interface for section objects
    // vended by a fetched results controller": name, indexTitle, numberOfObjects, objects.
    @Test func sectionsAreSectionInfoValues() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            try Self.populate(context)
            let controller = FetchedResultsController(fetchRequest: Self.request, managedObjectContext: context, sectionNameKeyPath: "salary")
            try controller.performFetch()
            func describe(_ info: some FetchedResultsSectionInfo<Employee>) -> String {
                "\(info.name):\(info.indexTitle ?? "-"):\(info.numberOfObjects):\(info.objects.map(\.name).joined(separator: ","))"
            }
            #expect(controller.sections.map(describe) == ["10:1:2:Ada,Bea", "20:2:1:Cy", "30:3:1:Dee"])
        }
    }

    // Apple: NSFetchedResultsController.init(fetchRequest:managedObjectContext:sectionNameKeyPath:cacheName:)
    // and cacheName — "The name of the file used to cache section information"; deleteCache(withName:) —
    // "If name is nil, deletes all cache files." Granary keeps no cache: the name is kept, nothing written.
    @Test func aCacheNameIsAcceptedAndNothingIsCached() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            try Self.populate(context)
            FetchedResultsController<Employee>.deleteCache(withName: "Employees")
            FetchedResultsController<Employee>.deleteCache(withName: nil)
            let controller = FetchedResultsController(fetchRequest: Self.request, managedObjectContext: context,
                                                      sectionNameKeyPath: "salary", cacheName: "Employees")
            #expect(controller.cacheName == "Employees")
            try controller.performFetch()
            #expect(controller.fetchedObjects.count == 4)
            // A changed request under the same name gives fresh results: there is no stale cache.
            var cheap = Self.request
            cheap.filter = try PredicateParser.parse("salary < 20")
            let again = FetchedResultsController(fetchRequest: cheap, managedObjectContext: context, sectionNameKeyPath: "salary", cacheName: "Employees")
            try again.performFetch()
            #expect(again.fetchedObjects.map(\.name) == ["Ada", "Bea"])
        }
    }
}
