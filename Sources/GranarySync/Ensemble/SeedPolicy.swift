/// What a leech does with the data a store already holds.
public enum SeedPolicy: Sendable, Hashable {
    /// Keep the local objects and send them to the other devices: objects the cloud does not know are
    /// added to it, objects it knows take the cloud's values and deletions, and to-many relationships keep
    /// the members of both (merge semantics M28).
    case mergeAllData
    /// Make the store a copy of the cloud: local objects the cloud does not know are deleted.
    case excludeLocalData
}
