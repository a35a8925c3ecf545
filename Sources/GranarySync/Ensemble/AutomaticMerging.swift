/// When an ensemble merges by itself (Ensembles' `CDEMonitoredManagedObjectContextDidSaveNotification`
/// pattern, built in).
///
/// A local save is noticed from the store's history, so saves by any context of any coordinator count.
/// The cloud is polled, since a folder or a WebDAV server cannot tell a device that files arrived.
/// Errors of automatic merges go to the delegate's
/// ``PersistentStoreEnsembleDelegate/persistentStoreEnsemble(_:didFailToMergeAutomaticallyWith:)``; a
/// retryable one is simply tried again at the next occasion.
public enum AutomaticMerging: Sendable, Hashable {
    /// Only when the app calls `merge()`.
    case manual
    /// `delay` after a local save (saves within the delay are merged together).
    case afterLocalSaves(delay: Duration = .seconds(1))
    /// Every `interval`, to receive other devices' changes.
    case polling(interval: Duration = .seconds(60))
    /// Both: after local saves, and every `interval`.
    case afterLocalSavesAndPolling(delay: Duration = .seconds(1), interval: Duration = .seconds(60))

    var saveDelay: Duration? {
        switch self {
        case let .afterLocalSaves(delay), let .afterLocalSavesAndPolling(delay, _): delay
        case .manual, .polling: nil
        }
    }

    var pollingInterval: Duration? {
        switch self {
        case let .polling(interval), let .afterLocalSavesAndPolling(_, interval): interval
        case .manual, .afterLocalSaves: nil
        }
    }
}
