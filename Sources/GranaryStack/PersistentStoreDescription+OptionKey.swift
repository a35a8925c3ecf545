import Foundation

extension PersistentStoreDescription {
    /// The option keys Granary reads from `PersistentStoreDescription/options`, spelled as Core Data
    /// spells them (the value of each is Core Data's string), so that option dictionaries and code
    /// carried over mean the same thing.
    public enum OptionKey {
        /// Core Data's `NSMigratePersistentStoresAutomaticallyOption`: see
        /// `PersistentStoreDescription/shouldMigrateStoreAutomatically`.
        public static let migrateStoreAutomatically = "NSMigratePersistentStoresAutomaticallyOption"
        /// Core Data's `NSInferMappingModelAutomaticallyOption`: see
        /// `PersistentStoreDescription/shouldInferMappingModelAutomatically`.
        public static let inferMappingModelAutomatically = "NSInferMappingModelAutomaticallyOption"
        /// Core Data's `NSReadOnlyPersistentStoreOption`: see `PersistentStoreDescription/isReadOnly`.
        public static let readOnly = "NSReadOnlyPersistentStoreOption"
        /// Core Data's `NSPersistentStoreTimeoutOption`: see `PersistentStoreDescription/timeout`.
        public static let timeout = "NSPersistentStoreTimeoutOption"
        /// Core Data's `NSPersistentHistoryTrackingKey`: set to true, the store records every save in its
        /// persistent history (`PersistentStore.Options.persistentHistoryTracking`; see
        /// `PersistentHistoryChangeRequest`).
        public static let historyTracking = "NSPersistentHistoryTrackingKey"
        /// Core Data's `NSPersistentStoreRemoteChangeNotificationPostOptionKey`. Granary posts no
        /// remote-change notifications yet: set to true, loading the store fails with
        /// `StackError.unsupportedOption`.
        public static let remoteChangeNotificationPost = "NSPersistentStoreRemoteChangeNotificationOptionKey"
    }
}
