/// Joins two ledgers, each the fold of a causally complete set of events summarised by a vector, into
/// the ledger of the union of those sets (M32): a baseline into a device's ledger, or two concurrent
/// baselines into one.
///
/// A ledger records cancellations, supersessions and kills partly by absence: a write superseded by a
/// later one is dropped, an add a remove cancelled is dropped. So every rule here is the same: an item
/// present on one side and absent from the other survives only if the other side's vector does not
/// cover the event that made it; had that side integrated the event, it would hold the item unless
/// something in its own past removed it, and that something is in the union too. Incarnations are
/// never dropped by the ledger, but one absent from a covering side is taken as killed, so that a
/// baseline whose dead incarnations were collected joins correctly as well.
enum BaselineJoiner {
    /// The ledger of the events covered by `leftVector` or `rightVector`, from `left` (the fold of
    /// exactly the events ≤ `leftVector`) and `right` (of those ≤ `rightVector`).
    static func join(_ left: Ledger, covering leftVector: RevisionVector,
                     _ right: Ledger, covering rightVector: RevisionVector) -> Ledger {
        // Start from the larger side: keys only it holds, with nothing the other side covers, stay as they are.
        let (base, baseVector, other, otherVector) = left.objects.count >= right.objects.count
            ? (left, leftVector, right, rightVector) : (right, rightVector, left, leftVector)
        var result = base
        for (key, object) in base.objects where other.object(key) == nil && hasOp(of: object, coveredBy: otherVector) {
            let joined = join(object, baseVector, nil, otherVector, key: key)
            result.update(key) { $0 = joined }
        }
        for (key, object) in other.objects {
            let existing = base.object(key)
            // The same object on both sides is its own join; one on one side only, with nothing the other
            // side covers, joins to itself.
            if existing == object { continue }
            let joined = existing == nil && !hasOp(of: object, coveredBy: baseVector)
                ? object : join(existing, baseVector, object, otherVector, key: key)
            result.update(key) { $0 = joined }
        }
        return result
    }

    /// The baseline of the events either covers: the ledgers joined, the vector and count the maxima.
    /// The result takes the identity and writer of the later of the two (by count, then ID), so that
    /// joining in either order gives an equal value.
    static func join(_ left: Baseline, _ right: Baseline) -> Baseline {
        let later = (left.globalCount, left.id.uuidString) >= (right.globalCount, right.id.uuidString) ? left : right
        return Baseline(id: later.id, writer: later.writer, globalCount: max(left.globalCount, right.globalCount),
                        vector: left.vector.joined(with: right.vector),
                        ledger: join(left.ledger, covering: left.vector, right.ledger, covering: right.vector))
    }

    /// Joins `baseline` into a device's ledger `ledger`, the fold of the events ≤ `integrated`; returns
    /// the joined vector (what the device has integrated afterwards).
    static func join(_ baseline: Baseline, into ledger: inout Ledger, integrated: RevisionVector) -> RevisionVector {
        ledger = join(ledger, covering: integrated, baseline.ledger, covering: baseline.vector)
        return integrated.joined(with: baseline.vector)
    }

    /// Whether `vector` covers any event that made something in `object`: only then can absence on the
    /// side of `vector` change it.
    private static func hasOp(of object: LedgerObject, coveredBy vector: RevisionVector) -> Bool {
        if vector.revisions.isEmpty { return false }
        if object.incarnations.contains(where: { covers(vector, $0.insert) }) { return true }
        if object.attributes.values.contains(where: { $0.candidates.contains { covers(vector, $0.op) } }) { return true }
        if object.toOnes.values.contains(where: { $0.candidates.contains { covers(vector, $0.op) } }) { return true }
        return object.members.values.contains { $0.values.contains { $0.adds.contains { covers(vector, $0.op) } } }
    }

    private static func covers(_ vector: RevisionVector, _ op: EventMeta) -> Bool {
        vector[op.id.store] >= op.id.revision
    }

    /// Whether an item made by `op`, present on a side (`inLeft`, `inRight`), is in the union's ledger.
    private static func survives(_ op: EventMeta, inLeft: Bool, _ leftVector: RevisionVector,
                                 inRight: Bool, _ rightVector: RevisionVector) -> Bool {
        (inLeft || !covers(leftVector, op)) && (inRight || !covers(rightVector, op))
    }

    private static func join(_ left: LedgerObject?, _ leftVector: RevisionVector, _ right: LedgerObject?,
                             _ rightVector: RevisionVector, key: ObjectKey) -> LedgerObject {
        let empty = LedgerObject(key: key)
        let l = left ?? empty, r = right ?? empty
        var object = LedgerObject(key: key)

        // Incarnations: a kill on either side stands; absence from a covering side is a kill too.
        let leftIncarnations = Dictionary(l.incarnations.map { ($0.insert.id, $0) }, uniquingKeysWith: { a, _ in a })
        let rightIncarnations = Dictionary(r.incarnations.map { ($0.insert.id, $0) }, uniquingKeysWith: { a, _ in a })
        var incarnations: [Incarnation] = []
        for id in Set(leftIncarnations.keys).union(rightIncarnations.keys) {
            guard let insert = (leftIncarnations[id] ?? rightIncarnations[id])?.insert else { continue }
            let killedLeft = leftIncarnations[id].map(\.isKilled) ?? covers(leftVector, insert)
            let killedRight = rightIncarnations[id].map(\.isKilled) ?? covers(rightVector, insert)
            incarnations.append(Incarnation(insert: insert, isKilled: killedLeft || killedRight))
        }
        object.incarnations = incarnations.sorted { $0.insert.position < $1.insert.position }

        for name in Set(l.attributes.keys).union(r.attributes.keys) {
            if let register = join(l.attributes[name], leftVector, r.attributes[name], rightVector) {
                object.attributes[name] = register
            }
        }
        for name in Set(l.toOnes.keys).union(r.toOnes.keys) {
            if let register = join(l.toOnes[name], leftVector, r.toOnes[name], rightVector) {
                object.toOnes[name] = register
            }
        }

        for name in Set(l.members.keys).union(r.members.keys) {
            let leftMembers = l.members[name] ?? [:], rightMembers = r.members[name] ?? [:]
            var joined: [ObjectKey: Membership] = [:]
            for member in Set(leftMembers.keys).union(rightMembers.keys) {
                let leftAdds = leftMembers[member]?.adds ?? [], rightAdds = rightMembers[member]?.adds ?? []
                let leftIDs = Set(leftAdds.map(\.op.id)), rightIDs = Set(rightAdds.map(\.op.id))
                var membership = Membership()
                for add in (leftAdds + rightAdds).sorted(by: { $0.op.position < $1.op.position })
                where survives(add.op, inLeft: leftIDs.contains(add.op.id), leftVector,
                               inRight: rightIDs.contains(add.op.id), rightVector) {
                    membership.add(add)
                }
                // No empty entries: the ledger drops a member whose adds are all cancelled.
                if !membership.isEmpty { joined[member] = membership }
            }
            if !joined.isEmpty { object.members[name] = joined }
        }

        for fuse in l.fuses + r.fuses { object.addFuse(fuse) }
        return object
    }

    private static func join<Value>(_ left: Register<Value>?, _ leftVector: RevisionVector, _ right: Register<Value>?,
                                    _ rightVector: RevisionVector) -> Register<Value>? {
        let leftWrites = left?.candidates ?? [], rightWrites = right?.candidates ?? []
        let leftIDs = Set(leftWrites.map(\.op.id)), rightIDs = Set(rightWrites.map(\.op.id))
        var register = Register<Value>()
        // In position order, so that `record` drops any candidate a later one supersedes.
        for write in (leftWrites + rightWrites).sorted(by: { $0.op.position < $1.op.position })
        where survives(write.op, inLeft: leftIDs.contains(write.op.id), leftVector,
                       inRight: rightIDs.contains(write.op.id), rightVector) {
            register.record(write.value, by: write.op)
        }
        return register.candidates.isEmpty ? nil : register
    }
}
