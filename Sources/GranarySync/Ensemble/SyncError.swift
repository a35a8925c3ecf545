import Foundation
import Granary

/// Why an ensemble operation failed; each case says what was wrong and where.
///
/// Retryable errors (``isRetryable``) leave every local change recorded for the next merge: the cloud was
/// unreachable, a local save raced the merge's save, or a file had not fully arrived. The others need the
/// app: a store that must be leeched again, a model that cannot describe the cloud's events, a merge the
/// app's repair hook refused.
public enum SyncError: Error, Sendable, CustomStringConvertible {
    /// The operation needs a leeched store (`leech()` first).
    case notLeeched
    /// `leech()` on a store that is already leeched.
    case alreadyLeeched
    /// The store was added without `persistentHistoryTracking`, which sync captures local saves from.
    case historyTrackingDisabled(store: URL?)
    /// An ensemble identifier must be a non-empty name usable as a single cloud path component.
    case invalidEnsembleIdentifier(String)
    /// Another ensemble (in this process or another) holds the event store at `path`.
    case ensembleAlreadyOpen(path: String)
    /// The ensemble's store was removed from its coordinator.
    case storeMissing
    /// The cloud file system failed.
    case cloud(CloudFileSystemError)
    /// The cloud's identity (its user or folder) is not the one the store was leeched with; the store has
    /// been deleeched.
    case cloudIdentityChanged
    /// The store's registration was removed from the cloud (another device removed the ensemble's data);
    /// the store has been deleeched.
    case storeUnregistered
    /// The ensemble's cloud directory was written by a newer library (format `found`).
    case unsupportedCloudFormat(found: Int)
    /// A cloud file is damaged or incomplete; it is treated as not yet arrived.
    case corruptCloudFile(name: String, reason: String)
    /// The delegate declined to save the merged changes; nothing was saved and the events wait.
    case mergeCancelled
    /// The merged changes failed validation even after the repair hook; nothing was saved.
    case mergeValidationFailed([ValidationError])
    /// Local saves kept racing the merge's save; nothing was lost, merge again.
    case storeBusy(attempts: Int)
    /// The delegate returned `got` global identifiers for `expected` objects of `entity`.
    case globalIdentifierCountMismatch(entity: String, expected: Int, got: Int)
    /// The attribute configured (or named by `Syncable`) as the global identifier of `entity` is not one
    /// of its string or UUID attributes.
    case invalidGlobalIdentifierAttribute(entity: String, attribute: String)
    /// The ensemble's local event store failed; `reason` names the file and the operation.
    case eventStore(String)
    /// Another device uses this store's identity (a restored backup of the same store); the store has
    /// been deleeched and gets a new identity when leeched again.
    case storeIdentityCollision(storeID: String)
    /// Data that sync wrote itself is inconsistent; `reason` says what.
    case dataCorruption(String)
    /// A save of the app's store failed for a reason other than validation or a race.
    case storeSave(String)
    /// Reading the app's store (its rows or its persistent history) failed; `reason` names what.
    case storeRead(String)
    /// The store's persistent history after transaction `afterTransaction` was purged before sync captured
    /// it; the ensemble rescans the store to find what changed.
    case historyGap(afterTransaction: Int64)

    /// Whether trying the same operation later may succeed with no change by the app.
    public var isRetryable: Bool {
        switch self {
        case .cloud(.unavailable), .cloud(.io), .storeBusy, .corruptCloudFile: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .notLeeched: "the store is not leeched: call leech() first"
        case .alreadyLeeched: "the store is already leeched"
        case let .historyTrackingDisabled(store):
            "store \(store?.path ?? "(in memory)") has no persistent history tracking; add it with persistentHistoryTracking: true to sync it"
        case let .invalidEnsembleIdentifier(name):
            "'\(name.prefix(100))' is not a valid ensemble identifier (non-empty, no '/', not starting with '.')"
        case let .ensembleAlreadyOpen(path): "the ensemble's event store at \(path) is already open"
        case .storeMissing: "the ensemble's persistent store is no longer attached to its coordinator"
        case let .cloud(error): "cloud: \(error)"
        case .cloudIdentityChanged: "the cloud's identity changed since the store was leeched; the store was deleeched"
        case .storeUnregistered: "the store's registration is gone from the cloud (the ensemble was removed); the store was deleeched"
        case let .unsupportedCloudFormat(found): "the ensemble's cloud data has format \(found); this library reads up to \(SyncConstants.formatVersion)"
        case let .corruptCloudFile(name, reason): "cloud file \(name) is damaged or incomplete: \(reason)"
        case .mergeCancelled: "the delegate declined to save the merged changes; nothing was saved"
        case let .mergeValidationFailed(errors):
            "the merged changes failed validation (\(errors.count) error\(errors.count == 1 ? "" : "s")): "
                + errors.prefix(3).map(\.description).joined(separator: "; ")
        case let .storeBusy(attempts): "local saves raced the merge's save \(attempts) times; merge again"
        case let .globalIdentifierCountMismatch(entity, expected, got):
            "the delegate returned \(got) global identifiers for \(expected) objects of \(entity)"
        case let .invalidGlobalIdentifierAttribute(entity, attribute):
            "\(entity).\(attribute) cannot hold global identifiers: it is not a string or UUID attribute of \(entity)"
        case let .eventStore(reason): "event store: \(reason)"
        case let .storeIdentityCollision(storeID): "another device uses store identity \(storeID) (a restored backup?); the store was deleeched"
        case let .dataCorruption(reason): "sync data is inconsistent: \(reason)"
        case let .storeSave(reason): "saving the merged changes failed: \(reason)"
        case let .storeRead(reason): "reading the store failed: \(reason)"
        case let .historyGap(number):
            "the store's persistent history after transaction \(number) was purged before sync captured it"
        }
    }
}

extension SyncError {
    init(_ error: EventStoreError) { self = .eventStore(error.description) }
}
