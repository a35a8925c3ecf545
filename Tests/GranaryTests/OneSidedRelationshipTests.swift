import Foundation
import Synchronization
import Testing
@testable import Granary

final class OneSideTag: ManagedObject {
    @Managed var name: String
}

final class OneSideNote: ManagedObject {
    @Managed var title: String
    /// One-sided to-one, nullify.
    @Managed var tag: OneSideTag?
    /// One-sided to-many.
    @Managed var tags: Set<OneSideTag>
    /// One-sided ordered to-many.
    @Managed var pins: [OneSideTag]
    /// One-sided to-many, cascade.
    @Managed var owned: Set<OneSideTag>
    /// One-sided to-one, deny.
    @Managed var guarded: OneSideTag?
    /// One-sided to-one, no action.
    @Managed var loose: OneSideTag?
    /// Transient one-sided to-one.
    @Managed var draft: OneSideTag?
}

/// Notes pointing at tags through one-sided relationships of every kind and delete rule.
func makeOneSideModel(version: String = "1") throws -> ManagedObjectModel {
    try ManagedObjectModel(version: version) {
        Entity("Tag", as: OneSideTag.self) {
            Attribute("name", .string)
        }
        Entity("Note", as: OneSideNote.self) {
            Attribute("title", .string)
            Relationship("tag", to: "Tag")
            Relationship("tags", toMany: "Tag")
            Relationship("pins", toMany: "Tag", ordered: true)
            Relationship("owned", toMany: "Tag", deleteRule: .cascade)
            Relationship("guarded", to: "Tag", deleteRule: .deny)
            Relationship("loose", to: "Tag", deleteRule: .noAction)
            Relationship("draft", to: "Tag", transient: true)
        }
    }
}

private func oneSideStack(
    _ type: PersistentStore.StoreType = .inMemory, at url: URL? = nil
) throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
    let coordinator = PersistentStoreCoordinator(managedObjectModel: try makeOneSideModel())
    try coordinator.addPersistentStore(type: type, at: url ?? (type == .durable ? scratchURL() : nil))
    return (coordinator, ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator))
}

@Suite struct OneSidedRelationshipTests {
    @Test func theModelAcceptsThemAndKeepsTheHiddenInverseOutOfItsAPI() throws {
        let model = try makeOneSideModel()
        let tag = try #require(model.entity(named: "Tag"))
        let note = try #require(model.entity(named: "Note"))
        #expect(tag.properties.map(\.name) == ["name"])
        #expect(tag.relationshipsByName.isEmpty && tag.relationships.isEmpty && tag.declaredProperties.count == 1)
        let relationship = try #require(note.relationshipsByName["tag"])
        #expect(relationship.inverseName == nil)
        #expect(model.inverseRelationship(of: relationship) == nil)
        #expect(relationship.description.contains("no inverse"))
        // The hidden inverses are stored: a to-many column on Tag per one-sided stored relationship.
        let mapping = StorageMapping(model: model)
        let columns = try #require(mapping.entity(named: "Tag")).tableSchema.columns.map(\.name)
        #expect(columns.filter { $0.hasPrefix("_inverse.") }.sorted()
            == ["_inverse.Note.guarded", "_inverse.Note.loose", "_inverse.Note.owned", "_inverse.Note.pins", "_inverse.Note.tag", "_inverse.Note.tags"])
        #expect(mapping.entity(named: "Note")?.column(forProperty: "draft") == nil)
    }

    /// Whichever entity comes first: a hidden inverse added to an entity not yet looked at is not taken
    /// for a one-sided relationship of its own (which once gave it a hidden inverse of its own, in place of
    /// the link back to the relationship it serves).
    @Test func theDeclarationOrderDoesNotMatter() throws {
        for tagFirst in [true, false] {
            let tag = Entity("Tag") { Attribute("name", .string) }
            let note = Entity("Note") {
                Attribute("title", .string)
                Relationship("tags", toMany: "Tag")
            }
            let model = try ManagedObjectModel(entities: tagFirst ? [tag.entity, note.entity] : [note.entity, tag.entity])
            let hidden = try #require(model.entity(named: "Tag")?.storage.relationshipsByName["_inverse.Note.tags"])
            #expect(hidden.graphInverseName == "tags")
            #expect(model.entity(named: "Note")?.storage.properties.count == 2)
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            try coordinator.addPersistentStore(type: .inMemory, at: nil)
            let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
            try context.performAndWait {
                let t = ManagedObject(entity: try #require(model.entity(named: "Tag")), insertInto: context)
                try t.setValue("t", forKey: "name")
                let n = ManagedObject(entity: try #require(model.entity(named: "Note")), insertInto: context)
                try n.setValue("n", forKey: "title")
                try n.setValue(Set([t]), forKey: "tags")
                try context.save()
                context.delete(t)
                #expect((try n.value(forKey: "tags") as? Set<ManagedObject>)?.isEmpty == true, "tag first: \(tagFirst)")
            }
        }
    }

    @Test func theTargetsHashIsTheSameWithOrWithoutRelationshipsPointingAtIt() throws {
        let without = try ManagedObjectModel {
            Entity("Tag") { Attribute("name", .string) }
            Entity("Note") { Attribute("title", .string) }
        }
        let with = try ManagedObjectModel {
            Entity("Tag") { Attribute("name", .string) }
            Entity("Note") {
                Attribute("title", .string)
                Relationship("tag", to: "Tag")
            }
        }
        #expect(without.entityVersionHashes["Tag"] == with.entityVersionHashes["Tag"])
        #expect(without.entityVersionHashes["Note"] != with.entityVersionHashes["Note"])
        #expect(without.versionHash != with.versionHash)
    }

    @Test func aNamedInverseMustStillPointBackInAModelBuiltInCode() {
        #expect(throws: ModelError.self) {
            _ = try ManagedObjectModel {
                Entity("A") { Relationship("b", to: "B", inverse: "a") }
                Entity("B") { Relationship("a", to: "A") }
            }
        }
        #expect(throws: ModelError.self) {
            _ = try ManagedObjectModel {
                Entity("A") { Relationship("b", to: "B", inverse: "a", transient: true) }
                Entity("B") { Relationship("a", to: "A", inverse: "b") }
            }
        }
    }

    @Test func theHiddenInverseIsNoKeyOfTheObject() throws {
        let (_, context) = try oneSideStack()
        try context.performAndWait {
            let tag = OneSideTag(context: context)
            tag.name = "t"
            let note = OneSideNote(context: context)
            note.title = "n"
            note.tag = tag
            #expect(throws: ContextError.self) { try tag.value(forKey: "_inverse.Note.tag") }
            try context.save()
            note.tag = nil
            #expect(tag.changedValues().isEmpty)
            #expect(tag.committedValues(forKeys: nil).keys.sorted() == ["name"])
        }
    }

    @Test func deletingATargetLeavesNoReferenceToItInTheContextOrTheStore() throws {
        let url = scratchURL()
        var kept = ""
        do {
            let (_, context) = try oneSideStack(.durable, at: url)
            try context.performAndWait {
                let tags = (0..<4).map { i -> OneSideTag in
                    let tag = OneSideTag(context: context)
                    tag.name = "t\(i)"
                    return tag
                }
                let notes = (0..<3).map { i -> OneSideNote in
                    let note = OneSideNote(context: context)
                    note.title = "n\(i)"
                    note.tag = tags[0]
                    note.tags = [tags[0], tags[1]]
                    note.pins = [tags[1], tags[0], tags[2]]
                    note.loose = tags[0]
                    return note
                }
                try context.save()
                // Before the save: the context nullifies at once.
                context.delete(tags[0])
                for note in notes {
                    #expect(note.tag == nil)
                    #expect(note.tags == [tags[1]])
                    #expect(note.pins.map(\.name) == ["t1", "t2"])
                }
                try context.save()
                context.reset()
                let fetched = try context.fetch(FetchRequest<OneSideNote>())
                #expect(fetched.count == 3)
                for note in fetched {
                    #expect(note.tag == nil && note.loose == nil)
                    #expect(note.tags.map(\.name) == ["t1"])
                    #expect(note.pins.map(\.name) == ["t1", "t2"])
                }
                kept = fetched.map(\.title).sorted().joined(separator: ",")
            }
        }
        // Reopened: the references survive, and none points at the deleted tag.
        let (_, context) = try oneSideStack(.durable, at: url)
        try context.performAndWait {
            let notes = try context.fetch(FetchRequest<OneSideNote>())
            #expect(notes.map(\.title).sorted().joined(separator: ",") == kept)
            for note in notes {
                #expect(note.tag == nil)
                #expect(note.pins.map(\.name) == ["t1", "t2"])
            }
            let tags = try context.fetch(FetchRequest<OneSideTag>())
            #expect(tags.map(\.name).sorted() == ["t1", "t2", "t3"])
        }
    }

    @Test func deleteRulesApplyFromTheSideThatHasTheRelationship() throws {
        let (_, context) = try oneSideStack()
        try context.performAndWait {
            let a = OneSideTag(context: context)
            a.name = "a"
            let b = OneSideTag(context: context)
            b.name = "b"
            let c = OneSideTag(context: context)
            c.name = "c"
            let note = OneSideNote(context: context)
            note.title = "n"
            note.owned = [a, b]
            note.guarded = c
            try context.save()
            // Deny: the note cannot go while it guards a tag.
            context.delete(note)
            #expect(throws: ContextError.self) { try context.save() }
            context.rollback()
            note.guarded = nil
            context.delete(note)
            try context.save()
            // Cascade: the owned tags went with it; the guarded one stays.
            context.reset()
            #expect(try context.fetch(FetchRequest<OneSideTag>()).map(\.name) == ["c"])
            // Deleting the guarded target itself is allowed: deny is the note's rule, not the tag's.
            let tag = try #require(context.fetch(FetchRequest<OneSideTag>()).first)
            let other = OneSideNote(context: context)
            other.title = "o"
            other.guarded = tag
            try context.save()
            context.delete(tag)
            #expect(other.guarded == nil)
            try context.save()
            context.reset()
            #expect(try context.fetch(FetchRequest<OneSideNote>()).map { $0.guarded == nil } == [true])
        }
    }

    @Test func aTargetDeletedInAnotherContextIsGoneFromTheReferrersThere() throws {
        let (coordinator, first) = try oneSideStack(.durable)
        let second = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let ids = try first.performAndWait { () -> (tag: ManagedObjectID, note: ManagedObjectID) in
            let tag = OneSideTag(context: first)
            tag.name = "t"
            let keep = OneSideTag(context: first)
            keep.name = "k"
            let note = OneSideNote(context: first)
            note.title = "n"
            note.tag = tag
            note.tags = [tag, keep]
            note.pins = [keep, tag]
            try first.save()
            return (tag.objectID, note.objectID)
        }
        // The second context holds the note, with the tag, before the first deletes the tag.
        try second.performAndWait {
            let note = try #require(second.existingObject(with: ids.note) as? OneSideNote)
            #expect(note.tag?.name == "t" && note.tags.count == 2)
        }
        let received = Mutex<[ContextChanges]>([])
        let token = NotificationCenter.default.addObserver(forName: .managedObjectContextDidSave, object: first, queue: nil) { note in
            if let changes = note.userInfo?[ContextChanges.userInfoKey] as? ContextChanges { received.withLock { $0.append(changes) } }
        }
        defer { NotificationCenter.default.removeObserver(token) }
        try first.performAndWait {
            first.delete(try first.existingObject(with: ids.tag))
            try first.save()
        }
        let changes = try #require(received.withLock { $0.first })
        // The store's repair pass took the tag out of the note's row, so the note is among the updated.
        #expect(changes.updated.contains(ids.note))
        try second.performAndWait {
            second.mergeChanges(fromContextDidSave: changes)
            let note = try #require(second.existingObject(with: ids.note) as? OneSideNote)
            #expect(note.tag == nil)
            #expect(note.tags.map(\.name) == ["k"])
            #expect(note.pins.map(\.name) == ["k"])
            // An edit and save of the referrer from the second context keeps the store clean.
            note.title = "edited"
            try second.save()
            second.reset()
            let again = try #require(second.existingObject(with: ids.note) as? OneSideNote)
            #expect(again.title == "edited" && again.tag == nil && again.tags.map(\.name) == ["k"])
        }
    }

    @Test func transientRelationshipsLiveInMemoryOnly() throws {
        let (_, context) = try oneSideStack()
        try context.performAndWait {
            let tag = OneSideTag(context: context)
            tag.name = "t"
            let note = OneSideNote(context: context)
            note.title = "n"
            try context.save()
            note.draft = tag
            // A transient change is no persistent change.
            #expect(!note.hasPersistentChangedValues)
            #expect(note.draft === tag)
            // The hidden inverse is transient too, and still nullifies in memory.
            let other = OneSideTag(context: context)
            other.name = "o"
            note.draft = other
            context.delete(other)
            #expect(note.draft == nil)
            note.draft = tag
            try context.save()
            context.reset()
            let fetched = try #require(context.fetch(FetchRequest<OneSideNote>()).first)
            #expect(fetched.draft == nil)
        }
    }

    @Test func aFetchByAOneSidedToOneFindsTheReferrers() throws {
        let (_, context) = try oneSideStack()
        try context.performAndWait {
            let tag = OneSideTag(context: context)
            tag.name = "t"
            let other = OneSideTag(context: context)
            other.name = "o"
            for i in 0..<10 {
                let note = OneSideNote(context: context)
                note.title = "n\(i)"
                note.tag = i % 3 == 0 ? tag : other
            }
            try context.save()
            context.reset()
            let target = try #require(context.fetch(FetchRequest<OneSideTag>(predicate: #Predicate { $0.name == "t" })).first)
            var request = FetchRequest<ManagedObject>(entityName: "Note")
            request.filter = try PredicateParser.parse("tag == %@", arguments: [target])
            // Read through the hidden inverse's list of referrers (an index), not a scan of the notes.
            let plan = try context.explain(request)
            #expect("\(plan)".contains("_inverse.Note.tag"))
            #expect(try context.fetch(request).count == 4)
        }
    }

    /// A stale copy of a destination saved with `.overwrite` writes the app's state whole, but not its
    /// hidden inverse: a referrer another context linked meanwhile stays linked.
    @Test(arguments: [MergePolicy.overwrite, .mergeByPropertyObjectTrump, .mergeByPropertyStoreTrump])
    func aStaleDestinationSavedWholeKeepsReferrersLinkedElsewhere(_ policy: MergePolicy) throws {
        let (coordinator, first) = try oneSideStack(.durable)
        let second = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        second.mergePolicy = policy
        let tagID = try first.performAndWait { () -> ManagedObjectID in
            let tag = OneSideTag(context: first)
            tag.name = "t"
            let note = OneSideNote(context: first)
            note.title = "x"
            note.tag = tag
            try first.save()
            return tag.objectID
        }
        // The second context loads the tag (its hidden inverse lists x only).
        let staleTag = try second.performAndWait { try #require(second.existingObject(with: tagID) as? OneSideTag) }
        second.performAndWait { _ = staleTag.name }
        try first.performAndWait {
            let note = OneSideNote(context: first)
            note.title = "y"
            note.tag = try #require(first.existingObject(with: tagID) as? OneSideTag)
            try first.save()
        }
        try second.performAndWait {
            staleTag.name = "renamed"
            try second.save()
        }
        let checker = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try checker.performAndWait {
            let notes = try checker.fetch(FetchRequest<OneSideNote>())
            #expect(notes.map { $0.tag?.name ?? "nil" }.sorted() == ["renamed", "renamed"], "\(policy)")
            let tag = try #require(checker.existingObject(with: tagID) as? OneSideTag)
            checker.delete(tag)
            try checker.save()
            checker.reset()
            #expect(try checker.fetch(FetchRequest<OneSideNote>()).allSatisfy { $0.tag == nil })
            #expect(try TwoContextPropertyTests.danglingReferences(in: coordinator.persistentStores[0]).isEmpty)
        }
    }
}
