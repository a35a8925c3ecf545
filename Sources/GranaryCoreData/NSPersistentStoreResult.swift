import Granary

/// What `execute(_:)` returns: Core Data's `NSPersistentStoreResult`; cast it to the request's result
/// class (`NSBatchInsertResult`, `NSBatchDeleteResult`) and read `result`.
open class NSPersistentStoreResult {
    /// The Granary outcome this result reports.
    public let batchResult: BatchResult
    /// What the request's `resultType` asked for: `true` (status only), the count as an `Int`, or the
    /// object IDs as `[NSManagedObjectID]`.
    public let result: Any?

    init(_ batchResult: BatchResult, reporting report: BatchReport) {
        self.batchResult = batchResult
        switch report {
        case .statusOnly: result = true
        case .count: result = batchResult.count
        case .objectIDs: result = batchResult.objectIDs
        }
    }
}

/// The result of an `NSBatchInsertRequest`: Core Data's `NSBatchInsertResult`.
public final class NSBatchInsertResult: NSPersistentStoreResult {}

/// The result of an `NSBatchDeleteRequest`: Core Data's `NSBatchDeleteResult`.
public final class NSBatchDeleteResult: NSPersistentStoreResult {}

/// What a batch result reports, whichever request it came from.
enum BatchReport {
    case statusOnly, count, objectIDs

    /// Granary's result type for this report: IDs only when asked for, as they cost a list.
    var granaryType: BatchResultType { self == .objectIDs ? .objectIDs : .count }
}
