import Synchronization

/// The models alive in the process, by the classes their entities are bound to: what
/// `ManagedObject.entity()` and `fetchRequest()` look a class up in when no context is at hand.
///
/// Held weakly: a model nobody uses any more stops counting.
enum ModelClassRegistry {
    private struct Entry {
        weak var model: ManagedObjectModel?
        let serial: UInt64
    }
    private struct State {
        var next: UInt64 = 0
        var byClass: [ObjectIdentifier: [Entry]] = [:]
    }
    private static let state = Mutex(State())

    /// Files a new model under every class its entities are bound to.
    static func register(_ model: ManagedObjectModel) {
        let classes = Set(model.entities.compactMap(\.classIdentifier))
        guard !classes.isEmpty else { return }
        state.withLock { s in
            s.next += 1
            for id in classes {
                var entries = s.byClass[id, default: []].filter { $0.model != nil }
                entries.append(Entry(model: model, serial: s.next))
                s.byClass[id] = entries
            }
        }
    }

    /// The entities bound to `type` exactly in the models alive now, the newest model's first.
    static func entities(for type: AnyClass) -> [(entity: EntityDescription, model: ManagedObjectModel)] {
        let models = state.withLock { s in
            (s.byClass[ObjectIdentifier(type)] ?? []).sorted { $0.serial > $1.serial }.compactMap(\.model)
        }
        return models.compactMap { model in model.entity(for: type).map { ($0, model) } }
    }
}
