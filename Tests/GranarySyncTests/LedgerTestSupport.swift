import Foundation
@testable import GranarySync

/// A small library model covering every relationship shape the ledger distinguishes: a to-one with a
/// to-many inverse (Book.author ↔ Author.books), a many-to-many (Book.tags ↔ Tag.books), an ordered
/// to-many without inverse (Shelf.books) and a one-to-one (Passport.holder ↔ Person.passport).
let libraryLedgerSchema = LedgerSchema(entities: [
    "Author": .init(attributes: ["name"]),
    "Book": .init(attributes: ["title", "year"],
                  toOnes: ["author": .init(destination: "Author", inverse: .toMany("books"))],
                  toManys: ["tags": .init(destination: "Tag", isOrdered: false, inverse: "books")]),
    "Tag": .init(attributes: ["name"]),
    "Shelf": .init(attributes: ["label"],
                   toManys: ["books": .init(destination: "Book", isOrdered: true, inverse: nil)]),
    "Person": .init(attributes: ["name"]),
    "Passport": .init(attributes: ["number"],
                      toOnes: ["holder": .init(destination: "Person", inverse: .toOne("passport"))]),
])

/// One simulated device making events: its store, its next revision, and the events it knows, as a
/// vector (its own store included) with the highest global count among them (M2).
struct LedgerTestDevice {
    let store: StoreID
    private(set) var revision: Int64 = 0
    private(set) var known = RevisionVector()
    private(set) var highestCount: Int64 = 0

    init(store: StoreID) { self.store = store }

    /// The next event of this device, happening after everything it knows.
    mutating func record(_ changes: [ObjectChange], countAtLeast minimum: Int64 = 0,
                         timestamp: Date = Date(timeIntervalSinceReferenceDate: 0)) -> Event {
        revision += 1
        let count = max(highestCount + 1, minimum)
        let event = Event(meta: EventMeta(id: EventID(store: store, revision: revision), globalCount: count, vector: known),
                          timestamp: timestamp, changes: changes)
        learn(event)
        return event
    }

    /// Knows `event` and, by causal delivery, its whole past.
    mutating func learn(_ event: Event) {
        known = known.joined(with: event.meta.vector)
        known[event.meta.id.store] = max(known[event.meta.id.store], event.meta.id.revision)
        highestCount = max(highestCount, event.meta.globalCount)
    }

    /// Knows everything `baseline` covers, as a device that joined it (M32).
    mutating func learn(_ baseline: Baseline) {
        known = known.joined(with: baseline.vector)
        highestCount = max(highestCount, baseline.globalCount)
    }

    func knows(_ meta: EventMeta) -> Bool { known[meta.id.store] >= meta.id.revision }
}

/// Store IDs whose order is known: `orderedStores[0] < orderedStores[1] < …`.
let orderedStores: [StoreID] = (1...4).map { digit in
    StoreID(canonical: String(repeating: "\(digit)", count: 8) + "-0000-4000-8000-000000000000")!
}

extension ObjectChange {
    static func insert(_ key: ObjectKey, _ attributes: [String: SyncValue?] = [:], toOnes: [String: ObjectKey?] = [:],
                       adds: [String: [MemberAdd]] = [:]) -> ObjectChange {
        ObjectChange(key: key, kind: .insert, attributes: attributes, toOnes: toOnes, memberAdds: adds)
    }

    static func update(_ key: ObjectKey, _ attributes: [String: SyncValue?] = [:], toOnes: [String: ObjectKey?] = [:],
                       adds: [String: [MemberAdd]] = [:], removes: [String: [ObjectKey]] = [:]) -> ObjectChange {
        ObjectChange(key: key, kind: .update, attributes: attributes, toOnes: toOnes, memberAdds: adds, memberRemoves: removes)
    }

    static func delete(_ key: ObjectKey) -> ObjectChange { ObjectChange(key: key, kind: .delete) }

    static func fuse(_ loser: ObjectKey, into survivor: ObjectKey) -> ObjectChange {
        ObjectChange(key: loser, kind: .fuse(survivor: survivor))
    }
}

extension ObjectChange.MemberAdd {
    static func member(_ key: ObjectKey, at orderKey: Double? = nil) -> Self { .init(member: key, orderKey: orderKey) }
}

/// The projection of `events` integrated in the given order, and the events left waiting.
func ledgerProjection(_ events: [Event], schema: LedgerSchema = libraryLedgerSchema) -> (Projection, waiting: Int) {
    let integrator = integrated(events)
    return (Projection(of: integrator.ledger, schema: schema), integrator.delivery.waiting.count)
}

/// An integrator that received `events` in this order.
func integrated(_ events: [Event]) -> LedgerIntegrator {
    var integrator = LedgerIntegrator()
    for event in events { integrator.receive(event) }
    return integrator
}
