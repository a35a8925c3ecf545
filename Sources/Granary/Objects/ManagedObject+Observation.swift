import Foundation
import Observation
import Synchronization

/// Swift's Observation framework for managed objects: a class that declares `Observable` has its
/// `@Managed` properties tracked by `withObservationTracking(_:onChange:)` (and SwiftUI, where there
/// is one), without notifications:
///
/// ```swift
/// final class Note: ManagedObject, Observable {
///     @Managed var title: String
/// }
///
/// withObservationTracking { label.text = note.title } onChange: { scheduleRedraw() }
/// ```
///
/// Every change of a tracked property is reported, whatever made it: a typed or key-value write, the
/// other end of a relationship being edited, a refresh or a merge of another context's save, a rollback,
/// an undo, the object turning into a fault. Classes that do not declare `Observable` pay nothing:
/// whether a class observes is decided once per entity.
///
/// Each observed object's registrar lives in a table beside it (a managed object has no room for one
/// it would rarely use), made when one of its properties is first read and dropped with the object.
enum ObjectObservation {
    private static let registrars = Mutex<[ObjectIdentifier: ObservationRegistrar]>([:])

    /// The registrar of an object of an observing class, made on first use.
    static func registrar(for object: ManagedObject) -> ObservationRegistrar {
        registrars.withLock { table in
            if let registrar = table[ObjectIdentifier(object)] { return registrar }
            let registrar = ObservationRegistrar()
            table[ObjectIdentifier(object)] = registrar
            return registrar
        }
    }

    /// The registrar of `object` if it has one: no property of an object without one was ever read,
    /// so nobody can be observing it.
    static func existingRegistrar(for object: ManagedObject) -> ObservationRegistrar? {
        registrars.withLock { $0[ObjectIdentifier(object)] }
    }

    static func forget(_ object: ManagedObject) {
        _ = registrars.withLock { $0.removeValue(forKey: ObjectIdentifier(object)) }
    }

    /// Records a read of property `index` through `keyPath` for the tracking under way, if any.
    static func access<Object: ManagedObject, Member>(_ object: Object, _ keyPath: KeyPath<Object, Member>, index: Int) {
        guard let observable = object as? any Observable else { return }
        let announcer = object.layout.observedKeyPaths.announcer(at: index) ?? {
            let made = Announcer(observable, keyPath)
            object.layout.observedKeyPaths.remember(made, at: index)
            return made
        }()
        announcer?.access(registrar(for: object), object)
    }

    /// Runs `change` between the registrar's will-set and did-set for the properties at `indexes` (every
    /// property when nil) that were ever read observed; just `change` when nobody can be observing.
    static func mutating<T>(_ object: ManagedObject, indexes: [Int]?, _ change: () throws -> T) rethrows -> T {
        guard object.layout.isObservable, let registrar = existingRegistrar(for: object) else { return try change() }
        let announcers = object.layout.observedKeyPaths.announcers(at: indexes)
        guard !announcers.isEmpty else { return try change() }
        for announcer in announcers { announcer.willSet(registrar, object) }
        defer { for announcer in announcers { announcer.didSet(registrar, object) } }
        return try change()
    }

    /// A property's key path with its static types recovered (an observing class's own, and the
    /// property's), so that the registrar, whose methods are generic over both, can be called from
    /// code that only knows a `ManagedObject`.
    struct Announcer: @unchecked Sendable {
        // @unchecked: the closures capture only a key path, which is immutable.
        let access: (ObservationRegistrar, ManagedObject) -> Void
        let willSet: (ObservationRegistrar, ManagedObject) -> Void
        let didSet: (ObservationRegistrar, ManagedObject) -> Void

        init?<Subject: Observable, Object, Member>(_ subject: Subject, _ keyPath: KeyPath<Object, Member>) {
            guard let typed = keyPath as? KeyPath<Subject, Member> else { return nil }
            access = { registrar, object in if let subject = object as? Subject { registrar.access(subject, keyPath: typed) } }
            willSet = { registrar, object in if let subject = object as? Subject { registrar.willSet(subject, keyPath: typed) } }
            didSet = { registrar, object in if let subject = object as? Subject { registrar.didSet(subject, keyPath: typed) } }
        }
    }
}

/// The key paths through which an entity's properties were read while observed, by property index:
/// what a change of a property is announced under.
final class ObservedKeyPaths: Sendable {
    private let table = Mutex<[Int: ObjectObservation.Announcer]>([:])

    func announcer(at index: Int) -> ObjectObservation.Announcer? {
        table.withLock { $0[index] }
    }

    func remember(_ announcer: ObjectObservation.Announcer?, at index: Int) {
        guard let announcer else { return }
        table.withLock { if $0[index] == nil { $0[index] = announcer } }
    }

    func announcers(at indexes: [Int]?) -> [ObjectObservation.Announcer] {
        table.withLock { table in
            guard let indexes else { return Array(table.values) }
            return indexes.compactMap { table[$0] }
        }
    }
}
