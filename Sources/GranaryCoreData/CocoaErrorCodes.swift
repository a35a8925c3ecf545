import Granary
import GranaryStack

// Core Data's error codes (domain NSCocoaErrorDomain), and Granary's errors bridged to them: code written
// for Core Data that reads `(error as NSError).code` sees the code Core Data would have given. Granary's
// typed errors stay what is thrown; this only decides what they look like as `NSError`s.

/// An object failed validation (Core Data's general validation code).
public let NSManagedObjectValidationError = 1550
/// A uniqueness constraint was violated among the objects of one save.
public let NSManagedObjectConstraintValidationError = 1551
/// Several validation errors; they are under `NSDetailedErrorsKey`.
public let NSValidationMultipleErrorsError = 1560
/// A required property is nil.
public let NSValidationMissingMandatoryPropertyError = 1570
/// A to-many relationship holds fewer objects than its minimum.
public let NSValidationRelationshipLacksMinimumCountError = 1580
/// A to-many relationship holds more objects than its maximum.
public let NSValidationRelationshipExceedsMaximumCountError = 1590
/// A deny delete rule stopped a deletion.
public let NSValidationRelationshipDeniedDeleteError = 1600
/// A number is above its maximum.
public let NSValidationNumberTooLargeError = 1610
/// A number is below its minimum.
public let NSValidationNumberTooSmallError = 1620
/// A string is longer than its maximum.
public let NSValidationStringTooLongError = 1660
/// A string is shorter than its minimum.
public let NSValidationStringTooShortError = 1670
/// A string does not match its pattern.
public let NSValidationStringPatternMatchingError = 1680
/// Optimistic locking found objects changed in the store (merge policy `NSErrorMergePolicy`).
public let NSManagedObjectMergeError = 133020
/// A uniqueness constraint conflicts with stored objects (merge policy `NSErrorMergePolicy`).
public let NSManagedObjectConstraintMergeError = 133021
/// A store could not be opened.
public let NSPersistentStoreOpenError = 134080
/// A store could not be saved to.
public let NSPersistentStoreSaveError = 134030
/// A store operation failed.
public let NSPersistentStoreOperationError = 134070
/// A store is of a model Granary cannot migrate from.
public let NSPersistentStoreIncompatibleVersionHashError = 134100
/// A migration failed.
public let NSMigrationError = 134110
/// Any other Core Data error.
public let NSCoreDataError = 134060

/// The individual errors of an `NSValidationMultipleErrorsError`, as `[NSError]`.
public let NSDetailedErrorsKey = "NSDetailedErrors"
/// The key (property name) that failed validation.
public let NSValidationKeyErrorKey = "NSValidationErrorKey"
/// The entity of the object that failed validation (Core Data gives the object; Granary's errors carry
/// names only, so that they stay `Sendable`).
public let NSValidationObjectErrorKey = "NSValidationErrorObject"

extension ValidationError: CustomNSError {
    public static var errorDomain: String { NSCocoaErrorDomain }

    public var errorCode: Int {
        switch reason {
        case .missing: return NSValidationMissingMandatoryPropertyError
        case .tooFew: return NSValidationRelationshipLacksMinimumCountError
        case .tooMany: return NSValidationRelationshipExceedsMaximumCountError
        case .aboveMaximum: return NSValidationNumberTooLargeError
        case .belowMinimum: return NSValidationNumberTooSmallError
        case .tooLong: return NSValidationStringTooLongError
        case .tooShort: return NSValidationStringTooShortError
        case .patternMismatch: return NSValidationStringPatternMatchingError
        case .invalidValue, .custom: return NSManagedObjectValidationError
        }
    }

    public var errorUserInfo: [String: Any] {
        var info: [String: Any] = [NSLocalizedDescriptionKey: description, NSValidationKeyErrorKey: propertyName]
        if let entityName { info[NSValidationObjectErrorKey] = entityName }
        return info
    }
}

extension ContextError: CustomNSError {
    public static var errorDomain: String { NSCocoaErrorDomain }

    public var errorCode: Int {
        switch self {
        case .validation(let errors) where errors.count == 1: return errors[0].errorCode
        case .validation: return NSValidationMultipleErrorsError
        case .deleteDenied: return NSValidationRelationshipDeniedDeleteError
        case .mergeConflicts: return NSManagedObjectMergeError
        case .constraintViolation, .constraintConflicts: return NSManagedObjectConstraintMergeError
        case .invalidBatchObject(_, let error): return error.errorCode
        case .readOnlyContext, .noPersistentStore: return NSPersistentStoreSaveError
        case .storage: return NSPersistentStoreOperationError
        default: return NSCoreDataError
        }
    }

    public var errorUserInfo: [String: Any] {
        var info: [String: Any] = [NSLocalizedDescriptionKey: description]
        switch self {
        case .validation(let errors) where errors.count == 1:
            info.merge(errors[0].errorUserInfo) { _, single in single }
        case .validation(let errors):
            info[NSDetailedErrorsKey] = errors.map { $0 as NSError }
        default: break
        }
        return info
    }
}

extension StackError: CustomNSError {
    public static var errorDomain: String { NSCocoaErrorDomain }

    public var errorCode: Int {
        switch self {
        case .attachFailed, .unsupportedOption, .modelNotFound, .modelUnreadable, .unknownModel: return NSPersistentStoreOpenError
        case .backgroundSaveFailed: return NSPersistentStoreSaveError
        default: return NSCoreDataError
        }
    }

    public var errorUserInfo: [String: Any] { [NSLocalizedDescriptionKey: description] }
}
