import Foundation
import Granary

extension ManagedObjectContext {
    /// Runs an import (one or more `parse` calls) and saves it as one unit. If another context saved
    /// some of the same IDs in the meantime, the import is run again on top of that save, so there is
    /// never a duplicate and never a mix of the two imports. Use it whenever imports can run on more
    /// than one context of a store at once.
    ///
    /// The save can meet rows that another context saved after `body` read the store. That happens when
    /// an object with one of the same unique IDs was inserted meanwhile (a uniqueness conflict), or when
    /// an object `body` changed was changed meanwhile (an optimistic-locking conflict). The context is
    /// then rolled back, its objects are refreshed from the store, and `body` runs again on the new
    /// state, at most `attempts` times in all. The outcome is the one the two imports would give run one
    /// after the other. For each object that both name, the import saved last wins whole: its attributes,
    /// its nested objects, and its to-many sets as its JSON replaces them. Keys that only the other
    /// import sent keep that import's values.
    ///
    /// The context's own merge policy does not apply to these saves. The stack's background contexts
    /// merge conflicts property by property (`.mergeByPropertyObjectTrump`), which would unite the two
    /// imports' to-many sets and overwrite the first import's values with the second's defaults.
    ///
    /// Call it on the context's queue, on a context without unsaved changes. `body` may run more than
    /// once, so it must change nothing outside the context. Only saves that reach the store meet other
    /// contexts' saves: on a child context, a conflict shows when the parent saves, not here.
    /// - Parameters:
    ///   - attempts: How many times `body` may run before a conflict is given up on (at least 1).
    ///   - body: The import, e.g. `{ try User.parse(jsonArray: json, in: context) }`.
    /// - Returns: What the last run of `body` returned; its objects are saved.
    /// - Throws: ``ParsingError`` `.contextHasUnsavedChanges` when the context had changes (nothing is
    ///   touched). Otherwise: what `body` throws; `ContextError.constraintConflicts` or
    ///   `.mergeConflicts` when the last attempt still met a concurrent save; any other save error. In
    ///   each of these cases the context is rolled back, so nothing of the import is saved.
    @discardableResult
    public func importAndSave<T>(attempts: Int = 8, _ body: () throws -> T) throws -> T {
        guard !hasChanges else { throw ParsingError(.contextHasUnsavedChanges, entity: name ?? "context") }
        let policy = mergePolicy
        // Conflicts must surface as errors so that the import can run again; merging them would mix the two.
        mergePolicy = .error
        defer { mergePolicy = policy }
        var attempt = 1
        while true {
            do {
                let value = try body()
                try save()
                RecordsLog.verbose("saved an import" + (attempt > 1 ? " at attempt \(attempt)" : ""))
                return value
            } catch let error as ContextError where attempt < attempts && Self.isConcurrentSave(error) {
                RecordsLog.verbose("an import met another context's save (\(error)); importing again, attempt \(attempt + 1) of \(attempts)")
                rollback()
                // What another context changed since this one read it must be read again, including
                // objects that `body` reaches only through relationships.
                for object in registeredObjects { refresh(object, mergeChanges: false) }
                processPendingChanges()
                attempt += 1
            } catch {
                rollback()
                throw error
            }
        }
    }

    /// Whether a save failed because another context saved the same objects or IDs first.
    private static func isConcurrentSave(_ error: ContextError) -> Bool {
        switch error {
        case .constraintConflicts, .mergeConflicts, .constraintViolation: return true
        default: return false
        }
    }
}

extension Parsable {
    /// Imports a JSON array into `context` and saves it. If another context imports some of the same IDs
    /// at the same time, this import is run again on top of that one's save: see
    /// `ManagedObjectContext.importAndSave(attempts:_:)`. What one import does is described at
    /// `parse(jsonArray:in:)`.
    ///
    /// Call it on the context's queue, on a context without unsaved changes.
    /// - Returns: One saved object per element, in input order.
    /// - Throws: ``ParsingError`` naming the element's index, the key and the value, or
    ///   `.contextHasUnsavedChanges`; `ContextError.constraintConflicts` or `.mergeConflicts` when
    ///   every attempt met a concurrent save; the save's error. In each case nothing is saved and the
    ///   context is rolled back.
    @discardableResult
    public static func parseAndSave(jsonArray: [Any], in context: ManagedObjectContext) throws -> [Self] {
        try context.importAndSave { try parse(jsonArray: jsonArray, in: context) }
    }

    /// Imports JSON text (an array of objects, or one object) into `context` and saves it, as
    /// `parseAndSave(jsonArray:in:)` does.
    /// - Throws: ``ParsingError`` `.invalidJSON` for text that is not JSON. Otherwise, what
    ///   `parseAndSave(jsonArray:in:)` throws.
    @discardableResult
    public static func parseAndSave(jsonData: Data, in context: ManagedObjectContext) throws -> [Self] {
        try withTopLevel(of: jsonData) { elements in try context.importAndSave { try parse(nodes: elements, in: context) } }
    }
}
