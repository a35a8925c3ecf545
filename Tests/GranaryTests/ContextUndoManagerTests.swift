import Foundation
import Testing
@testable import Granary

/// The undo manager on its own, with actions of the test's making, checked against Foundation's
/// `UndoManager` documentation (the pages of `registerUndo(withTarget:handler:)`, `beginUndoGrouping()`,
/// `endUndoGrouping()`, `undo()`, `redo()`, `canRedo`, `levelsOfUndo`, `removeAllActions()`,
/// `removeAllActions(withTarget:)`, `disableUndoRegistration()`, `setActionName(_:)`).
@Suite struct ContextUndoManagerTests {
    /// A value with a history, and the log of every action run on it.
    final class Counter {
        var value = 0
        var log: [String] = []

        /// Sets the value, registering the action that sets it back (the pattern of Foundation's
        /// examples: the undo action registers the redo by calling the setter again).
        func set(_ new: Int, _ manager: ContextUndoManager) {
            let old = value
            manager.registerUndo(withTarget: self) { [weak manager] counter in
                counter.log.append("\(new)->\(old)")
                if let manager { counter.set(old, manager) }
            }
            value = new
        }
    }

    @Test func anActionRegisteredOutsideAGroupIsUndoneAndRedoneAsTheEventsGroup() {
        let manager = ContextUndoManager()
        let counter = Counter()
        #expect(!manager.canUndo && !manager.canRedo)
        counter.set(1, manager)
        #expect(manager.groupingLevel == 1, "the registration opens the event's group")
        counter.set(2, manager)
        #expect(manager.canUndo)
        manager.undo()  // closes the event's group, then takes both back
        #expect(counter.value == 0 && counter.log == ["2->1", "1->0"])
        #expect(manager.groupingLevel == 0 && !manager.canUndo && manager.canRedo)
        manager.redo()
        #expect(counter.value == 2 && manager.canUndo && !manager.canRedo)
    }

    @Test func nestedGroupsAreTakenBackAsOneStepLastActionFirst() {
        let manager = ContextUndoManager()
        manager.groupsByEvent = false
        let counter = Counter()
        manager.beginUndoGrouping()
        counter.set(1, manager)
        manager.beginUndoGrouping()
        counter.set(2, manager)
        counter.set(3, manager)
        manager.endUndoGrouping()
        #expect(manager.groupingLevel == 1)
        manager.endUndoGrouping()
        manager.beginUndoGrouping()
        counter.set(4, manager)
        manager.endUndoGrouping()
        manager.undo()
        #expect(counter.value == 3)
        manager.undo()
        #expect(counter.value == 0 && counter.log == ["4->3", "3->2", "2->1", "1->0"])
        #expect(!manager.canUndo)
    }

    @Test func aNewActionEmptiesTheRedoStackButARedoDoesNot() {
        let manager = ContextUndoManager()
        let counter = Counter()
        counter.set(1, manager)
        manager.undo()
        #expect(manager.canRedo)
        manager.redo()  // registers the undo again, keeping the redo stack (empty now anyway)
        manager.undo()
        counter.set(5, manager)
        #expect(!manager.canRedo, "a new change makes the undone one unreachable")
        manager.undo()
        #expect(counter.value == 0)
    }

    @Test func levelsOfUndoKeepsOnlyTheNewestGroups() {
        let manager = ContextUndoManager()
        manager.levelsOfUndo = 2
        let counter = Counter()
        for value in 1...4 {
            manager.beginUndoGrouping()
            counter.set(value, manager)
            manager.endUndoGrouping()
        }
        manager.undo()
        manager.undo()
        #expect(counter.value == 2)
        manager.undo()
        #expect(counter.value == 2 && !manager.canUndo, "the two oldest groups were dropped")
    }

    @Test func disabledRegistrationRecordsNothingAndRemoveAllActionsEnablesIt() {
        let manager = ContextUndoManager()
        let counter = Counter()
        manager.disableUndoRegistration()
        manager.disableUndoRegistration()
        counter.set(1, manager)
        manager.enableUndoRegistration()
        #expect(!manager.isUndoRegistrationEnabled && !manager.canUndo)
        manager.removeAllActions()
        #expect(manager.isUndoRegistrationEnabled)
        counter.set(2, manager)
        #expect(manager.canUndo)
        manager.removeAllActions()
        #expect(!manager.canUndo && !manager.canRedo)
        manager.undo()
        #expect(counter.value == 2)
    }

    @Test func removingTheActionsOfOneTargetKeepsTheOthers() {
        let manager = ContextUndoManager()
        let kept = Counter()
        let dropped = Counter()
        manager.beginUndoGrouping()
        kept.set(1, manager)
        dropped.set(1, manager)
        manager.endUndoGrouping()
        manager.removeAllActions(withTarget: dropped)
        manager.undo()
        #expect(kept.value == 0 && dropped.value == 1)
    }

    @Test func targetsAreNotKeptAlive() {
        let manager = ContextUndoManager()
        weak var gone: Counter?
        do {
            let counter = Counter()
            gone = counter
            counter.set(1, manager)
        }
        #expect(gone == nil, "the manager held its target")
        manager.undo()  // the action's target is gone: nothing runs
        #expect(!manager.canRedo)
    }

    @Test func actionNamesFollowTheGroups() {
        let manager = ContextUndoManager()
        let counter = Counter()
        #expect(manager.undoActionName == "" && manager.redoActionName == "")
        counter.set(1, manager)
        manager.setActionName("Set One")
        #expect(manager.undoActionName == "Set One")
        manager.undo()
        #expect(manager.undoActionName == "" && manager.redoActionName == "Set One")
        manager.redo()
        #expect(manager.undoActionName == "Set One")
    }
}
