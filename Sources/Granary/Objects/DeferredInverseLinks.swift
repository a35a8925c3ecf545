/// The to-many sides of one-to-many links set from the to-one side, kept in a log while an import runs
/// and applied owner by owner when anything could see them.
///
/// An import that links 100,000 items to 1,000 parents edits a parent's `items` for every item (and
/// the previous parent's too, when an item moves). Done as each item is set, every edit lands on a
/// different owner's array and member set: scattered over the heap, each one a cache miss, and each
/// one recorded as a change of its owner. Logged instead, the edits are one sequential append each, and
/// are later applied in log order for each owner in turn, with one change recorded per owner: the
/// relationship ends exactly as the immediate edits would have left it.
///
/// The log is applied before anything can read an owner or the context's changes: an owner's own
/// accessors (they all load the object first, see `ManagedObject.fireFaultIfNeeded()`), and the
/// context's events, fetches, deletes, saves, rollbacks, resets, refreshes and change sets. It is used
/// only inside `ManagedObjectContext.deferringInverseLinks(_:)`, and only without an undo manager,
/// whose actions record each edit where it happens.
final class DeferredInverseLinks {
    struct Link {
        /// Held strongly: an owner found only through an ID (a parent fetched for the import) must stay
        /// until its edit is applied.
        let owner: ManagedObject
        /// The owner's to-many relationship.
        let index: Int
        let member: ManagedObjectID
        let isAddition: Bool
    }

    private(set) var links: [Link] = []
    /// Set while `apply()` runs: code it reaches (an owner's fault firing, observers of its change) may
    /// log more edits or ask for the log to be applied; the running call takes those in turn, after the
    /// ones it holds, so that each owner's edits stay in log order.
    private var isApplying = false

    var isEmpty: Bool { links.isEmpty }

    func append(_ link: Link) {
        link.owner.hasDeferredLinks = true
        links.append(link)
    }

    /// Applies every logged edit, owner by owner in the order owners were first met, each owner's in
    /// log order. The log is emptied first, so that an owner loaded while its edits are applied (a fault
    /// fires) finds nothing more to apply.
    func apply() {
        guard !isApplying else { return }
        isApplying = true
        defer { isApplying = false }
        while !links.isEmpty {
            let logged = links
            links = []
            var groupOf: [ObjectIdentifier: Int] = [:]
            var groups: [[Link]] = []
            for link in logged {
                let key = ObjectIdentifier(link.owner)
                if let g = groupOf[key] {
                    groups[g].append(link)
                } else {
                    groupOf[key] = groups.count
                    groups.append([link])
                }
            }
            for group in groups {
                let owner = group[0].owner
                owner.hasDeferredLinks = false
                owner.applyDeferredLinks(group)
            }
        }
    }
}

extension ManagedObjectContext {
    /// Runs `body` with the to-many sides of one-to-many links it sets from the to-one side logged and
    /// applied in one pass per owner (see `DeferredInverseLinks`), then applies them, also when `body`
    /// throws. Without effect under an undo manager, or inside another call of it.
    @_spi(GranaryRecords) public func deferringInverseLinks<T>(_ body: () throws -> T) rethrows -> T {
        guard deferredLinks == nil, undoManager == nil else { return try body() }
        deferredLinks = DeferredInverseLinks()
        defer {
            applyDeferredLinks()
            deferredLinks = nil
        }
        return try body()
    }

    /// Applies the logged inverse edits, if any: called before anything that reads owners or changes.
    @inline(__always)
    func applyDeferredLinks() {
        if let deferredLinks, !deferredLinks.isEmpty { deferredLinks.apply() }
    }
}

extension ManagedObject {
    /// Logs the to-many side of a link `source` made through its to-one `relationship` to this object,
    /// when this object's inverse is a to-many and the context defers such edits; returns false when
    /// the edit must be made now (`inverseAdd` or `inverseRemove`).
    func deferInverse(of source: ManagedObject, relationship: RelationshipDescription, isAddition: Bool) -> Bool {
        guard let context = managedObjectContext, let log = context.deferredLinks, !context.recordsUndo,
              let i = layout.indexByName[relationship.graphInverseName], case .toMany = layout.kinds[i] else { return false }
        log.append(.init(owner: self, index: i, member: source.objectID, isAddition: isAddition))
        return true
    }

    /// Applies this object's logged edits in order: one write of each relationship they touch.
    func applyDeferredLinks(_ links: [DeferredInverseLinks.Link]) {
        var indexes: [Int] = []
        for link in links where !indexes.contains(link.index) { indexes.append(link.index) }
        for i in indexes {
            mutateMembers(at: i) { ids, members in
                var changed = false
                for link in links where link.index == i {
                    if link.isAddition {
                        if Self.addMember(link.member, to: &ids, members: &members) { changed = true }
                    } else if Self.removeMember(link.member, from: &ids, members: &members) {
                        changed = true
                    }
                }
                return changed
            }
        }
    }
}
