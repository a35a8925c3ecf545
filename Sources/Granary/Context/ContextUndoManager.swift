/// Records undoable changes as groups of actions and plays them back: Foundation's `UndoManager`, with
/// its names, for Linux, whose Foundation has none.
///
/// Give one to a context (`context.undoManager = ContextUndoManager()`) to make the context's changes
/// undoable, and record actions of your own beside them with `registerUndo(withTarget:handler:)`. One
/// `undo()` takes back one top-level group, `redo()` puts it back.
///
/// **Events.** With `groupsByEvent` (the default), the first action registered outside any group opens
/// a group for the current event. Foundation closes that group at the end of the run loop's turn; a
/// Linux program has no such turn, so here the event ends when a context using this manager processes
/// its pending changes (`processPendingChanges()`, which `save()`, fetches, `undo()` and `redo()` call),
/// or when `undo()` or `redo()` runs. Nest `beginUndoGrouping()` and `endUndoGrouping()` to make an undo
/// step of your own: groups opened inside an event belong to it.
///
/// **Checkpoints.** Contexts hand their changes to the manager in one action per event. The manager asks
/// them for what they hold so far (Foundation's checkpoint) before it opens or closes a group, undoes,
/// redoes, names an action, stops registering, and answers `canUndo` or `canRedo`: what was changed before
/// the call belongs before it.
///
/// Not thread-safe, and not `Sendable`: use it on the queue of the contexts it serves. Misuse that
/// Foundation answers with an exception (closing a group that is not open, undoing inside an undo)
/// stops the program with a message; `ManagedObjectContext.undo()` throws instead for the mistakes it can
/// see coming.
public final class ContextUndoManager {
    /// One registered action: the target is held weakly, as Foundation's undo manager does not keep its
    /// targets alive (a context holds its manager; a manager holding the context would keep both forever).
    private struct Call {
        weak var target: AnyObject?
        let run: (AnyObject) -> Void
    }

    private enum Action {
        case call(Call)
        case group(Group)
    }

    private struct Group {
        var actions: [Action] = []
        var actionName = ""
    }

    private struct CheckpointObserver {
        weak var owner: AnyObject?
        let action: (AnyObject) -> Void
    }

    private var undoStack: [Group] = []
    private var redoStack: [Group] = []
    /// The groups open now, outermost first.
    private var openGroups: [Group] = []
    /// Whether `openGroups[0]` was opened by a registration outside any group (`groupsByEvent`): the
    /// end of the event closes it.
    private var isEventGroupOpen = false
    private var disableCount = 0
    private var checkpointObservers: [CheckpointObserver] = []

    /// Whether a registration outside any group opens a group for the current event (see the type's
    /// comment for when an event ends). When `false`, every action must be registered inside
    /// `beginUndoGrouping()` and `endUndoGrouping()`.
    public var groupsByEvent = true

    /// How many top-level groups the undo stack keeps (and the redo stack); the oldest go first. 0, the
    /// default, keeps them all.
    public var levelsOfUndo = 0 {
        didSet {
            precondition(levelsOfUndo >= 0, "levelsOfUndo cannot be negative (\(levelsOfUndo))")
            trim(&undoStack)
            trim(&redoStack)
        }
    }

    /// Set while `undo()` plays a group back: actions registered meanwhile go to the redo stack.
    public private(set) var isUndoing = false
    /// Set while `redo()` plays a group back: actions registered meanwhile go to the undo stack, and the
    /// redo stack is kept.
    public private(set) var isRedoing = false

    /// Creates a manager with empty stacks, grouping by event.
    public init() {}

    // MARK: Groups

    /// Whether anything is recorded, without asking the contexts first (as `canUndo` does).
    var hasActions: Bool { !undoStack.isEmpty || !redoStack.isEmpty || openGroups.contains { !$0.actions.isEmpty } }

    /// How many groups are open (the event's group counts).
    public var groupingLevel: Int { openGroups.count }

    /// Opens a group: the actions registered until the matching `endUndoGrouping()` are undone together.
    /// Changes a context made before the call stay outside the group.
    public func beginUndoGrouping() {
        checkpoint()
        openGroups.append(Group())
    }

    /// Closes the group the last `beginUndoGrouping()` opened; a top-level group with actions becomes
    /// the next one `undo()` takes back. Closing a group that is not open stops the program.
    public func endUndoGrouping() {
        precondition(!openGroups.isEmpty, "endUndoGrouping() without a matching beginUndoGrouping()")
        checkpoint()
        closeGroup()
    }

    private func closeGroup() {
        let group = openGroups.removeLast()
        guard !group.actions.isEmpty else {
            if openGroups.isEmpty { isEventGroupOpen = false }
            return
        }
        if openGroups.isEmpty {
            isEventGroupOpen = false
            if isUndoing {
                redoStack.append(group)
                trim(&redoStack)
            } else {
                undoStack.append(group)
                trim(&undoStack)
            }
        } else {
            openGroups[openGroups.count - 1].actions.append(.group(group))
        }
    }

    /// Ends the current event: closes the group a registration opened for it, unless groups opened
    /// inside it are still open (then the event lasts until they are closed and the next event ends).
    func endEvent() {
        guard isEventGroupOpen, !isUndoing, !isRedoing else { return }
        checkpoint()
        if isEventGroupOpen && openGroups.count == 1 { closeGroup() }
    }

    // MARK: Registering

    /// Records an action that undoes a change: `undo()` calls `handler` with `target`, unless the target
    /// is gone by then (the manager does not keep it alive). Called from inside `handler`, it records the
    /// redo. Does nothing while registration is disabled; outside any group it opens the event's group,
    /// or stops the program when `groupsByEvent` is false.
    public func registerUndo<Target: AnyObject>(withTarget target: Target, handler: @escaping (Target) -> Void) {
        guard disableCount == 0 else { return }
        if openGroups.isEmpty {
            precondition(groupsByEvent, "an undo action was registered outside any group and groupsByEvent is false: call beginUndoGrouping() first")
            openGroups.append(Group())
            isEventGroupOpen = true
        }
        openGroups[openGroups.count - 1].actions.append(.call(Call(target: target) { handler($0 as! Target) }))
        // A new change makes what was undone before it unreachable, as in Foundation.
        if !isUndoing && !isRedoing { redoStack.removeAll() }
    }

    /// Whether actions are recorded: false between `disableUndoRegistration()` and the matching
    /// `enableUndoRegistration()`.
    public var isUndoRegistrationEnabled: Bool { disableCount == 0 }

    /// Stops recording actions until the matching `enableUndoRegistration()` (calls nest): for changes
    /// that should not be undoable, such as setting up initial data. Changes a context made before the
    /// call stay undoable.
    public func disableUndoRegistration() {
        checkpoint()
        disableCount += 1
    }

    /// Undoes one `disableUndoRegistration()`; one without a matching disable stops the program.
    public func enableUndoRegistration() {
        precondition(disableCount > 0, "enableUndoRegistration() without a matching disableUndoRegistration()")
        disableCount -= 1
    }

    // MARK: Undoing and redoing

    /// Whether `undo()` has something to take back (after the contexts hand over their changes).
    public var canUndo: Bool {
        checkpoint()
        return !undoStack.isEmpty || openGroups.count == 1 && !openGroups[0].actions.isEmpty
    }

    /// Whether `redo()` has something to put back (after the contexts hand over their changes, which
    /// empty the redo stack).
    public var canRedo: Bool {
        checkpoint()
        return !redoStack.isEmpty
    }

    /// Takes back the last top-level group, closing it first if it is the only group open, and records
    /// what its actions register as one group on the redo stack. Calling it with nested groups open, or
    /// from inside an undo or redo, stops the program (`ManagedObjectContext.undo()` throws instead).
    public func undo() {
        precondition(!isUndoing && !isRedoing, "undo() was called while \(isUndoing ? "undoing" : "redoing")")
        checkpoint()
        if openGroups.count == 1 { closeGroup() }
        precondition(openGroups.isEmpty, "undo() was called with \(openGroups.count) nested undo groups open: close them with endUndoGrouping() first")
        guard let group = undoStack.popLast() else { return }
        isUndoing = true
        playBack(group)
        isUndoing = false
    }

    /// Puts back the last group `undo()` took back, recording what its actions register as one group on
    /// the undo stack. Calling it with nested groups open, or from inside an undo or redo, stops the
    /// program (`ManagedObjectContext.redo()` throws instead).
    public func redo() {
        precondition(!isUndoing && !isRedoing, "redo() was called while \(isUndoing ? "undoing" : "redoing")")
        checkpoint()
        if openGroups.count == 1 { closeGroup() }
        precondition(openGroups.isEmpty, "redo() was called with \(openGroups.count) nested undo groups open: close them with endUndoGrouping() first")
        guard let group = redoStack.popLast() else { return }
        isRedoing = true
        playBack(group)
        isRedoing = false
    }

    /// Runs a group's actions, last first, inside a group that collects what they register; that group
    /// keeps the played group's name.
    private func playBack(_ group: Group) {
        openGroups = [Group(actionName: group.actionName)]
        run(group)
        // Contexts changed by actions of the app's own hand those changes over into this group.
        checkpoint()
        // Groups an action opened and left open are closed into the collecting group, which an action
        // may also have closed itself (then its actions went where `closeGroup` puts them).
        while openGroups.count > 1 { closeGroup() }
        guard let recorded = openGroups.popLast(), !recorded.actions.isEmpty else { return }
        if isUndoing {
            redoStack.append(recorded)
            trim(&redoStack)
        } else {
            undoStack.append(recorded)
            trim(&undoStack)
        }
    }

    private func run(_ group: Group) {
        for action in group.actions.reversed() {
            switch action {
            case .call(let call): if let target = call.target { call.run(target) }
            case .group(let nested): run(nested)
            }
        }
    }

    // MARK: Action names

    /// The name of the group `undo()` would take back ("" when it has none, or nothing to undo), for an
    /// Undo menu item.
    public var undoActionName: String {
        if openGroups.count == 1 && !openGroups[0].actions.isEmpty { return openGroups[0].actionName }
        return undoStack.last?.actionName ?? ""
    }

    /// The name of the group `redo()` would put back ("" when it has none, or nothing to redo).
    public var redoActionName: String { redoStack.last?.actionName ?? "" }

    /// Names the group being recorded (the open top-level group, or else the last one closed), such as
    /// "Rename": call it after making the change. While undoing, it names the redo group.
    public func setActionName(_ actionName: String) {
        checkpoint()
        if !openGroups.isEmpty {
            openGroups[0].actionName = actionName
        } else if !undoStack.isEmpty {
            undoStack[undoStack.count - 1].actionName = actionName
        }
    }

    // MARK: Removing actions

    /// Empties both stacks and the groups still open, and enables registration again (as Foundation's
    /// does): what was recorded can no longer be undone or redone. Contexts call it on `rollback()` and
    /// `reset()`.
    public func removeAllActions() {
        undoStack = []
        redoStack = []
        for i in openGroups.indices { openGroups[i].actions = [] }
        disableCount = 0
    }

    /// Removes every action registered with `target` (and those whose target is gone), leaving the
    /// others: for an object that goes away while its actions are still recorded.
    public func removeAllActions(withTarget target: AnyObject) {
        func keep(_ group: Group) -> Group? {
            var kept = Group(actionName: group.actionName)
            for action in group.actions {
                switch action {
                case .call(let call):
                    if let existing = call.target, existing !== target { kept.actions.append(action) }
                case .group(let nested):
                    if let nested = keep(nested) { kept.actions.append(.group(nested)) }
                }
            }
            return kept.actions.isEmpty ? nil : kept
        }
        undoStack = undoStack.compactMap(keep)
        redoStack = redoStack.compactMap(keep)
        for i in openGroups.indices { openGroups[i].actions = keep(openGroups[i])?.actions ?? [] }
    }

    private func trim(_ stack: inout [Group]) {
        if levelsOfUndo > 0 && stack.count > levelsOfUndo { stack.removeFirst(stack.count - levelsOfUndo) }
    }

    // MARK: Checkpoints

    /// Has `action` called with `owner` at each checkpoint, while `owner` lives: a context hands over its
    /// pending changes there.
    func addCheckpointObserver<Owner: AnyObject>(_ owner: Owner, _ action: @escaping (Owner) -> Void) {
        checkpointObservers.removeAll { $0.owner == nil || $0.owner === owner }
        checkpointObservers.append(CheckpointObserver(owner: owner) { action($0 as! Owner) })
    }

    func removeCheckpointObserver(_ owner: AnyObject) {
        checkpointObservers.removeAll { $0.owner == nil || $0.owner === owner }
    }

    private func checkpoint() {
        for observer in checkpointObservers {
            if let owner = observer.owner { observer.action(owner) }
        }
    }
}
