import Foundation
import PropertyBased
import Testing
@testable import Granary

/// Random events on `DeleteRuleModel` (every delete rule, to-one and to-many, ordered and not, with
/// and without inverses), each its own undo group, some ending in a save (which may fail on a deny
/// rule): undoing every group must give back the graph as it was before the first, and redoing every
/// group the graph as it was after the last. The graph is compared as a plain value: for each object
/// alive in the context (inserted, or registered and not deleted), by name (names are never reused),
/// its name and every relationship as the names of its destinations, in order where ordered.
///
/// After undoing everything the context is saved, and the store, read through a fresh context, must
/// hold the graph as it was before: undone saved insertions are deleted again, undone saved deletions
/// inserted again with their relationships. After redoing everything, if that graph can be saved (no
/// deny rule refuses), the store must hold it.
///
/// A second property mixes events, undos and redos, against a plain model of the two stacks: the list
/// of graphs after each event still reachable and the position in it (a new event drops the graphs
/// after the position, as a new change empties the redo stack).
@Suite struct UndoPropertyTests {
    typealias Random = FetchingPlannerPropertyTests.Random
    typealias Graph = [String: [String: String]]

    /// One event per input number, which seeds the event's random choices against the graph as it
    /// stands: the array shrinks to the events that matter.
    @Test func undoingEveryGroupRestoresTheGraphAndRedoingEveryGroupItsEnd() async {
        await propertyCheck(count: 100, input: Gen.int(in: 0...Int.max).array(of: 1...40)) { events in
            do {
                try Self.check(events)
            } catch {
                Issue.record("events \(events): \(error)")
            }
        }
    }

    /// One step per input number: mostly events, some undos and redos, checked after each.
    @Test func undosAndRedosBetweenEventsWalkTheHistoryOfGraphs() async {
        await propertyCheck(count: 100, input: Gen.int(in: 0...Int.max).array(of: 1...50)) { steps in
            do {
                try Self.walk(steps)
            } catch {
                Issue.record("steps \(steps): \(error)")
            }
        }
    }

    /// The objects the test made, the names it gave out, and each object's last name (what names a
    /// deleted object that a no-action reference still reaches once its deletion is saved, and its
    /// values are gone).
    final class Scene {
        let context: ManagedObjectContext
        var objects: [ManagedObject] = []
        var nextName = 0
        var lastNames: [ObjectIdentifier: String] = [:]

        init(_ context: ManagedObjectContext) { self.context = context }

        func name(_ prefix: String) -> String {
            nextName += 1
            return "\(prefix)\(nextName)"
        }

        func isAlive(_ object: ManagedObject) -> Bool { object.managedObjectContext === context && !object.isDeleted }

        func alive(_ entity: String) -> [ManagedObject] {
            objects.filter { isAlive($0) && $0.entity.name == entity }
        }

        @discardableResult
        func insert(_ entity: String) -> ManagedObject {
            let object: ManagedObject = entity == "Owner" ? RuleOwner(context: context) : RuleItem(context: context)
            objects.append(object)
            rename(object)
            return object
        }

        func rename(_ object: ManagedObject) {
            let new = name(object.entity.name == "Owner" ? "o" : "i")
            try? object.setValue(new, forKey: "name")
            lastNames[ObjectIdentifier(object)] = new
        }

        /// An object's name: its own while it has its values (an undo puts names back), its last one
        /// once a saved deletion emptied it.
        func name(of object: ManagedObject) throws -> String {
            if let name = try object.value(forKey: "name") as? String {
                lastNames[ObjectIdentifier(object)] = name
                return name
            }
            #expect(!isAlive(object), "an alive object has no name")
            return lastNames[ObjectIdentifier(object)] ?? "?"
        }
    }

    /// A saved graph to start from, so that undo meets saved objects as well as new ones, and an undo
    /// manager set afterwards.
    static func makeScene(_ context: ManagedObjectContext) throws -> (Scene, ContextUndoManager) {
        let scene = Scene(context)
        for _ in 0..<3 { scene.insert("Owner") }
        for _ in 0..<4 { scene.insert("Item") }
        var random = Random(state: 0x5EED)
        for _ in 0..<6 { try edit(scene, &random, allowDelete: false) }
        try context.save()
        let manager = ContextUndoManager()
        context.undoManager = manager
        return (scene, manager)
    }

    /// One event: a random edit, then the event's end, by a save one time in five (a save that fails
    /// on a deny rule leaves the changes, and the event is ended by hand).
    static func event(_ scene: Scene, _ random: inout Random) throws {
        try edit(scene, &random, allowDelete: true)
        if random.int(5) == 0 {
            do { try scene.context.save() } catch { scene.context.processPendingChanges() }
        } else {
            scene.context.processPendingChanges()
        }
    }

    static func check(_ events: [Int]) throws {
        let (coordinator, context) = try makeRuleStack()
        try context.performAndWait {
            let (scene, manager) = try makeScene(context)
            let before = try graph(scene)
            for code in events {
                var random = Random(state: UInt64(code))
                try event(scene, &random)
            }
            let after = try graph(scene)

            var undos = 0
            while manager.canUndo {
                try context.undo()
                undos += 1
                if undos > events.count { break }
            }
            #expect(undos <= events.count, "more undo steps than events")
            try expectSame(try graph(scene), before, "after undoing every event")
            try context.save()
            try expectSame(try storedGraph(coordinator), before, "in the store, after undoing every event and saving")

            var redos = 0
            while manager.canRedo {
                try context.redo()
                redos += 1
                if redos > undos { break }
            }
            #expect(redos == undos, "\(undos) undos but \(redos) redos")
            try expectSame(try graph(scene), after, "after redoing every event")
            // A no-action rule leaves references to a deleted object until the save, which drops them.
            let saved = try graph(scene, aliveDestinationsOnly: true)
            if (try? context.save()) != nil {
                try expectSame(try storedGraph(coordinator), saved, "in the store, after redoing every event and saving")
            }
        }
    }

    static func walk(_ steps: [Int]) throws {
        let (coordinator, context) = try makeRuleStack()
        try context.performAndWait {
            let (scene, manager) = try makeScene(context)
            var history = [try graph(scene)]
            var position = 0
            for (n, code) in steps.enumerated() {
                var random = Random(state: UInt64(code))
                switch random.int(5) {
                case 0:
                    #expect(manager.canUndo == (position > 0), "step \(n): canUndo at \(position) of \(history.count)")
                    guard position > 0 else { continue }
                    try context.undo()
                    position -= 1
                case 1:
                    #expect(manager.canRedo == (position < history.count - 1), "step \(n): canRedo at \(position) of \(history.count)")
                    guard position < history.count - 1 else { continue }
                    try context.redo()
                    position += 1
                default:
                    // A rename besides the random edit, so that every event registers one undo step.
                    let alive = scene.objects.filter(scene.isAlive)
                    if alive.isEmpty { scene.insert("Item") } else {
                        scene.rename(random.pick(alive))
                    }
                    try event(scene, &random)
                    history = Array(history[...position]) + [try graph(scene)]
                    position += 1
                    #expect(!manager.canRedo, "step \(n): a new event left something to redo")
                }
                try expectSame(try graph(scene), history[position], "step \(n), at \(position) of \(history.count)")
            }
            let saved = try graph(scene, aliveDestinationsOnly: true)
            if (try? context.save()) != nil {
                try expectSame(try storedGraph(coordinator), saved, "in the store, after the last step and a save")
            }
        }
    }

    /// One random change: an insert, a rename, a to-one set, a to-many set, added to, taken from or
    /// reordered, or a delete. Links go to alive objects only (Core Data refuses to save links to
    /// deleted ones), never from an object to itself.
    static func edit(_ scene: Scene, _ random: inout Random, allowDelete: Bool) throws {
        let kind = random.int(allowDelete ? 8 : 7)
        if kind == 0 {
            let object = scene.insert(random.bool() ? "Owner" : "Item")
            // A new object is mostly linked at once, in the same event.
            if random.bool() { try link(object, scene, &random) }
            return
        }
        let candidates = scene.objects.filter(scene.isAlive)
        guard !candidates.isEmpty else { return }
        let object = random.pick(candidates)
        switch kind {
        case 1:
            scene.rename(object)
        case 7:
            scene.context.delete(object)
        default:
            try link(object, scene, &random)
        }
    }

    /// Changes one relationship of `object` at random.
    static func link(_ object: ManagedObject, _ scene: Scene, _ random: inout Random) throws {
        let spec = random.pick(DeleteRuleModel.relationships[object.entity.name]!)
        let destinations = scene.alive(spec.destination).filter { $0 !== object }
        guard spec.isToMany else {
            try object.setValue(destinations.isEmpty || random.int(4) == 0 ? nil : random.pick(destinations), forKey: spec.name)
            return
        }
        let members = try members(of: object, spec.name)
        switch random.int(4) {
        case 0:
            let chosen = destinations.filter { _ in random.int(3) == 0 }
            try object.setValue(spec.isOrdered ? chosen as Any : Set(chosen) as Any, forKey: spec.name)
        case 1:
            guard !destinations.isEmpty else { return }
            try object.add([random.pick(destinations)], toRelationship: spec.name)
        case 2:
            guard !members.isEmpty else { return }
            try object.remove([random.pick(members)], fromRelationship: spec.name)
        default:
            // A new order for an ordered relationship, the same members.
            guard spec.isOrdered, members.count > 1 else { return }
            var reordered = members
            reordered.swapAt(0, 1 + random.int(members.count - 1))
            try object.setValue(reordered, forKey: spec.name)
        }
    }

    static func members(of object: ManagedObject, _ key: String) throws -> [ManagedObject] {
        switch try object.value(forKey: key) {
        case let array as [ManagedObject]: return array
        case let set as Set<ManagedObject>: return Array(set)
        default: return []
        }
    }

    /// The graph of the objects alive in the scene's context; with `aliveDestinationsOnly`, without
    /// the references to objects that are not.
    static func graph(_ scene: Scene, aliveDestinationsOnly: Bool = false) throws -> Graph {
        var result: Graph = [:]
        for object in scene.objects where scene.isAlive(object) {
            #expect(scene.context.registeredObject(for: object.objectID) === object, "an alive object is not registered under its ID")
            let name = try scene.name(of: object)
            #expect(result[name] == nil, "two alive objects named \(name)")
            result[name] = try description(of: object, including: { !aliveDestinationsOnly || scene.isAlive($0) }, name: scene.name(of:))
        }
        return result
    }

    /// The graph a fresh context reads from the store.
    static func storedGraph(_ coordinator: PersistentStoreCoordinator) throws -> Graph {
        let fresh = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        return try fresh.performAndWait {
            var result: Graph = [:]
            for entity in ["Owner", "Item"] {
                for object in try fresh.fetch(FetchRequest<ManagedObject>(entityName: entity)) {
                    let name = try #require(try object.value(forKey: "name") as? String)
                    result[name] = try description(of: object) { try $0.value(forKey: "name") as? String ?? "?" }
                }
            }
            return result
        }
    }

    static func description(of object: ManagedObject, including: (ManagedObject) -> Bool = { _ in true },
                            name: (ManagedObject) throws -> String) throws -> [String: String] {
        var properties: [String: String] = [:]
        for spec in DeleteRuleModel.relationships[object.entity.name]! {
            if spec.isToMany {
                let names = try members(of: object, spec.name).filter(including).map(name)
                properties[spec.name] = (spec.isOrdered ? names : names.sorted()).joined(separator: ",")
            } else {
                properties[spec.name] = try (object.value(forKey: spec.name) as? ManagedObject).flatMap { including($0) ? $0 : nil }.map(name) ?? "-"
            }
        }
        return properties
    }

    /// Expects two graphs equal, naming the objects where they differ.
    static func expectSame(_ found: Graph, _ expected: Graph, _ when: String) throws {
        guard found != expected else { return }
        var differences: [String] = []
        for name in Set(found.keys).union(expected.keys).sorted() where found[name] != expected[name] {
            let had = expected[name].map { "\($0.sorted { $0.key < $1.key })" } ?? "absent"
            let has = found[name].map { "\($0.sorted { $0.key < $1.key })" } ?? "absent"
            differences.append("\(name): expected \(had), found \(has)")
        }
        Issue.record("\(when): \(differences.joined(separator: "; "))")
    }
}
