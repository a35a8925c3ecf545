import Foundation
import Testing
@testable import Granary

/// The validation hooks of `ManagedObject`, which `save()` and `validationErrors()` call.
@Suite struct ValidationHookTests {
    // Apple: NSManagedObject.validateForUpdate() — "Subclasses should invoke super's implementation before
    // performing their own validation": the default does the model's checks, an override adds a rule, and
    // what it throws fails the save with an error naming the object.
    @Test func anOverrideAddsARuleAndItsErrorNamesTheObject() throws {
        let (_, context) = try makeNotesStack()
        try context.performAndWait {
            let note = Note(context: context)
            note.title = "Checked"
            let other = Note(context: context)
            other.title = "Other"
            try context.save()
            note.refusal = HookRefusal(reason: "frozen")
            note.revision = 3
            #expect {
                try context.save()
            } throws: { error in
                guard case .validationFailed(let entity, let object, let hook, let underlying) = error as? ContextError else { return false }
                return entity == "Note" && object == note.objectID && hook == "validateForUpdate"
                    && underlying as? HookRefusal == HookRefusal(reason: "frozen") && "\(error)".contains("validateForUpdate of Note")
            }
            // Reported by validationErrors() with the others, and nothing was written.
            other.title = ""
            let problems = context.validationErrors()
            #expect(problems.count == 2)
            #expect(problems.contains { if case .validationFailed = $0 as? ContextError { true } else { false } })
            #expect(problems.contains { if case .validation(let list) = $0 as? ContextError { list.map(\.propertyName) == ["title"] } else { false } })
            #expect(note.hasChanges)
            note.refusal = nil
            other.title = "Other"
            try context.save()
        }
    }

    // Apple: NSManagedObject.validateForInsert() — the model's checks run by default, and a
    // ValidationError thrown by a subclass's validateValue(_:forKey:) joins the model's errors.
    @Test func modelChecksAndCustomValidationErrorsAreCollectedTogether() throws {
        let (_, context) = try makeNotesStack()
        context.performAndWait {
            let placeholder = Note(context: context)
            placeholder.title = "TBD"
            let empty = Note(context: context)
            empty.title = ""
            #expect {
                try context.save()
            } throws: { error in
                guard case .validation(let list) = error as? ContextError else { return false }
                let reasons = list.map(\.reason)
                return list.count == 2 && reasons.contains(.custom(rule: "noPlaceholders", message: "a real title"))
                    && reasons.contains(.tooShort(length: 0, minimum: 1))
            }
            #expect(placeholder.isInserted && empty.isInserted)
        }
    }

    // Apple: NSManagedObject.validateValue(_:forKey:) — "This method is responsible for two things:
    // coercing the value into an appropriate type for the object, and validating it". A value coerced at
    // save is what is stored; validationErrors() only reports.
    @Test func aValueCoercedByValidateValueIsWhatTheSaveStores() throws {
        let (coordinator, context) = try makeNotesStack()
        try context.performAndWait {
            let note = Note(context: context)
            note.title = "  Padded  "
            #expect(context.validationErrors().isEmpty)
            #expect(note.title == "  Padded  ")
            try context.save()
            #expect(note.title == "Padded")
            #expect(!note.hasChanges)

            // Called directly, the default coerces to the attribute's canonical type.
            var value: Any? = 5 as Int
            try note.validateValue(&value, forKey: "revision")
            #expect(value as? Int64 == 5)
            var tooLong: Any? = String(repeating: "x", count: 41)
            #expect(throws: ContextError.self) { try note.validateValue(&tooLong, forKey: "title") }
            var anything: Any? = 1
            #expect {
                try note.validateValue(&anything, forKey: "nope")
            } throws: { error in
                if case .unknownKey(let entity, let key) = error as? ContextError { return entity == "Note" && key == "nope" }
                return false
            }
        }
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let stored = try reader.performAndWait { try reader.fetch(FetchRequest<Note>()).first?.title }
        #expect(stored == "Padded")
    }

    // Apple: NSManagedObject.validateForDelete() — "An object cannot be deleted if it has a relationship
    // has a 'deny' delete rule and that relationship has a destination object."
    @Test func validateForDeleteRunsForDeletionsAndKeepsTheDenyRule() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            let company = Company(context: context)
            company.name = "Acme"
            let employee = Employee(context: context)
            employee.name = "Ada"
            employee.company = company
            try context.save()
            context.delete(company)
            #expect {
                try company.validateForDelete()
            } throws: { error in
                if case .deleteDenied(let entity, let relationship, _, let count) = error as? ContextError {
                    return entity == "Company" && relationship == "employees" && count == 1
                }
                return false
            }
            #expect(throws: ContextError.self) { try context.save() }
        }
        let (_, notes) = try makeNotesStack()
        try notes.performAndWait {
            let note = Note(context: notes)
            note.title = "Doomed"
            try notes.save()
            note.events = []
            notes.delete(note)
            try notes.save()
            #expect(note.events.contains("validateForDelete"))
        }
    }

    // The order of every hook in one save, following Apple's pages: willSave() (NSManagedObject.willSave():
    // changes made there are saved, so they are made before validation checks them), then the validation
    // hooks (NSManagedObject.validateForUpdate(): called to decide whether the save may proceed), then
    // didSave() (NSManagedObject.didSave(): "after the managed object's context completes a save
    // operation"), then, for a deletion, the fault hooks as it leaves the context.
    @Test func theHooksOfOneSaveRunInOrder() throws {
        let (_, context) = try makeNotesStack()
        let journal = HookJournal()
        try context.performAndWait {
            let updated = Note(context: context)
            updated.title = "Updated"
            let deleted = Note(context: context)
            deleted.title = "Deleted"
            try context.save()
            for (note, label) in [(updated, "u"), (deleted, "d")] {
                note.journal = journal
                note.label = label
            }
            updated.title = "Updated again"
            updated.summarizesInWillSave = true
            context.delete(deleted)
            let inserted = Note(context: context)
            inserted.journal = journal
            inserted.label = "i"
            inserted.title = "Inserted"
            journal.lines = []
            try context.save()
            #expect(updated.summary == "saved Updated again")
        }
        func position(_ line: String) -> Int { journal.lines.firstIndex(of: line) ?? -1 }
        for label in ["u", "i", "d"] {
            let will = position(label == "d" ? "d willSave(deleted)" : "\(label) willSave")
            let validate = position(label == "u" ? "u validateForUpdate" : label == "i" ? "i validateForInsert" : "d validateForDelete")
            let did = position(label == "d" ? "d didSave(deleted)" : "\(label) didSave")
            #expect(will >= 0 && will < validate && validate < did, "\(label): \(journal.lines)")
        }
        // Every willSave before any validation, every validation before any didSave.
        let lastWillSave = journal.lines.lastIndex { $0.contains("willSave") }!
        let firstValidation = journal.lines.firstIndex { $0.contains("validateFor") }!
        let lastValidation = journal.lines.lastIndex { $0.contains("validateFor") }!
        let firstDidSave = journal.lines.firstIndex { $0.contains("didSave") }!
        #expect(lastWillSave < firstValidation && lastValidation < firstDidSave, "\(journal.lines)")
        #expect(journal.lines.suffix(2) == ["d willTurnIntoFault", "d didTurnIntoFault"])
    }
}
