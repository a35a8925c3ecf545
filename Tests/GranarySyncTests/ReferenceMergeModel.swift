@testable import GranarySync

/// The merge rules of MergeSemantics.md evaluated by their definitions over the whole event set, slowly
/// and without the ledger: every question ("is this incarnation killed?", "is this write eligible?") is
/// answered by quantifying over all events. Shares only value types with the ledger.
struct ReferenceMergeModel {
    let schema: LedgerSchema

    private struct Insert { var key: ObjectKey; var event: EventMeta }
    private struct Kill { var key: ObjectKey; var event: EventMeta }
    private struct Fuse { var a: ObjectKey; var b: ObjectKey; var event: EventMeta }
    private struct Write<Value> { var key: ObjectKey; var name: String; var value: Value; var event: EventMeta }
    private struct Add { var owner: ObjectKey; var name: String; var member: ObjectKey; var orderKey: Double?; var event: EventMeta }
    private struct Remove { var owner: ObjectKey; var name: String; var member: ObjectKey; var event: EventMeta }

    /// x → e, from the terms: same store and lower revision, or e's vector covers x.
    private static func before(_ x: EventMeta, _ e: EventMeta) -> Bool {
        x.id.store == e.id.store ? x.id.revision < e.id.revision : e.vector[x.id.store] >= x.id.revision
    }

    private static func position(_ e: EventMeta) -> (Int64, String) { (e.globalCount, e.id.store.description) }

    private static func later(_ x: EventMeta, than y: EventMeta) -> Bool {
        let (cx, sx) = position(x), (cy, sy) = position(y)
        return cx != cy ? cx > cy : sy.utf8.lexicographicallyPrecedes(sx.utf8)
    }

    func projection(of events: [Event]) -> Projection {
        var inserts: [Insert] = [], kills: [Kill] = [], fuses: [Fuse] = []
        var attributeWrites: [Write<SyncValue?>] = [], toOneWrites: [Write<ObjectKey?>] = []
        var adds: [Add] = [], removes: [Remove] = []
        let insertsOfKey = { (key: ObjectKey) in
            events.filter { $0.changes.contains { $0.key == key && ($0.kind == .insert || $0.kind == .replacingInsert) } }.map(\.meta)
        }
        for event in events {
            let e = event.meta
            for change in event.changes {
                switch change.kind {
                case .insert: inserts.append(Insert(key: change.key, event: e))
                case .replacingInsert:
                    kills.append(Kill(key: change.key, event: e))
                    inserts.append(Insert(key: change.key, event: e))
                case .delete: kills.append(Kill(key: change.key, event: e)); continue
                case let .fuse(survivor): fuses.append(Fuse(a: change.key, b: survivor, event: e)); continue
                case .update:
                    // M12: an update of a key with no insert before it is ignored.
                    if !insertsOfKey(change.key).contains(where: { Self.before($0, e) }) { continue }
                }
                for (name, value) in change.attributes { attributeWrites.append(.init(key: change.key, name: name, value: value, event: e)) }
                for (name, value) in change.toOnes { toOneWrites.append(.init(key: change.key, name: name, value: value, event: e)) }
                for (name, list) in change.memberAdds {
                    for add in list { adds.append(Add(owner: change.key, name: name, member: add.member, orderKey: add.orderKey, event: e)) }
                }
                for (name, list) in change.memberRemoves {
                    for member in list { removes.append(Remove(owner: change.key, name: name, member: member, event: e)) }
                }
            }
        }

        // Keys joined by fuses; `seenBy` limits to the fuses that happen before an event (M22).
        func connected(_ a: ObjectKey, _ b: ObjectKey, seenBy d: EventMeta?) -> Bool {
            var reached: Set<ObjectKey> = [a]
            var changed = true
            while changed {
                changed = false
                for fuse in fuses where d.map({ Self.before(fuse.event, $0) }) ?? true {
                    if reached.contains(fuse.a) != reached.contains(fuse.b) {
                        reached.formUnion([fuse.a, fuse.b])
                        changed = true
                    }
                }
            }
            return reached.contains(b)
        }
        let keys = Set(inserts.map(\.key)).union(fuses.flatMap { [$0.a, $0.b] })
        func group(_ key: ObjectKey) -> [ObjectKey] { keys.filter { connected(key, $0, seenBy: nil) }.sorted() }
        // M9: an incarnation lives unless a delete (or replacing insert) that saw it names its key, or a key
        // fused with it by a fuse the delete saw.
        func isLive(_ insert: Insert) -> Bool {
            !kills.contains { Self.before(insert.event, $0.event) && connected(insert.key, $0.key, seenBy: $0.event) }
        }
        func live(_ group: [ObjectKey]) -> [Insert] { inserts.filter { group.contains($0.key) && isLive($0) } }
        func firstPosition(_ key: ObjectKey) -> EventMeta? {
            inserts.filter { $0.key == key }.map(\.event).min { Self.later($1, than: $0) }
        }
        // M22: the survivor is the key whose earliest insert is earliest, the lower key on a tie.
        func representative(_ group: [ObjectKey]) -> ObjectKey? {
            group.compactMap { key in firstPosition(key).map { (key, $0) } }
                .min { a, b in
                    Self.position(a.1) != Self.position(b.1) ? Self.later(b.1, than: a.1) : a.0 < b.0
                }?.0
        }
        func existing(_ key: ObjectKey) -> ObjectKey? {
            let g = group(key)
            return live(g).isEmpty ? nil : representative(g)
        }
        // M10: eligible when the own event holds a live incarnation or a live incarnation happens before.
        func isEligible(_ e: EventMeta, in group: [ObjectKey]) -> Bool {
            live(group).contains { $0.event.id == e.id || Self.before($0.event, e) }
        }
        func beats(_ e: EventMeta, _ key: ObjectKey, _ other: EventMeta, _ otherKey: ObjectKey) -> Bool {
            e.id != other.id ? Self.later(e, than: other) : key < otherKey
        }
        func winner<Value>(_ writes: [Write<Value>], _ name: String, _ group: [ObjectKey]) -> Write<Value>? {
            var best: Write<Value>?
            for write in writes where write.name == name && group.contains(write.key) && isEligible(write.event, in: group) {
                if let current = best, !beats(write.event, write.key, current.event, current.key) { continue }
                best = write
            }
            return best
        }

        var objects: [ObjectKey: ProjectedObject] = [:]
        var toOneWinner: [ObjectKey: [String: EventMeta]] = [:]
        var done: Set<ObjectKey> = []
        for key in keys.sorted() where !done.contains(key) {
            let g = group(key)
            done.formUnion(g)
            guard !live(g).isEmpty, let rep = representative(g), let shape = schema.entities[rep.entity] else { continue }
            var object = ProjectedObject()
            for name in shape.attributes { object.attributes[name] = winner(attributeWrites, name, g)?.value }
            for name in shape.toOnes.keys {
                let w = winner(toOneWrites, name, g)
                object.toOnes[name] = (w?.value).flatMap(existing)
                if let w { toOneWinner[rep, default: [:]][name] = w.event }
            }
            for (name, relationship) in shape.toManys {
                // M18: present adds are eligible, not cancelled by a remove that saw them, of an existing member.
                let present = adds.filter { add in
                    add.name == name && g.contains(add.owner) && isEligible(add.event, in: g)
                        && !removes.contains { r in
                            r.name == name && Self.before(add.event, r.event)
                                && connected(add.owner, r.owner, seenBy: r.event) && connected(add.member, r.member, seenBy: r.event)
                        }
                }
                var best: [ObjectKey: Add] = [:]
                for add in present {
                    guard let member = existing(add.member) else { continue }
                    if let current = best[member] {
                        let wins = current.event.id != add.event.id ? Self.later(add.event, than: current.event)
                            : (add.owner != current.owner ? add.owner < current.owner : add.member < current.member)
                        if !wins { continue }
                    }
                    best[member] = add
                }
                object.toManys[name] = relationship.isOrdered
                    ? best.sorted { a, b in
                        let (ka, kb) = (a.value.orderKey ?? 0, b.value.orderKey ?? 0)
                        return ka != kb ? ka < kb : a.key < b.key
                    }.map(\.key)
                    : best.keys.sorted()
            }
            objects[rep] = object
        }
        // Derived sides (M17).
        for (key, _) in objects {
            for (name, isToOne) in schema.derivedRelationships(of: key.entity) {
                if isToOne { objects[key]?.toOnes[name] = .some(nil) } else { objects[key]?.toManys[name] = [] }
            }
        }
        for owner in objects.keys.sorted() {
            guard let shape = schema.entities[owner.entity] else { continue }
            for (name, relationship) in shape.toOnes {
                guard let target = objects[owner]?.toOnes[name] ?? nil else { continue }
                switch relationship.inverse {
                case .none: break
                case let .toMany(inverse): objects[target]?.toManys[inverse]?.append(owner)
                case let .toOne(inverse):
                    // The claimant with the latest winning write keeps the target; every other reads nil.
                    let rivals = objects.keys.filter { (objects[$0]?.toOnes[name] ?? nil) == target && $0.entity == owner.entity }
                    let keeper = rivals.max { a, b in
                        let (ea, eb) = (toOneWinner[a]![name]!, toOneWinner[b]![name]!)
                        return ea.id != eb.id ? Self.later(eb, than: ea) : b < a
                    }
                    if keeper == owner { objects[target]?.toOnes[inverse] = owner }
                }
            }
            for (name, relationship) in shape.toManys {
                guard let inverse = relationship.inverse else { continue }
                for member in objects[owner]?.toManys[name] ?? [] { objects[member]?.toManys[inverse]?.append(owner) }
            }
        }
        // Claimants that lost read nil; done after every claim is counted.
        for owner in objects.keys.sorted() {
            guard let shape = schema.entities[owner.entity] else { continue }
            for (name, relationship) in shape.toOnes {
                guard case let .toOne(inverse) = relationship.inverse, let target = objects[owner]?.toOnes[name] ?? nil else { continue }
                if (objects[target]?.toOnes[inverse] ?? nil) != owner { objects[owner]?.toOnes[name] = .some(nil) }
            }
        }
        for key in objects.keys {
            for (name, isToOne) in schema.derivedRelationships(of: key.entity) where !isToOne { objects[key]?.toManys[name]?.sort() }
        }
        return Projection(objects: objects)
    }
}
