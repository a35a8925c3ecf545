import Foundation
import PropertyBased
import Synchronization
import Testing
@testable import Granary

/// Moves, relinks and deletes under every delete rule, mixed in one save and across two contexts (or a
/// child and its parent), checked against `RuleGraph`, a plain model of Core Data's rules (and of
/// Granary's no-action rule) on `DeleteRuleModel`. Written after issue 16 (an object moved out of a
/// cascade relationship and its old owner deleted in one save was deleted by the store), to find its
/// relatives.
///
/// Contexts edit in batches: one context makes a few random edits (inserts, moves by the to-one, moves
/// through the sets, new sets, many-to-many relinks, re-parenting, one-to-one swaps, deletes, and moves
/// into and out of deleted objects, in either order) and then saves or rolls back; the next batch may be
/// another context's. A save the model expects denied is rolled back, or sometimes edited further and
/// saved again. Between batches a batch delete may run on the store, with Core Data's batch rules
/// (against the stored rows; deny only for destinations the batch does not delete too). The model follows
/// each edit in the batch's view, predicts whether the save fails on a deny rule, and what the store holds
/// after it.
///
/// Checked after every save, failed save, rollback and batch delete: the store, read through a fresh
/// context, equals the model exactly (every object, every to-one, every to-many, in order where ordered,
/// so both ends agree); no stored row refers to a row that is gone; the saving context shows the same
/// graph (nothing it shows alive is gone from the store, nothing stays marked deleted); the other
/// context shows it too once it has merged. Before every save the saving context's view must equal the
/// model's view (which objects are deleted, every relationship of the live ones, the deny relationships
/// of the deleted ones). After reopening the durable store, the store must still equal the model.
///
/// What it leaves out on purpose: only one context has unsaved changes at a time, so a save never has
/// to rebase edits onto another context's (TwoContextPropertyTests covers that for attributes and
/// to-ones). In the variant where the other context merges late (`.mergeByPropertyObjectTrump`), a
/// context touches no object that another save changed since it last merged (it may hold such objects,
/// stale, untouched), with one exception whose outcome is precise: it may delete a stale object whose
/// relationships, as it has them, only lack members other saves gave it (see `isAllowedWhileStale`).
/// What a stale context's rules should do to objects it saw in the wrong place has no Core Data answer
/// to compare with (its copies decide, and the merge policy, property by property). Deleted objects are
/// never linked to (Core Data fails such a save with a dangling reference error), and edits are made on
/// live objects, except for taking members out of a deleted object's relationships, which is how an app
/// makes room for a delete under a deny rule.
///
/// `DELETE_RULE_SEED=n` replays one seed, `DELETE_RULE_SEEDS=n` runs n seeds per variant (40 by default),
/// `DELETE_RULE_STEPS=n` makes each run n steps long (200),
/// and `DELETE_RULE_TRACE=1` prints each step as it is made (the trace of a crash).
@Suite struct DeleteRulePropertyTests {
    typealias Random = FetchingPlannerPropertyTests.Random
    typealias Spec = DeleteRuleModel.Spec

    enum Merging {
        /// One context only.
        case single
        /// The other context merges each save by hand as soon as it is made.
        case byHand
        /// Both contexts merge each other's saves automatically.
        case automatically
        /// The other context merges some time later; until then it leaves the objects saved since alone.
        case late
        /// One child context edits; each of its saves goes into its parent, which saves it to the store
        /// at once (and the child merges what the parent's save changed).
        case child
    }

    /// One edit, as the test makes it through the context's key-value API and the model mirrors it.
    enum Edit: CustomStringConvertible {
        case insert(entity: String, name: String)
        case setToOne(String, String, String?)
        case setToMany(String, String, [String])
        case add(String, String, [String])
        case remove(String, String, [String])
        case delete(String)
        /// `refreshAllObjects()`: unsaved changes, deletions included, must survive it.
        case refreshAll

        /// The objects the edit names.
        var names: [String] {
            switch self {
            case .insert(_, let name), .delete(let name): return [name]
            case .refreshAll: return []
            case .setToOne(let object, _, let target): return [object] + (target.map { [$0] } ?? [])
            case .setToMany(let object, _, let list), .add(let object, _, let list), .remove(let object, _, let list): return [object] + list
            }
        }

        var description: String {
            switch self {
            case .insert(let entity, let name): return "insert \(entity) \(name)"
            case .setToOne(let object, let key, let target): return "\(object).\(key) = \(target ?? "nil")"
            case .setToMany(let object, let key, let list): return "\(object).\(key) = [\(list.joined(separator: ", "))]"
            case .add(let object, let key, let list): return "\(object).\(key) += [\(list.joined(separator: ", "))]"
            case .remove(let object, let key, let list): return "\(object).\(key) -= [\(list.joined(separator: ", "))]"
            case .delete(let object): return "delete \(object)"
            case .refreshAll: return "refresh all objects"
            }
        }
    }

    final class SaveSlot: Sendable {
        let changes = Mutex<ContextChanges?>(nil)
    }

    struct Mismatch: Error, CustomStringConvertible {
        var description: String
    }

    /// A context and what the test knows of it.
    final class Editor {
        let context: ManagedObjectContext
        let label: String
        /// The objects the test got from the context, by name.
        var held: [String: ManagedObject] = [:]
        /// Objects inserted and then deleted before a save: the context forgets them, the test does not.
        var vanished: [ManagedObjectID: String] = [:]
        /// Saves of others this context has not merged yet (`.late`).
        var undelivered: [ContextChanges] = []
        /// The objects those saves changed: the context's copies may be out of date.
        var stale: Set<String> = []
        /// Objects the unsaved batch changes through members this context has not seen (a stale delete):
        /// the store will change them at the save; until then the context shows them as its own rules
        /// left them, which may be part of the change (an object both its rules and those members change).
        var unseen: Set<String> = []
        let lastSave = SaveSlot()
        private var token: NSObjectProtocol?

        init(_ context: ManagedObjectContext, label: String) {
            self.context = context
            self.label = label
            let box = lastSave
            token = NotificationCenter.default.addObserver(forName: .managedObjectContextDidSave, object: context, queue: nil) { note in
                let changes = note.userInfo?[ContextChanges.userInfoKey] as? ContextChanges
                box.changes.withLock { $0 = changes }
            }
        }

        deinit { if let token { NotificationCenter.default.removeObserver(token) } }
    }

    final class Run {
        let url = scratchURL("deleterules")
        let coordinator: PersistentStoreCoordinator
        var store: PersistentStore
        let merging: Merging
        var editors: [Editor] = []
        /// What the store holds.
        var model = RuleGraph()
        /// The acting context's view while its batch is unsaved.
        var view = RuleGraph()
        var acting: Editor?
        /// For `.child`: the context the child saves into, which only ever saves what it was given.
        var parent: Editor?
        var serial = 0
        var trace: [String] = []
        /// Every object's name by ID, as last read from the store.
        var storedNames: [ManagedObjectID: String] = [:]
        /// Checks of fetches made so far: each check tries the next relationship.
        var fetchChecks = 0
        static let echo = ProcessInfo.processInfo.environment["DELETE_RULE_TRACE"] != nil

        init(merging: Merging) throws {
            self.merging = merging
            coordinator = PersistentStoreCoordinator(managedObjectModel: try DeleteRuleModel.make())
            store = try coordinator.addPersistentStore(type: .durable, at: url)
            if merging == .child {
                let root = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
                let child = ManagedObjectContext(concurrencyType: .privateQueue, parent: root)
                child.automaticallyMergesChangesFromParent = true
                parent = Editor(root, label: "P")
                editors = [Editor(child, label: "C")]
                return
            }
            for label in merging == .single ? ["A"] : ["A", "B"] {
                let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
                context.mergePolicy = .mergeByPropertyObjectTrump
                context.automaticallyMergesChangesFromParent = merging == .automatically
                editors.append(Editor(context, label: label))
            }
        }

        /// Every context, the parent of `.child` included.
        var contexts: [Editor] { editors + (parent.map { [$0] } ?? []) }

        deinit {
            try? coordinator.remove(store)
            try? FileManager.default.removeItem(at: url)
        }

        func note(_ line: String) {
            trace.append(line)
            if Self.echo { FileHandle.standardError.write(Data((line + "\n").utf8)) }
        }

        func fail(_ problem: String) -> Mismatch {
            Mismatch(description: ([problem, "trace:"] + trace.suffix(80)).joined(separator: "\n"))
        }

        // MARK: Steps

        func step(_ r: inout Random) throws {
            guard let editor = acting else {
                try betweenBatches(&r)
                return
            }
            if r.int(8) == 0 {
                if r.int(7) == 0 { try rollback(editor) } else { try save(editor, keepsEditingIfDenied: r.int(3) == 0) }
                return
            }
            let edits = generate(&r)
            guard !edits.isEmpty else { return }
            if merging == .late && !isAllowedWhileStale(edits, in: editor) { return }
            for edit in edits where isPerformable(edit, in: view) { try perform(edit, in: editor) }
        }

        /// Whether a context that has not merged every save may make these edits, for a precise answer.
        ///
        /// A stale object is left alone: every object the edits name or change (as the model sees it)
        /// must be one this context has seen since it last changed. (An edit that changes nothing in the
        /// model may still change a stale copy: emptying a set that is empty by now.)
        ///
        /// Except a delete of a stale object whose relationships, as this context has them, only lack
        /// members other saves gave it: Granary's store applies its delete rules to its relationships as
        /// they are now, so the members this context never saw are cascaded, nullified or counted against
        /// a deny rule all the same, and the outcome is the model's. What this context's own rules touch
        /// (the members it does see, and their cascades) must still be up to date here.
        func isAllowedWhileStale(_ edits: [Edit], in editor: Editor) -> Bool {
            guard !editor.stale.isEmpty else { return true }
            if edits.count == 1, case .delete(let name) = edits[0], editor.stale.contains(name), view.isPresent(name) {
                // After an earlier stale delete in this batch, the store's cascades through members this
                // context never saw change objects it still shows unchanged: a second stale delete's
                // rules (a deny rule counting such a member, read from the store when the copy is a
                // fault) would then be judged otherwise by the context than by the model.
                guard editor.unseen.isEmpty, let copy = copy(of: name, in: editor) else { return false }
                let node = view.nodes[name]!
                for spec in RuleGraph.relationships(of: node.entity) {
                    let seen = spec.isToMany ? copy.toMany[spec.name] ?? [] : copy.toOne[spec.name].map { [$0] } ?? []
                    if !Set(seen).isSubset(of: view.members(name, spec)) { return false }
                }
                // The delete as this context makes it: with its copy's relationships.
                var seenHere = view
                seenHere.nodes[name]!.toOne = copy.toOne
                seenHere.nodes[name]!.toMany = copy.toMany
                var after = seenHere
                after.delete(name)
                let seenTouched = touched(from: seenHere, to: after)
                guard !seenTouched.subtracting([name]).contains(where: editor.stale.contains) else { return false }
                let unseen = RuleGraph.relationships(of: node.entity).flatMap { spec in
                    view.members(name, spec).filter { !seenHere.members(name, spec).contains($0) }
                }
                if !unseen.isEmpty {
                    note("\(editor.label) has not seen \(unseen.joined(separator: ", ")) in stale \(name)")
                    var full = view
                    full.delete(name)
                    // Until the save the context shows its own delete (`after`), the view the store's
                    // (`full`): every object the two leave different is unseen, including one both
                    // change (a deny relationship losing a member the context sees and one it does not).
                    editor.unseen.formUnion(touched(from: Self.asShown(after), to: Self.asShown(full)))
                }
                return true
            }
            var after = view
            var involved = Set<String>()
            for edit in edits where isPerformable(edit, in: after) {
                // A delete's rules read its members as the context has them (a deny rule counts them),
                // so those must be up to date here too, and not changed by an earlier stale delete's
                // unseen cascade: the context would count a member the store's cascade removes.
                if case .delete(let name) = edit, let node = after.nodes[name] {
                    let copy = self.copy(of: name, in: editor)
                    for spec in RuleGraph.relationships(of: node.entity) {
                        involved.formUnion(after.members(name, spec))
                        if let copy { involved.formUnion(spec.isToMany ? copy.toMany[spec.name] ?? [] : copy.toOne[spec.name].map { [$0] } ?? []) }
                    }
                }
                apply(edit, to: &after)
                involved.formUnion(edit.names)
            }
            let reached = involved.union(touched(from: view, to: after))
            return !reached.contains(where: editor.stale.contains) && !reached.contains(where: editor.unseen.contains)
        }

        /// A graph as a context's check compares it: unordered sets sorted, a deleted object by its
        /// deny relationships only.
        static func asShown(_ graph: RuleGraph) -> RuleGraph {
            var shown = graph.normalized()
            for (name, node) in shown.nodes where node.isDeleted {
                for spec in RuleGraph.relationships(of: node.entity) where spec.rule != .deny {
                    shown.nodes[name]!.toOne[spec.name] = nil
                    shown.nodes[name]!.toMany[spec.name] = nil
                }
            }
            return shown
        }

        /// A context's copy of an object's relationships, by name: the view's when it holds no loaded
        /// copy (it will load the current one); nil when a member has no name known to the test.
        func copy(of name: String, in editor: Editor) -> RuleGraph.Node? {
            let c = editor.context
            let id = storedNames.first { $0.value == name }?.key
            return c.performAndWait {
                let object = editor.held[name].flatMap { $0.managedObjectContext === c ? $0 : nil } ?? id.flatMap { c.registeredObject(for: $0) }
                guard let held = object, !held.isFault else { return view.nodes[name] }
                var node = RuleGraph.Node(entity: held.entity.name)
                for spec in RuleGraph.relationships(of: node.entity) {
                    let value = held.values[held.layout.indexByName[spec.name]!]
                    if let id = value as? ManagedObjectID {
                        guard let target = storedNames[id] else { return nil }
                        node.toOne[spec.name] = target
                    } else if let ids = value as? [ManagedObjectID], !ids.isEmpty {
                        let targets = ids.compactMap { storedNames[$0] }
                        guard targets.count == ids.count else { return nil }
                        node.toMany[spec.name] = targets
                    }
                }
                return node
            }
        }

        /// Whether an edit planned with the others of its step still makes sense once the earlier ones
        /// are made: its objects are still in the context (a delete may have taken an inserted one), and
        /// it links only live objects to each other (a deleted object may only lose members).
        func isPerformable(_ edit: Edit, in graph: RuleGraph) -> Bool {
            func alive(_ name: String) -> Bool { graph.nodes[name].map { !$0.isDeleted } ?? false }
            switch edit {
            case .insert, .refreshAll:
                return true
            case .delete(let object):
                return graph.isPresent(object)
            case .setToOne(let object, _, let target):
                return graph.isPresent(object) && target.map { alive($0) && alive(object) } ?? true
            case .add(let object, _, let list):
                return alive(object) && list.allSatisfy(alive)
            case .remove(let object, _, let list):
                return graph.isPresent(object) && list.allSatisfy(graph.isPresent)
            case .setToMany(let object, let key, let list):
                guard graph.isPresent(object) else { return false }
                let current = graph.members(object, DeleteRuleModel.spec(graph.nodes[object]!.entity, key))
                return list.allSatisfy { current.contains($0) ? graph.isPresent($0) : alive($0) && alive(object) }
            }
        }

        /// Between batches: maybe a batch delete, a late merge or a reopened store; then a context starts a batch.
        func betweenBatches(_ r: inout Random) throws {
            switch r.int(20) {
            case 0..<3: try batchDelete(&r)
            case 3: try reopen()
            case 4..<8 where merging == .late:
                let editor = r.pick(editors)
                if !editor.undelivered.isEmpty { try mergeLate(editor) }
            default: break
            }
            acting = r.pick(editors)
            view = model
        }

        // MARK: Generating edits

        func generate(_ r: inout Random) -> [Edit] {
            let owners = view.alive("Owner")
            let items = view.alive("Item")
            func someOwner(besides excluded: String? = nil) -> String? {
                let choices = owners.filter { $0 != excluded }
                return choices.isEmpty || r.int(6) == 0 ? nil : r.pick(choices)
            }
            // Deletes wait for a graph worth deleting from: cascades then take chains with them.
            let isSmall = owners.count < 3 || items.count < 10
            // Cascades take many items at once: a small graph mostly grows.
            let choice = items.count < 12 && r.int(3) == 0 ? 10 : owners.count < 4 && r.int(4) == 0 ? 0 : r.int(100)
            switch choice {
            case 0..<10:
                guard owners.count < 8 else { return [] }
                serial += 1
                let name = "o\(serial)"
                var edits: [Edit] = [.insert(entity: "Owner", name: name)]
                for spec in RuleGraph.relationships(of: "Owner") where !items.isEmpty && r.int(10) < 3 {
                    edits.append(spec.isToMany ? .add(name, spec.name, (0...r.int(2)).map { _ in r.pick(items) }) : .setToOne(name, spec.name, r.pick(items)))
                }
                return edits
            case 10..<25:
                guard items.count < 30 else { return [] }
                serial += 1
                let name = "i\(serial)"
                var edits: [Edit] = [.insert(entity: "Item", name: name)]
                for spec in RuleGraph.relationships(of: "Item") where r.int(10) < 3 {
                    let pool = spec.destination == "Owner" ? owners : items
                    guard !pool.isEmpty else { continue }
                    let target = r.pick(pool)
                    edits.append(spec.isToMany ? .add(name, spec.name, [target]) : .setToOne(name, spec.name, target))
                }
                return edits
            case 25..<37:
                guard !items.isEmpty else { return [] }
                if !owners.isEmpty && r.int(4) == 0 {
                    // A badge given (or taken) through the owner's end of the one-to-one.
                    return [.setToOne(r.pick(owners), "badge", r.int(6) == 0 ? nil : r.pick(items))]
                }
                let item = r.pick(items)
                let spec = r.pick(RuleGraph.relationships(of: "Item").filter { !$0.isToMany })
                let target = spec.destination == "Owner" ? someOwner() : (r.int(6) == 0 ? nil : r.pick(items))
                return [.setToOne(item, spec.name, target)]
            case 37..<47:
                guard !items.isEmpty else { return [] }
                let item = r.pick(items)
                let spec = r.pick(RuleGraph.relationships(of: "Item").filter { !$0.isToMany })
                let pool = spec.destination == "Owner" ? owners : items
                guard !pool.isEmpty else { return [] }
                return moveThroughSets(item, spec, to: r.pick(pool), &r)
            case 47..<53:
                let entity = r.bool() ? "Owner" : "Item"
                let pool = entity == "Owner" ? owners : items
                guard !pool.isEmpty else { return [] }
                let object = r.pick(pool)
                let spec = r.pick(RuleGraph.relationships(of: entity).filter(\.isToMany))
                return [.setToMany(object, spec.name, newSet(of: object, spec, &r))]
            case 53..<60:
                guard !owners.isEmpty, !items.isEmpty else { return [] }
                let owner = r.pick(owners)
                let item = r.pick(items)
                let tagged = view.members(owner, DeleteRuleModel.spec("Owner", "tags")).contains(item)
                if r.bool() { return [tagged ? .remove(owner, "tags", [item]) : .add(owner, "tags", [item])] }
                return [tagged ? .remove(item, "taggedBy", [owner]) : .add(item, "taggedBy", [owner])]
            case 60..<63:
                // A context that has not merged deletes, half the time, an owner another save changed.
                let stale = owners.filter { acting?.stale.contains($0) ?? false }
                if !stale.isEmpty && r.bool() { return [.delete(r.pick(stale))] }
                guard !isSmall else { return [] }
                return [.delete(r.pick(owners))]
            case 63..<66:
                guard !isSmall else { return [] }
                return [.delete(r.pick(items))]
            case 66..<80:
                // Members moved out and their old owner (or parent) deleted, in either order.
                guard !isSmall else { return [] }
                let entity = r.int(5) < 3 ? "Owner" : "Item"
                let pool = entity == "Owner" ? owners : items
                guard !pool.isEmpty else { return [] }
                let object = r.pick(pool)
                var moves: [Edit] = []
                for spec in RuleGraph.relationships(of: entity) where spec.isToMany || Self.isOneToOne(spec) || spec.inverse == nil {
                    for member in view.members(object, spec) where view.isPresent(member) && !view.nodes[member]!.isDeleted && r.int(3) > 0 {
                        moves += moveOut(member, from: object, spec, &r)
                    }
                }
                return r.int(5) < 3 ? moves + [.delete(object)] : [.delete(object)] + moves
            case 80..<88:
                // Make room for a delete that a deny rule holds back: members taken out of deleted objects.
                let deleted = view.nodes.filter(\.value.isDeleted).map(\.key).sorted()
                guard !deleted.isEmpty else { return [] }
                let object = r.pick(deleted)
                let entity = view.nodes[object]!.entity
                var moves: [Edit] = []
                for spec in RuleGraph.relationships(of: entity) where spec.rule == .deny || spec.rule == .noAction {
                    for member in view.members(object, spec) where view.isPresent(member) && !view.nodes[member]!.isDeleted {
                        if spec.isToMany {
                            moves += moveOut(member, from: object, spec, &r)
                        } else if r.bool() {
                            moves.append(.setToOne(object, spec.name, nil))
                        } else {
                            // A one-sided to-one has no other end to edit.
                            moves.append(spec.inverse.map { .remove(member, $0, [object]) } ?? .setToOne(object, spec.name, nil))
                        }
                    }
                }
                return moves
            case 88..<90:
                return [.refreshAll]
            case 90..<94:
                // Members moved in (or linked) and their new owner deleted: a cascade takes them along.
                guard !isSmall else { return [] }
                let owner = r.pick(owners)
                var edits: [Edit] = []
                for _ in 0..<(1 + r.int(3)) {
                    let spec = r.pick(RuleGraph.relationships(of: "Owner"))
                    let item = r.pick(items)
                    guard let inverseName = spec.inverse else {
                        // One-sided: linked from the owner's end, the only one there is.
                        edits.append(spec.isToMany ? .add(owner, spec.name, [item]) : .setToOne(owner, spec.name, item))
                        continue
                    }
                    let inverse = DeleteRuleModel.spec("Item", inverseName)
                    if !spec.isToMany {
                        edits.append(r.bool() ? .setToOne(owner, spec.name, item) : .setToOne(item, inverse.name, owner))
                    } else {
                        edits.append(r.bool() || inverse.isToMany ? .add(owner, spec.name, [item]) : .setToOne(item, inverse.name, owner))
                    }
                }
                return edits + [.delete(owner)]
            default:
                // A child detached from its parent and deleted, in either order.
                let children = items.filter { view.nodes[$0]!.toOne["parent"] != nil }
                guard !children.isEmpty else { return [] }
                let child = r.pick(children)
                let parent = view.nodes[child]!.toOne["parent"]!
                let detach: Edit = r.bool() || !view.isPresent(parent) ? .setToOne(child, "parent", nil) : .remove(parent, "children", [child])
                return r.bool() ? [detach, .delete(child)] : [.delete(child), detach]
            }
        }

        static func isOneToOne(_ spec: Spec) -> Bool {
            guard let inverse = spec.inverse else { return false }
            return !spec.isToMany && !DeleteRuleModel.spec(spec.destination, inverse).isToMany
        }

        /// `member` taken out of `object`'s to-many (or one-to-one) `spec` by one of the ways an app does
        /// it: its to-one set elsewhere (or cleared), the set edited, or a new set assigned.
        func moveOut(_ member: String, from object: String, _ spec: Spec, _ r: inout Random) -> [Edit] {
            let pool = view.alive(spec.entity).filter { $0 != object }
            let destination = pool.isEmpty || r.int(5) == 0 ? nil : r.pick(pool)
            guard let inverseName = spec.inverse else {
                // One-sided: only this end can let it go (an edit of the set, a new set, or clearing the
                // to-one), and another object may link it.
                var edits: [Edit]
                if !spec.isToMany {
                    edits = [.setToOne(object, spec.name, nil)]
                } else if r.bool() {
                    edits = [.remove(object, spec.name, [member])]
                } else {
                    edits = [.setToMany(object, spec.name, view.members(object, spec).filter { $0 != member && view.isPresent($0) })]
                }
                if let destination {
                    edits.append(spec.isToMany ? .add(destination, spec.name, [member]) : .setToOne(destination, spec.name, member))
                }
                return edits
            }
            let inverse = DeleteRuleModel.spec(spec.destination, inverseName)
            if Self.isOneToOne(spec) {
                // Given to another object from either end (which takes it from this one), or cleared here.
                switch r.int(3) {
                case 0: return [.setToOne(member, inverse.name, destination)]
                case 1: return [destination.map { .setToOne($0, spec.name, member) } ?? .setToOne(object, spec.name, nil)]
                default: return [.setToOne(object, spec.name, nil)] + (destination.map { [.setToOne($0, spec.name, member)] } ?? [])
                }
            }
            if inverse.isToMany {
                // Many-to-many: unlinked from either end, and maybe linked to another object.
                var edits: [Edit] = [r.bool() ? .remove(object, spec.name, [member]) : .remove(member, inverse.name, [object])]
                if let destination { edits.append(.add(destination, spec.name, [member])) }
                return edits
            }
            switch r.int(3) {
            case 0:
                return [.setToOne(member, inverse.name, destination)]
            case 1:
                guard let destination else { return [.remove(object, spec.name, [member])] }
                return moveThroughSets(member, inverse, to: destination, &r)
            default:
                let kept = view.members(object, spec).filter { $0 != member && view.isPresent($0) }
                var edits: [Edit] = [.setToMany(object, spec.name, kept)]
                if let destination, !inverse.isToMany { edits.append(.add(destination, spec.name, [member])) }
                return edits
            }
        }

        /// `item` moved to `destination` through the sets of its to-one `spec`'s inverse: taken out of its
        /// current owner's set and added to the destination's, or a new set assigned, or only added (which
        /// takes it out of the old set by itself).
        func moveThroughSets(_ item: String, _ spec: Spec, to destination: String, _ r: inout Random) -> [Edit] {
            // A one-sided to-one has no sets at the other end: it is set instead.
            guard let inverseName = spec.inverse else { return [.setToOne(item, spec.name, destination)] }
            let inverse = DeleteRuleModel.spec(spec.destination, inverseName)
            // A one-to-one has no set: the other end is set instead.
            if !inverse.isToMany { return [.setToOne(destination, inverse.name, item)] }
            let from = spec.isToMany ? nil : view.nodes[item]!.toOne[spec.name]
            let leave: Edit? = from.flatMap { view.isPresent($0) && $0 != destination ? Edit.remove($0, inverse.name, [item]) : nil }
            switch r.int(3) {
            case 0:
                let join = Edit.add(destination, inverse.name, [item])
                guard let leave else { return [join] }
                return r.bool() ? [leave, join] : [join, leave]
            case 1:
                var list = view.members(destination, inverse).filter { $0 != item && view.isPresent($0) }
                list.insert(item, at: r.int(list.count + 1))
                let join = Edit.setToMany(destination, inverse.name, list)
                guard let from, view.isPresent(from), from != destination else { return [join] }
                let rest = Edit.setToMany(from, inverse.name, view.members(from, inverse).filter { $0 != item && view.isPresent($0) })
                return r.bool() ? [rest, join] : [join, rest]
            default:
                return [.add(destination, inverse.name, [item])]
            }
        }

        /// A new value for a to-many: some of its members kept (reordered, sometimes), some live objects added.
        func newSet(of object: String, _ spec: Spec, _ r: inout Random) -> [String] {
            var list = view.members(object, spec).filter { view.isPresent($0) && r.int(10) < 7 }
            if spec.isOrdered && r.bool() { list.reverse() }
            let pool = view.alive(spec.destination).filter { !list.contains($0) }
            for _ in 0..<r.int(3) where !pool.isEmpty {
                let added = r.pick(pool)
                if !list.contains(added) { list.insert(added, at: r.int(list.count + 1)) }
            }
            return list
        }

        // MARK: Performing edits

        func apply(_ edit: Edit, to graph: inout RuleGraph) {
            func spec(_ object: String, _ key: String) -> Spec { DeleteRuleModel.spec(graph.nodes[object]!.entity, key) }
            switch edit {
            case .insert(let entity, let name): graph.insert(name, entity: entity)
            case .setToOne(let object, let key, let target): graph.setToOne(object, spec(object, key), target)
            case .setToMany(let object, let key, let list): graph.setToMany(object, spec(object, key), list)
            case .add(let object, let key, let list):
                graph.setToMany(object, spec(object, key), graph.members(object, spec(object, key)) + list)
            case .remove(let object, let key, let list):
                graph.setToMany(object, spec(object, key), graph.members(object, spec(object, key)).filter { !list.contains($0) })
            case .delete(let object): graph.delete(object)
            case .refreshAll: break
            }
        }

        /// The names whose node differs between two graphs.
        func touched(from before: RuleGraph, to after: RuleGraph) -> Set<String> {
            Set(Set(before.nodes.keys).union(after.nodes.keys).filter { before.nodes[$0] != after.nodes[$0] })
        }

        func perform(_ edit: Edit, in editor: Editor) throws {
            note("\(editor.label) \(edit)")
            let c = editor.context
            try c.performAndWait {
                do {
                    switch edit {
                    case .insert(let entity, let name):
                        let object: ManagedObject = entity == "Owner" ? RuleOwner(context: c) : RuleItem(context: c)
                        try object.setValue(name, forKey: "name")
                        editor.held[name] = object
                    case .setToOne(let name, let key, let target):
                        try object(name, in: editor).setValue(try target.map { try object($0, in: editor) }, forKey: key)
                    case .setToMany(let name, let key, let list):
                        let target = try object(name, in: editor)
                        let members = try list.map { try object($0, in: editor) }
                        let ordered = DeleteRuleModel.spec(view.nodes[name]!.entity, key).isOrdered
                        try target.setValue(ordered ? members as Any : Set(members) as Any, forKey: key)
                    case .add(let name, let key, let list):
                        try object(name, in: editor).add(try list.map { try object($0, in: editor) }, toRelationship: key)
                    case .remove(let name, let key, let list):
                        try object(name, in: editor).remove(try list.map { try object($0, in: editor) }, fromRelationship: key)
                    case .delete(let name):
                        let inserted = editor.held.filter { $0.value.isInserted }
                        c.delete(try object(name, in: editor))
                        // Inserted objects the delete took (itself, cascades) are gone from the context.
                        for (gone, object) in inserted where object.managedObjectContext == nil { editor.vanished[object.objectID] = gone }
                    case .refreshAll:
                        c.refreshAllObjects()
                    }
                } catch let mismatch as Mismatch {
                    throw mismatch
                } catch {
                    throw fail("\(editor.label) \(edit) threw \(error)")
                }
            }
            apply(edit, to: &view)
        }

        /// The context's object named `name`: one the test holds, or one the context finds (live objects
        /// by a fetch, deleted ones among its registered objects).
        func object(_ name: String, in editor: Editor) throws -> ManagedObject {
            let c = editor.context
            if let held = editor.held[name], held.managedObjectContext === c { return held }
            let entity = view.nodes[name]?.entity ?? "?"
            var found: [ManagedObject]
            if entity == "Owner" {
                found = try c.fetch(FetchRequest<RuleOwner>(predicate: #Predicate { $0.name == name }))
            } else {
                found = try c.fetch(FetchRequest<RuleItem>(predicate: #Predicate { $0.name == name }))
            }
            if found.isEmpty {
                found = c.registeredObjects.filter { !$0.isFault && $0.values[$0.layout.indexByName["name"]!] as? String == name }
            }
            guard found.count == 1 else { throw fail("\(editor.label) finds \(found.count) objects named \(name) (\(view.describe(name)))") }
            editor.held[name] = found[0]
            return found[0]
        }

        // MARK: Saving

        /// Saves the acting context's batch. A save the model expects denied must fail with `deleteDenied`;
        /// then the batch is rolled back, or, with `keepsEditingIfDenied`, left as it was for more edits
        /// (which may make room for the delete), and the failed save must not have changed it.
        func save(_ editor: Editor, keepsEditingIfDenied: Bool = false) throws {
            let c = editor.context
            try checkView(of: editor)
            let denials = view.denials()
            editor.lastSave.changes.withLock { $0 = nil }
            let outcome: Error? = c.performAndWait {
                do {
                    // A child keeps editing what it saved: its new objects need their permanent IDs first.
                    if merging == .child { try c.obtainPermanentIDs(for: Array(c.insertedObjects)) }
                    try c.save()
                    return nil
                } catch {
                    return error
                }
            }
            acting = nil
            if let error = outcome {
                guard !denials.isEmpty, case .deleteDenied? = error as? ContextError else {
                    throw fail("\(editor.label) save failed: \(error)\nexpected \(denials.isEmpty ? "success" : "deny: \(denials)")")
                }
                note("\(editor.label) save denied (\(denials.joined(separator: "; ")))")
                if keepsEditingIfDenied {
                    acting = editor
                    try checkView(of: editor)
                    return
                }
                try rollback(editor, noted: false)
                return
            }
            if !denials.isEmpty { throw fail("\(editor.label) save succeeded, expected it denied: \(denials.joined(separator: "; "))") }
            if let parent {
                // The child's changes are now the parent's: its save must write exactly them.
                let parentOutcome: Error? = parent.context.performAndWait {
                    do {
                        try parent.context.save()
                        return nil
                    } catch {
                        return error
                    }
                }
                if let parentOutcome { throw fail("\(editor.label) saved, but its parent's save failed: \(parentOutcome)") }
            }
            if Self.echo { for name in view.nodes.keys.sorted() { note("    \(view.describe(name))") } }
            let next = view.committed()
            let deleted = model.nodes.keys.filter { next.nodes[$0] == nil }.count
            note("\(editor.label) save: \(deleted) deleted → \(next.alive("Owner").count) owners, \(next.alive("Item").count) items")
            let inconsistent = next.oneSidedLinks()
            if !inconsistent.isEmpty { throw fail("the model is wrong: \(inconsistent)") }
            let changed = touched(from: model, to: next)
            model = next
            editor.vanished = [:]
            editor.unseen = []
            let saved = editor.lastSave.changes.withLock { $0 } ?? ContextChanges()
            try deliver(saved, changed: changed, from: editor)
            try check("\(editor.label) saved")
        }

        func rollback(_ editor: Editor, noted: Bool = true) throws {
            if noted { note("\(editor.label) rollback") }
            editor.context.performAndWait { editor.context.rollback() }
            editor.vanished = [:]
            editor.unseen = []
            acting = nil
            view = model
            try check("\(editor.label) rolled back")
        }

        /// The other contexts learn of a save: at once, automatically, or later.
        func deliver(_ changes: ContextChanges, changed: Set<String>, from source: Editor?) throws {
            let names = changed.union((changes.inserted.union(changes.updated).union(changes.deleted)).compactMap { storedNames[$0] })
            for other in editors where other !== source {
                switch merging {
                case .single, .automatically, .child:
                    break
                case .byHand:
                    other.context.performAndWait { other.context.mergeChanges(fromContextDidSave: changes) }
                case .late:
                    other.undelivered.append(changes)
                    other.stale.formUnion(names)
                }
            }
        }

        func mergeLate(_ editor: Editor) throws {
            let pending = editor.undelivered
            editor.undelivered = []
            editor.stale = []
            editor.context.performAndWait { for changes in pending { editor.context.mergeChanges(fromContextDidSave: changes) } }
            note("\(editor.label) merges \(pending.count) saves")
            try check("\(editor.label) merged")
        }

        func batchDelete(_ r: inout Random) throws {
            let entity = r.int(5) < 3 ? "Owner" : "Item"
            let pool = model.alive(entity)
            guard !pool.isEmpty else { return }
            var names = [r.pick(pool)]
            if r.bool() { names.append(r.pick(pool)) }
            names = Array(Set(names)).sorted()
            let expected = model.batchDeleted(names)
            let request = BatchDeleteRequest(entityName: entity, predicate: .isIn(["name"], names.map { .string($0) }), resultType: .objectIDs)
            note("batch delete \(entity) \(names)")
            let result: BatchResult
            do {
                result = try coordinator.execute(request)
            } catch {
                guard expected == nil, case .deleteDenied? = error as? ContextError else {
                    throw fail("batch delete failed: \(error), expected \(expected == nil ? "deny" : "success")")
                }
                note("batch delete denied")
                try check("a denied batch delete")
                return
            }
            guard let expected else { throw fail("batch delete succeeded, expected it denied") }
            let changed = touched(from: model, to: expected)
            model = expected
            if merging == .late {
                try deliver(result.changes, changed: changed, from: nil)
            } else {
                ManagedObjectContext.mergeChanges(fromRemoteContextSave: result.changes, into: contexts.map(\.context))
            }
            try check("batch delete")
        }

        func reopen() throws {
            for editor in contexts {
                editor.context.performAndWait {
                    editor.context.rollback()
                    editor.context.reset()
                }
                editor.held = [:]
                editor.vanished = [:]
                editor.undelivered = []
                editor.stale = []
            }
            try coordinator.remove(store)
            store = try coordinator.addPersistentStore(type: .durable, at: url)
            note("reopen")
            let report = store.engine.verify()
            if !report.isSound { throw fail("after reopening: engine: \(report.problems)") }
            try check("reopening")
        }

        // MARK: Checking

        /// The store, its raw rows, and every context's graph against the model.
        func check(_ when: String) throws {
            // Automatic merges scheduled by the save run first.
            for editor in contexts { editor.context.performAndWait {} }
            var problems = try danglingReferences()
            problems += try storeProblems()
            for editor in contexts where editor === acting || acting == nil {
                problems += try contextProblems(editor)
            }
            if !problems.isEmpty { throw fail("after \(when):\n" + problems.joined(separator: "\n")) }
        }

        func storeProblems() throws -> [String] {
            let checker = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
            var seen = RuleGraph()
            var problems: [String] = []
            var names: [ManagedObjectID: String] = [:]
            try checker.performAndWait {
                let objects: [ManagedObject] = try checker.fetch(FetchRequest<RuleOwner>()) + checker.fetch(FetchRequest<RuleItem>())
                for object in objects {
                    let name = try object.value(forKey: "name") as? String ?? "?"
                    if seen.nodes[name] != nil { problems.append("two objects named \(name) in the store") }
                    names[object.objectID] = name
                    var node = RuleGraph.Node(entity: object.entity.name)
                    for spec in RuleGraph.relationships(of: node.entity) {
                        let value = try object.value(forKey: spec.name)
                        if spec.isToMany {
                            let members = (value as? [ManagedObject]) ?? (value as? Set<ManagedObject>).map(Array.init) ?? []
                            node.toMany[spec.name] = try members.map { try $0.value(forKey: "name") as? String ?? "?" }
                        } else if let target = value as? ManagedObject {
                            node.toOne[spec.name] = try target.value(forKey: "name") as? String ?? "?"
                        }
                    }
                    seen.nodes[name] = node
                }
            }
            storedNames.merge(names) { $1 }
            let stored = seen.normalized()
            let expected = model.normalized()
            for name in Set(stored.nodes.keys).union(expected.nodes.keys).sorted() where stored.nodes[name] != expected.nodes[name] {
                problems.append("store: \(stored.describe(name)) — expected \(expected.describe(name))")
            }
            return problems
        }

        /// The graph a context shows: every registered, loaded object it does not know to be stale must
        /// be what the store holds (after a save, a rollback, a merge), or, while its batch is unsaved,
        /// what the model's view holds.
        func contextProblems(_ editor: Editor) throws -> [String] {
            let c = editor.context
            let expected = (acting === editor ? view : model).normalized()
            let problems = c.performAndWait {
                var problems: [String] = []
                let objects = c.registeredObjects.filter { !$0.isFault }
                var names: [ManagedObjectID: String] = storedNames
                for (id, name) in editor.vanished { names[id] = name }
                for object in objects {
                    if let name = object.values[object.layout.indexByName["name"]!] as? String { names[object.objectID] = name }
                }
                for object in objects.sorted(by: { names[$0.objectID] ?? "" < names[$1.objectID] ?? "" }) {
                    guard let name = names[object.objectID], !editor.stale.contains(name) else { continue }
                    if acting === editor && editor.unseen.contains(name) { continue }
                    guard let node = expected.nodes[name] else {
                        problems.append("\(editor.label) shows \(name) (\(object.isDeleted ? "deleted" : "alive")), which \(acting === editor ? "the view" : "the store") does not have")
                        continue
                    }
                    if object.isDeleted != node.isDeleted {
                        problems.append("\(editor.label) shows \(name) \(object.isDeleted ? "deleted" : "alive"), expected \(node.isDeleted ? "deleted" : "alive")")
                        continue
                    }
                    var shown = RuleGraph.Node(entity: node.entity, isDeleted: node.isDeleted, isInserted: node.isInserted)
                    for spec in RuleGraph.relationships(of: node.entity) where !node.isDeleted || spec.rule == .deny {
                        let value = object.values[object.layout.indexByName[spec.name]!]
                        if let id = value as? ManagedObjectID {
                            shown.toOne[spec.name] = names[id] ?? "?\(id)"
                        } else if let ids = value as? [ManagedObjectID] {
                            shown.toMany[spec.name] = ids.map { names[$0] ?? "?\($0)" }
                        }
                    }
                    var want = node
                    if node.isDeleted {
                        for spec in RuleGraph.relationships(of: node.entity) where spec.rule != .deny {
                            want.toOne[spec.name] = nil
                            want.toMany[spec.name] = nil
                        }
                    }
                    var graphs = (RuleGraph(), RuleGraph())
                    graphs.0.nodes[name] = shown
                    graphs.1.nodes[name] = want
                    let (a, b) = (graphs.0.normalized(), graphs.1.normalized())
                    if a != b {
                        problems.append("\(editor.label) shows \(a.describe(name)) — expected \(b.describe(name))")
                    }
                }
                return problems
            }
            return try problems + fetchProblems(editor, expected: expected)
        }

        /// What the context's fetches find: every live object of each entity, and, for one relationship
        /// per check (in turn), the objects linked to some objects at its other end, found through a
        /// predicate on the relationship (evaluated by the store, or on the objects when the context has
        /// unsaved changes). A context that has not merged a save is left out: its copies are old.
        func fetchProblems(_ editor: Editor, expected: RuleGraph) throws -> [String] {
            guard editor.stale.isEmpty else { return [] }
            let c = editor.context
            let specs = ["Owner", "Item"].flatMap(RuleGraph.relationships(of:))
            let spec = specs[fetchChecks % specs.count]
            fetchChecks += 1
            func names(_ request: FetchRequest<ManagedObject>) throws -> [String] {
                try c.fetch(request).map { try $0.value(forKey: "name") as? String ?? "?" }.sorted()
            }
            return try c.performAndWait {
                var problems: [String] = []
                for entity in ["Owner", "Item"] {
                    let found = try names(FetchRequest(entityName: entity))
                    if found != expected.alive(entity) { problems.append("\(editor.label) fetches \(entity) \(found), expected \(expected.alive(entity))") }
                }
                // Three targets a check, in turn, keep the fetches few.
                let targets = expected.nodes.keys.sorted().filter { expected.isPresent($0) && expected.nodes[$0]!.entity == spec.destination }
                for k in 0..<min(3, targets.count) {
                    let target = targets[(fetchChecks / specs.count + k) % targets.count]
                    var request = FetchRequest<ManagedObject>(entityName: spec.entity)
                    let isTarget = PredicateNode.compare(["name"], .equal, .value(.string(target)))
                    request.filter = spec.isToMany ? .any([spec.name], isTarget) : .compare([spec.name, "name"], .equal, .value(.string(target)))
                    let found = try names(request)
                    let linked = expected.alive(spec.entity).filter { expected.members($0, spec).contains(target) }
                    if found != linked { problems.append("\(editor.label) fetches \(spec.entity) with \(spec.name) ∋ \(target): \(found), expected \(linked)") }
                }
                return problems
            }
        }

        /// Before a save: every object the context holds or the view has deleted agrees with the view.
        func checkView(of editor: Editor) throws {
            let c = editor.context
            var problems = try contextProblems(editor)
            c.performAndWait {
                // (A stale object may be deleted by a cascade the store finds: the context does not know.)
                for name in view.nodes.keys.sorted() where view.isPresent(name) && view.nodes[name]!.isDeleted && !editor.stale.contains(name)
                    && !editor.unseen.contains(name)
                {
                    let held = editor.held[name]
                    if held == nil || held!.managedObjectContext !== c || !held!.isDeleted {
                        // Cascaded objects the test never held must be among the context's deleted ones.
                        let deleted = c.deletedObjects.contains { $0.values[$0.layout.indexByName["name"]!] as? String == name }
                        if !deleted { problems.append("\(editor.label) does not show \(name) deleted") }
                    }
                }
            }
            if !problems.isEmpty { throw fail("before \(editor.label) saves:\n" + problems.joined(separator: "\n")) }
        }

        func danglingReferences() throws -> [String] { try TwoContextPropertyTests.danglingReferences(in: store) }
    }

    static func check(seed: Int, merging: Merging, steps: Int) throws {
        var r = Random(state: UInt64(seed))
        let run = try Run(merging: merging)
        for _ in 0..<steps { try run.step(&r) }
        if let editor = run.acting { try run.save(editor) }
        for editor in run.editors where !editor.undelivered.isEmpty { try run.mergeLate(editor) }
        try run.reopen()
    }

    static func property(_ merging: Merging) async {
        await SeededPropertyRuns.run(environmentPrefix: "DELETE_RULE", label: "DeleteRulePropertyTests \(merging)") { seed, steps in
            try check(seed: seed, merging: merging, steps: steps)
        }
    }

    @Test func oneContextMatchesTheModel() async { await Self.property(.single) }

    @Test func twoContextsMergingByHandMatchTheModel() async { await Self.property(.byHand) }

    @Test func twoContextsMergingAutomaticallyMatchTheModel() async { await Self.property(.automatically) }

    @Test func twoContextsMergingLateMatchTheModel() async { await Self.property(.late) }

    @Test func aChildContextSavingThroughItsParentMatchesTheModel() async { await Self.property(.child) }

    /// A seed a full run found (it fails at d174b55 too, before this code's latest changes): A deletes an
    /// owner whose copy is stale (B moved one of its cascade items to another owner and edited the owner
    /// since A last merged); the save is refused by an item's deny rule, where the model expects it to
    /// succeed. Whether the product or the model is wrong is not settled; replayed here so that it stays
    /// visible and is seen to pass once it is.
    @Test func aStaleOwnersCascadeMeetingADenyRuleIsAKnownIssue() {
        withKnownIssue("a stale owner's delete is refused by a deny rule the model does not expect") {
            try Self.check(seed: 1_870_100_691_642_001_265, merging: .late, steps: 200)
        }
    }
}
