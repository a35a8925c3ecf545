import Granary

// Core Data's merge-policy constants and type names, as Granary's policies: `context.mergePolicy =
// NSMergeByPropertyObjectTrumpMergePolicy` and `NSMergePolicy(merge: .mergeByPropertyObjectTrumpMergePolicyType)`
// compile and mean what they do in Core Data. Core Data types `mergePolicy` as `Any`; Granary types it
// `MergePolicy` (`NSMergePolicy`), which every one of these constants, the class properties
// (`NSMergePolicy.mergeByPropertyObjectTrump`) and a subclass's instances are.

/// Core Data's `NSMergePolicyType`: Granary's `MergePolicyType`, with Core Data's case names below.
public typealias NSMergePolicyType = MergePolicyType

extension MergePolicyType {
    /// Core Data's name for `.error`.
    public static var errorMergePolicyType: Self { .error }
    /// Core Data's name for `.mergeByPropertyStoreTrump`.
    public static var mergeByPropertyStoreTrumpMergePolicyType: Self { .mergeByPropertyStoreTrump }
    /// Core Data's name for `.mergeByPropertyObjectTrump`.
    public static var mergeByPropertyObjectTrumpMergePolicyType: Self { .mergeByPropertyObjectTrump }
    /// Core Data's name for `.overwrite`.
    public static var overwriteMergePolicyType: Self { .overwrite }
    /// Core Data's name for `.rollback`.
    public static var rollbackMergePolicyType: Self { .rollback }
}

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
