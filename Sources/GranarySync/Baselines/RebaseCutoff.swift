import Foundation

/// The cutoff `V` of a rebase (§13): the events every registered, active store is known to have
/// integrated, which are the only ones a rebase may remove from the cloud (M32).
///
/// What a store has integrated is read from the newest of its events this device knows: its vector plus
/// its own revision. An older event than the store's real newest gives a lower vector, so knowing less
/// only removes less. A store silent for longer than `RebasePolicy.inactiveAfter` no longer holds the
/// cutoff back: when it returns it joins the baseline, which covers everything removed.
enum RebaseCutoff {
    /// What is known of one registered store.
    struct Activity: Hashable, Sendable {
        var store: StoreID
        /// The vector of its newest event known here with its own revision added; nil when none of its
        /// events is known (it then holds everything back while active).
        var published: RevisionVector?
        /// When it last showed life: its newest event or its registration, whichever is later.
        var lastActive: Date

        init(store: StoreID, published: RevisionVector?, lastActive: Date) {
            self.store = store
            self.published = published
            self.lastActive = lastActive
        }

        /// The activity of `store`, registered at `registered`, from its newest event known here.
        init(store: StoreID, registered: Date, newest: (meta: EventMeta, timestamp: Date)?) {
            self.store = store
            if let newest {
                var vector = newest.meta.vector
                vector[store] = newest.meta.id.revision
                published = vector
                lastActive = max(registered, newest.timestamp)
            } else {
                published = nil
                lastActive = registered
            }
        }
    }

    /// The cutoff: the store-wise minimum of the active stores' published vectors and of `integrated`,
    /// what the rebasing device itself has integrated (it may not have published it yet, and it must
    /// never remove what it has not integrated).
    static func vector(integrated: RevisionVector, stores: [Activity], now: Date, inactiveAfter: TimeInterval) -> RevisionVector {
        var cutoff = integrated
        for activity in stores where now.timeIntervalSince(activity.lastActive) < inactiveAfter {
            cutoff = cutoff.met(with: activity.published ?? RevisionVector())
        }
        return cutoff
    }

    /// The cutoff from the event store: every store in `registrations` (store → registration date),
    /// with its newest event known here, against this store's integrated vector.
    /// - Throws: `EventStoreError` from reading the event store.
    static func vector(from eventStore: EventStore, registrations: [StoreID: Date], now: Date,
                       inactiveAfter: TimeInterval) throws(EventStoreError) -> RevisionVector {
        let state = try eventStore.state()
        let newest = try eventStore.newestEventPerStore()
        let stores = registrations.filter { $0.key != state.storeID }.map { store, registered in
            Activity(store: store, registered: registered, newest: newest[store])
        }
        return vector(integrated: state.integrated, stores: stores, now: now, inactiveAfter: inactiveAfter)
    }
}
