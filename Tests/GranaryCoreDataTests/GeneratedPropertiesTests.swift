// Port of the two files Xcode's class generation ("Manual/None" codegen) writes for each entity:
// `Recipe+CoreDataClass.swift` and `Recipe+CoreDataProperties.swift`, with their `NSSet?`, `NSOrderedSet?`
// and `NSDecimalNumber?` properties and the generated accessors of the to-many relationships.
//
// Lines a porter changes beyond `import CoreData` → `import GranaryCoreData` and `@NSManaged` → `@Managed`:
// - `@objc(Recipe)` above the class goes (Linux has no Objective-C runtime);
// - the `@Managed` properties move from the extension in +CoreDataProperties.swift into the class body in
//   +CoreDataClass.swift: a Swift property wrapper needs stored storage, which an extension cannot have
//   (Core Data's `@NSManaged` is a compiler attribute for the Objective-C runtime, which Linux lacks);
// - each generated accessor loses its `@objc(addTagsObject:)` line and gets a body, one line in terms of
//   `mutableSetValue(forKey:)` / `mutableOrderedSetValue(forKey:)` (Core Data implements them at run time
//   from the `@objc` selector; Swift on Linux cannot): `@NSManaged public func addToTags(_ value: Tag)`
//   becomes `public func addToTags(_ value: Tag) { mutableSetValue(forKey: "tags").add(value) }`;
// - the model is registered in code (Linux has no model compiler), as in EarthquakesModel.swift.
import GranaryCoreData
import Testing

// MARK: Recipe+CoreDataClass.swift

public final class Recipe: NSManagedObject {
    @Managed public var name: String?
    @Managed public var price: NSDecimalNumber?
    @Managed public var tags: NSSet?
    @Managed public var steps: NSOrderedSet?
}

// MARK: Recipe+CoreDataProperties.swift

extension Recipe {

    @nonobjc public class func fetchRequest() -> NSFetchRequest<Recipe> {
        return NSFetchRequest<Recipe>(entityName: "Recipe")
    }

    // (the four @Managed properties: in the class body above)

}

// MARK: Generated accessors for tags
extension Recipe {

    public func addToTags(_ value: Tag) { mutableSetValue(forKey: "tags").add(value) }

    public func removeFromTags(_ value: Tag) { mutableSetValue(forKey: "tags").remove(value) }

    public func addToTags(_ values: NSSet) { mutableSetValue(forKey: "tags").union(values as! Set<AnyHashable>) }

    public func removeFromTags(_ values: NSSet) { mutableSetValue(forKey: "tags").minus(values as! Set<AnyHashable>) }

}

// MARK: Generated accessors for steps
extension Recipe {

    public func insertIntoSteps(_ value: Step, at idx: Int) { mutableOrderedSetValue(forKey: "steps").insert(value, at: idx) }

    public func removeFromSteps(at idx: Int) { mutableOrderedSetValue(forKey: "steps").removeObject(at: idx) }

    public func insertIntoSteps(_ values: [Step], at indexes: NSIndexSet) {
        mutableOrderedSetValue(forKey: "steps").insert(values, at: indexes as IndexSet)
    }

    public func removeFromSteps(at indexes: NSIndexSet) { mutableOrderedSetValue(forKey: "steps").removeObjects(at: indexes as IndexSet) }

    public func replaceSteps(at idx: Int, with value: Step) { mutableOrderedSetValue(forKey: "steps").replaceObject(at: idx, with: value) }

    public func replaceSteps(at indexes: NSIndexSet, with values: [Step]) {
        mutableOrderedSetValue(forKey: "steps").replaceObjects(at: indexes as IndexSet, with: values)
    }

    public func addToSteps(_ value: Step) { mutableOrderedSetValue(forKey: "steps").add(value) }

    public func removeFromSteps(_ value: Step) { mutableOrderedSetValue(forKey: "steps").remove(value) }

    public func addToSteps(_ values: NSOrderedSet) { mutableOrderedSetValue(forKey: "steps").union(values) }

    public func removeFromSteps(_ values: NSOrderedSet) { mutableOrderedSetValue(forKey: "steps").minus(values) }

}

extension Recipe : Identifiable {

}

// MARK: Tag+CoreDataClass.swift, Tag+CoreDataProperties.swift

public final class Tag: NSManagedObject {
    @Managed public var name: String?
    @Managed public var recipes: NSSet?
}

extension Tag {

    @nonobjc public class func fetchRequest() -> NSFetchRequest<Tag> {
        return NSFetchRequest<Tag>(entityName: "Tag")
    }

}

// MARK: Step+CoreDataClass.swift, Step+CoreDataProperties.swift

public final class Step: NSManagedObject {
    @Managed public var text: String?
    @Managed public var recipe: Recipe?
}

extension Step {

    @nonobjc public class func fetchRequest() -> NSFetchRequest<Step> {
        return NSFetchRequest<Step>(entityName: "Step")
    }

}

/// Not in the port: the model Xcode's .xcdatamodeld declares, registered in code.
let recipesModel: NSManagedObjectModel = {
    do {
        return try ManagedObjectModel(version: "1") {
            Entity("Recipe", as: Recipe.self) {
                Attribute("name", .string, optional: true)
                Attribute("price", .decimal, optional: true)
                Relationship("tags", toMany: "Tag", inverse: "recipes")
                Relationship("steps", toMany: "Step", ordered: true, inverse: "recipe", deleteRule: .cascade)
            }
            Entity("Tag", as: Tag.self) {
                Attribute("name", .string, optional: true)
                Relationship("recipes", toMany: "Recipe", inverse: "tags")
            }
            Entity("Step", as: Step.self) {
                Attribute("text", .string, optional: true)
                Relationship("recipe", to: "Recipe", inverse: "steps")
            }
        }
    } catch {
        fatalError("the recipes model does not build: \(error)")
    }
}()

@Suite struct GeneratedPropertiesTests {
    /// A container on a durable store, and how to read back what was saved: a new background context
    /// of it, which holds no object yet and so fetches from the store.
    func containers() throws -> (NSPersistentContainer, () -> NSPersistentContainer) {
        ModelRegistry.shared.register(recipesModel, named: "Recipes")
        let url = scratchStoreURL()
        func make() -> NSPersistentContainer {
            let container = NSPersistentContainer(name: "Recipes")
            container.persistentStoreDescriptions.first!.url = url
            container.loadPersistentStores { _, error in precondition(error == nil, "\(String(describing: error))") }
            return container
        }
        let container = make()
        return (container, { container })
    }

    // Apple: NSDecimalNumber — Core Data's generated property for a Decimal attribute; the value saved is
    // the value fetched, digit for digit.
    @Test func anNSDecimalNumberPropertyRoundTripsThroughSaveAndFetch() throws {
        let (container, reopen) = try containers()
        let context = container.viewContext
        try context.performAndWait {
            let recipe = Recipe(context: context)
            recipe.name = "Bread"
            recipe.price = NSDecimalNumber(string: "12.345678901234567890")
            #expect(recipe.price == NSDecimalNumber(string: "12.345678901234567890"))
            let free = Recipe(context: context)
            free.name = "Water"
            #expect(free.price == nil)
            try context.save()
        }
        let other = reopen().newBackgroundContext()
        let prices = try other.performAndWait {
            let request = Recipe.fetchRequest()
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            return try other.fetch(request).map { $0.price }
        }
        #expect(prices == [NSDecimalNumber(string: "12.345678901234567890"), nil])
    }

    // Apple: NSManagedObject.mutableSetValue(forKey:) — "Objects added to the mutable set proxy become
    // related to the receiver, and objects removed from the mutable set become unrelated"; the inverse
    // follows, and the NSSet property reads the relationship after save and fetch.
    @Test func generatedSetAccessorsEditTheRelationshipAndItsInverse() throws {
        let (container, reopen) = try containers()
        let context = container.viewContext
        try context.performAndWait {
            let recipe = Recipe(context: context)
            recipe.name = "Soup"
            let hot = Tag(context: context), quick = Tag(context: context), vegan = Tag(context: context)
            hot.name = "hot"
            quick.name = "quick"
            vegan.name = "vegan"
            recipe.addToTags(hot)
            recipe.addToTags(NSSet(array: [quick, vegan]))
            #expect(recipe.tags?.count == 3)
            #expect(hot.recipes?.contains(recipe) == true)
            recipe.removeFromTags(quick)
            #expect(quick.recipes?.count == 0)
            recipe.removeFromTags(NSSet(array: [vegan]))
            #expect((recipe.tags as? Set<AnyHashable>)?.compactMap { ($0.base as? Tag)?.name } == ["hot"])
            recipe.addToTags(quick)
            try context.save()
        }
        let other = reopen().newBackgroundContext()
        let names = try other.performAndWait {
            let recipe = try #require(try other.fetch(Recipe.fetchRequest()).first)
            return (recipe.tags?.allObjects as? [Tag] ?? []).compactMap(\.name).sorted()
        }
        #expect(names == ["hot", "quick"])
    }

    // Apple: NSManagedObject.mutableOrderedSetValue(forKey:) and the accessors Xcode generates for an
    // ordered relationship (insert at an index, replace, remove at an index): the order is saved.
    @Test func generatedOrderedAccessorsKeepTheOrderThroughSaveAndFetch() throws {
        let (container, reopen) = try containers()
        let context = container.viewContext
        try context.performAndWait {
            let recipe = Recipe(context: context)
            recipe.name = "Tea"
            func step(_ text: String) -> Step {
                let step = Step(context: context)
                step.text = text
                return step
            }
            let boil = step("boil"), pour = step("pour"), steep = step("steep"), drink = step("drink")
            let stir = step("stir"), cool = step("cool")
            recipe.addToSteps(pour)
            recipe.insertIntoSteps(boil, at: 0)
            recipe.addToSteps(NSOrderedSet(array: [steep, drink]))
            #expect(recipe.steps?.array.compactMap { ($0 as? Step)?.text } == ["boil", "pour", "steep", "drink"])
            recipe.insertIntoSteps([stir], at: NSIndexSet(index: 3))
            recipe.replaceSteps(at: 3, with: cool)
            #expect(stir.recipe == nil)
            #expect(cool.recipe === recipe)
            recipe.removeFromSteps(at: 0)
            recipe.addToSteps(boil)
            recipe.removeFromSteps(NSOrderedSet(array: [steep]))
            #expect(steep.recipe == nil)
            try context.save()
        }
        let other = reopen().newBackgroundContext()
        let texts = try other.performAndWait {
            let recipe = try #require(try other.fetch(Recipe.fetchRequest()).first)
            return recipe.steps?.array.compactMap { ($0 as? Step)?.text }
        }
        #expect(texts == ["pour", "cool", "drink", "boil"])
    }

    // Apple: Core Data's generated `NSSet?` and `NSOrderedSet?` properties are settable: assigning a whole
    // set replaces the relationship's members.
    @Test func assigningAnNSSetOrNSOrderedSetReplacesTheMembers() throws {
        let (container, _) = try containers()
        let context = container.viewContext
        try context.performAndWait {
            let recipe = Recipe(context: context)
            let a = Tag(context: context), b = Tag(context: context)
            recipe.tags = NSSet(array: [a, b])
            #expect(a.recipes?.count == 1 && b.recipes?.count == 1)
            recipe.tags = NSSet(object: b)
            #expect(a.recipes?.count == 0)
            let one = Step(context: context), two = Step(context: context)
            recipe.steps = NSOrderedSet(array: [two, one])
            #expect(recipe.steps?.firstObject as? Step === two)
            #expect(one.recipe === recipe)
            recipe.steps = nil
            #expect(one.recipe == nil)
            try context.save()
        }
    }

    // Not Core Data's behaviour (it raises an exception): a proxy of an unknown key, or one given a value
    // that is not a managed object, changes nothing and the next save reports it as a typed error.
    @Test func aProxyOfAnUnknownKeyMakesTheNextSaveThrowNamingIt() throws {
        let (container, _) = try containers()
        let context = container.viewContext
        context.performAndWait {
            let recipe = Recipe(context: context)
            recipe.mutableSetValue(forKey: "tagz").add(Tag(context: context))
            #expect {
                try context.save()
            } throws: { error in
                guard case ContextError.unknownKey(let entity, let key) = error else { return false }
                return entity == "Recipe" && key == "tagz"
            }
            context.rollback()
            let other = Recipe(context: context)
            other.mutableSetValue(forKey: "tags").add("not a tag")
            #expect(other.tags?.count == 0)
            #expect {
                try context.save()
            } throws: { error in
                guard case ContextError.wrongValueType(let entity, let key, _, _) = error else { return false }
                return entity == "Recipe" && key == "tags"
            }
        }
    }
}
