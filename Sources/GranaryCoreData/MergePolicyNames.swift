import Granary

// Core Data's merge-policy constants, as Granary's policies: `context.mergePolicy =
// NSMergeByPropertyObjectTrumpMergePolicy` compiles and means what it does in Core Data.

/// Core Data's `NSErrorMergePolicy`: `MergePolicy.error`.
public var NSErrorMergePolicy: MergePolicy { .error }
/// Core Data's `NSMergeByPropertyStoreTrumpMergePolicy`: `MergePolicy.mergeByPropertyStoreTrump`.
public var NSMergeByPropertyStoreTrumpMergePolicy: MergePolicy { .mergeByPropertyStoreTrump }
/// Core Data's `NSMergeByPropertyObjectTrumpMergePolicy`: `MergePolicy.mergeByPropertyObjectTrump`.
public var NSMergeByPropertyObjectTrumpMergePolicy: MergePolicy { .mergeByPropertyObjectTrump }
/// Core Data's `NSOverwriteMergePolicy`: `MergePolicy.overwrite`.
public var NSOverwriteMergePolicy: MergePolicy { .overwrite }
/// Core Data's `NSRollbackMergePolicy`: `MergePolicy.rollback`.
public var NSRollbackMergePolicy: MergePolicy { .rollback }
