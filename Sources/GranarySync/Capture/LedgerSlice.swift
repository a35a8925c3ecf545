/// The part of the stored ledger one capture needs, loaded key by key: a capture of a few saves in a
/// large store reads a few ledger objects, not the whole ledger.
///
/// What the ledger's rules read for a key is the key itself, the keys fused with it (M22) and, for a
/// to-many, its members' fuse groups (whether a member exists and which key represents it); `load`
/// brings in exactly that, so that integrating an event or reading a projection over the loaded keys
/// gives what the whole ledger would give for them.
final class LedgerSlice {
    let eventStore: EventStore
    private(set) var ledger = Ledger()
    private var requested: Set<ObjectKey> = []
    private var withMembers: Set<ObjectKey> = []

    init(eventStore: EventStore) { self.eventStore = eventStore }

    /// Loads `keys` and their fuse groups; with `members`, also the members of their to-manys and those
    /// members' fuse groups.
    /// - Throws: `SyncError.eventStore`.
    func load(_ keys: some Sequence<ObjectKey>, members: Bool = false) throws(SyncError) {
        let keys = Set(keys)
        let owners = members ? keys.subtracting(withMembers) : []
        withMembers.formUnion(owners)
        var wanted = keys
        // Owners loaded before without their members.
        for owner in owners {
            for relationship in ledger.object(owner)?.members.values.map(\.keys) ?? [] { wanted.formUnion(relationship) }
        }
        var pending = wanted.subtracting(requested)
        while !pending.isEmpty {
            requested.formUnion(pending)
            let objects: [LedgerObject]
            do { objects = try eventStore.ledgerObjects(pending.sorted()) } catch { throw SyncError(error) }
            var found: Set<ObjectKey> = []
            for object in objects {
                ledger.update(object.key) { $0 = object }
                for fuse in object.fuses { found.insert(fuse.other) }
                if owners.contains(object.key) {
                    for relationship in object.members.values { found.formUnion(relationship.keys) }
                }
            }
            pending = found.subtracting(requested)
        }
    }

    /// The keys whose to-many `relationship` holds `member`, loaded with their members.
    /// - Throws: `SyncError.eventStore`.
    func owners(of member: ObjectKey, in relationship: String) throws(SyncError) -> [ObjectKey] {
        let owners: [ObjectKey]
        do { owners = try eventStore.ledgerOwners(of: member, in: relationship) } catch { throw SyncError(error) }
        try load(owners, members: true)
        return owners
    }
}
