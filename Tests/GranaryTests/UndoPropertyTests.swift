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

    /// The objects the test made, and the names it gave out.
    final class Scene {
        let context: ManagedObjectContext
        var objects: [ManagedObject] = []
        var nextName = 0

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
            try? object.setValue(name(entity == "Owner" ? "o" : "i"), forKey: "name")
            objects.append(object)
            return object
        }
    }

    static func check(_ events: [Int]) throws {
        let (coordinator, context) = try makeRuleStack()
        try context.performAndWait {
            let scene = Scene(context)
            // A saved graph to start from, so that undo meets saved objects as well as new ones.
            for _ in 0..<3 { scene.insert("Owner") }
            for _ in 0..<4 { scene.insert("Item") }
            var random = Random(state: 0x5EED)
            for _ in 0..<6 { try edit(scene, &random, allowDelete: false) }
            try context.save()

            let manager = ContextUndoManager()
            context.undoManager = manager
            let before = try graph(scene)
            for event in events {
                var random = Random(state: UInt64(event))
                try edit(scene, &random, allowDelete: true)
                if random.int(5) == 0 {
                    // A save ends the event; a failed one leaves the changes, and the event ends here.
                    do { try context.save() } catch { context.processPendingChanges() }
                } else {
                    context.processPendingChanges()
                }
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
            try object.setValue(scene.name(object.entity.name == "Owner" ? "o" : "i"), forKey: "name")
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
            let name = try #require(try object.value(forKey: "name") as? String)
            #expect(result[name] == nil, "two alive objects named \(name)")
            result[name] = try description(of: object) { !aliveDestinationsOnly || scene.isAlive($0) }
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
                    result[name] = try description(of: object)
                }
            }
            return result
        }
    }

    static func description(of object: ManagedObject, including: (ManagedObject) -> Bool = { _ in true }) throws -> [String: String] {
        var properties: [String: String] = [:]
        for spec in DeleteRuleModel.relationships[object.entity.name]! {
            func name(_ target: ManagedObject) throws -> String { try target.value(forKey: "name") as? String ?? "?" }
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
