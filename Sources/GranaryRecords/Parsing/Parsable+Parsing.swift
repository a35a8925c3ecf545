import Foundation
@_spi(GranaryRecords) import Granary

/// The outcome of ``Parsable/parseSkippingInvalid(jsonArray:in:)->_``: the imported objects in input order
/// and the elements left out, each with the error that excluded it.
public struct ParseReport<Object: Parsable> {
    /// One object per imported element, in input order (an ID given twice appears twice, as one object).
    public var objects: [Object]
    /// The elements skipped, by index, each with its error (missing ID, unconvertible value, …).
    public var skipped: [ParsingError]
    /// The indices of the skipped elements, ascending.
    public var skippedIndices: [Int] { skipped.compactMap(\.index) }
}

extension Parsable {
    /// Imports a JSON array into `context`: each element's object is found by its ID (existing rows are
    /// updated in place, the rest inserted), then mapped with ``mapValues(from:)``, in array order; an ID
    /// given twice updates one object and the later element wins. Existing IDs are fetched in `IN`
    /// queries of at most 1,000 IDs, never one fetch per element. Nothing is saved: one call is one save
    /// by the caller.
    ///
    /// Call it on the context's queue, on a context without unsaved changes (a writer's context). When an
    /// element fails, **this method rolls the context back** before throwing, so the store and the
    /// context are as they were.
    ///
    /// - Returns: one object per element, in input order.
    /// - Throws: ``ParsingError`` naming the element's index, the key and the value;
    ///   `.contextHasUnsavedChanges` (nothing is touched) when the context had changes; fetch errors.
    @discardableResult
    public static func parse(jsonArray: [Any], in context: ManagedObjectContext) throws -> [Self] {
        try parse(nodes: jsonArray.map(JSONNode.init(any:)), in: context)
    }

    static func parse(nodes: [JSONNode], in context: ManagedObjectContext) throws -> [Self] {
        guard !context.hasChanges else {
            throw ParsingError(.contextHasUnsavedChanges, entity: String(describing: Self.self))
        }
        do {
            return try importElements(nodes, indices: Array(nodes.indices), in: context)
        } catch {
            context.rollback()
            throw error
        }
    }

    /// Imports one JSON object into `context`, as ``parse(jsonArray:in:)->[Self]`` imports a one-element array.
    /// - Throws: as ``parse(jsonArray:in:)->[Self]`` (the context is rolled back on failure).
    @discardableResult
    public static func parse(json: [String: Any], in context: ManagedObjectContext) throws -> Self {
        try parse(jsonArray: [json], in: context)[0]
    }

    /// Imports JSON text (an array of objects, or one object) into `context`, as
    /// ``parse(jsonArray:in:)->[Self]`` does.
    /// - Throws: ``ParsingError`` `.invalidJSON` when the data is not JSON or its top level is neither an
    ///   object nor an array; otherwise as ``parse(jsonArray:in:)->[Self]``.
    @discardableResult
    public static func parse(jsonData: Data, in context: ManagedObjectContext) throws -> [Self] {
        try withTopLevel(of: jsonData) { try parse(nodes: $0, in: context) }
    }

    /// Imports a JSON array as ``parse(jsonArray:in:)->[Self]`` does, but leaves out the elements that fail
    /// (a missing or wrong-typed ID, an unconvertible value, a non-object) and reports them. A failing
    /// element is undone completely: the context is rolled back and the import rerun without it, so no
    /// half-mapped object is ever saved.
    ///
    /// Call it on the context's queue, on a context without unsaved changes.
    /// - Throws: ``ParsingError`` `.contextHasUnsavedChanges`; fetch errors (the context rolled back).
    public static func parseSkippingInvalid(jsonArray: [Any], in context: ManagedObjectContext) throws -> ParseReport<Self> {
        try parseSkippingInvalid(nodes: jsonArray.map(JSONNode.init(any:)), in: context)
    }

    static func parseSkippingInvalid(nodes jsonArray: [JSONNode], in context: ManagedObjectContext) throws -> ParseReport<Self> {
        guard !context.hasChanges else {
            throw ParsingError(.contextHasUnsavedChanges, entity: String(describing: Self.self))
        }
        var skipped: [ParsingError] = []
        var remaining: [Int] = []
        // Elements whose ID is unusable are known bad before any work.
        let probe = ParsingSession(context: context)
        for i in jsonArray.indices {
            guard case .object(let object) = jsonArray[i] else {
                skipped.append(ParsingError(.notAnObject, entity: String(describing: Self.self), index: i, value: jsonArray[i].anyValue))
                continue
            }
            do {
                _ = try probe.id(of: object, as: Self.self)
                remaining.append(i)
            } catch var error as ParsingError {
                error.index = i
                skipped.append(error)
            }
        }
        while true {
            do {
                let objects = try importElements(jsonArray, indices: remaining, in: context)
                return ParseReport(objects: objects, skipped: skipped.sorted { ($0.index ?? 0) < ($1.index ?? 0) })
            } catch let error as ParsingError where error.index != nil {
                context.rollback()
                skipped.append(error)
                remaining.removeAll { $0 == error.index }
            } catch {
                context.rollback()
                throw error
            }
        }
    }

    /// Imports JSON text as ``parseSkippingInvalid(jsonArray:in:)->_`` does.
    /// - Throws: ``ParsingError`` `.invalidJSON` for text that is not JSON; as the array form otherwise.
    public static func parseSkippingInvalid(jsonData: Data, in context: ManagedObjectContext) throws -> ParseReport<Self> {
        try withTopLevel(of: jsonData) { try parseSkippingInvalid(nodes: $0, in: context) }
    }

    /// Runs `body` on the elements of JSON text (see `decodeTopLevel`), then frees them, a big document
    /// on another thread (`BackgroundRelease`): releasing a hundred thousand parsed objects, their keys
    /// and strings, was a fiftieth of an import on the thread that ran it, after the work was done.
    static func withTopLevel<R>(of data: Data, _ body: ([JSONNode]) throws -> R) throws -> R {
        let elements = try decodeTopLevel(data)
        let result = Result { try body(elements) }
        let count = elements.count
        BackgroundRelease.release(consume elements, count: count)
        return try result.get()
    }

    static func decodeTopLevel(_ data: Data) throws -> [JSONNode] {
        let top: JSONNode
        do {
            top = try JSONReader.read(data)
        } catch {
            throw ParsingError(.invalidJSON("\(error.message) at byte \(error.offset)"), entity: String(describing: Self.self))
        }
        switch top {
        case .array(let elements): return elements
        case .object: return [top]
        default:
            throw ParsingError(.invalidJSON("the top level is neither an array nor an object"), entity: String(describing: Self.self),
                               value: top.anyValue)
        }
    }

    /// The import proper, over the elements at `indices`; errors carry the element's index.
    private static func importElements(_ jsonArray: [JSONNode], indices: [Int], in context: ManagedObjectContext) throws -> [Self] {
        // The entry points checked that the context had no changes: every pending one is this session's.
        let session = ParsingSession(context: context, ownsPendingChanges: true)
        session.elements = indices.count == jsonArray.count ? jsonArray : indices.map { jsonArray[$0] }
        // Values the store already holds are not changes: re-importing them saves nothing and tells no
        // observer of an update.
        let ignored = context.ignoresUnchangedWrites
        context.ignoresUnchangedWrites = true
        defer { context.ignoresUnchangedWrites = ignored }
        var ids: [EntityID] = []
        ids.reserveCapacity(indices.count)
        for i in indices {
            guard case .object(let object) = jsonArray[i] else {
                throw ParsingError(.notAnObject, entity: String(describing: Self.self), index: i, value: jsonArray[i].anyValue)
            }
            do {
                ids.append(try session.id(of: object, as: Self.self))
            } catch var error as ParsingError {
                error.index = i
                throw error
            }
        }
        // Existing objects are read on another thread, batch by batch, while the elements before them are
        // mapped; `needs[n]` batches must be in before element n is.
        defer { session.finish() }
        let needs = try session.prefetch(Self.self, ids: ids, pipelined: true)
        // Items linked to parents edit the parents' to-many sides in one pass per parent, after the
        // elements are mapped (or as soon as anything reads a parent): see `deferringInverseLinks(_:)`.
        return try context.reservingCapacity(forChanges: ids.count) { try context.deferringInverseLinks {
            var result: [Self] = []
            result.reserveCapacity(indices.count)
            for (n, i) in indices.enumerated() {
                guard case .object(let json) = jsonArray[i] else { continue }  // checked above
                do {
                    if let needs { try session.awaitPrefetched(Self.self, batches: needs[n]) }
                    let object = try session.object(Self.self, id: ids[n], batchTaken: needs != nil)
                    try session.map(json, onto: object, keyPrefix: "")
                    result.append(object)
                } catch var error as ParsingError {
                    error.index = i
                    throw error
                }
            }
            return result
        } }
    }
}
