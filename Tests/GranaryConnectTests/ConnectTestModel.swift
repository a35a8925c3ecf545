import Foundation
import Granary
import GranaryConnect
import GranaryRecords
import GranaryStack
import Synchronization

final class Customer: ManagedObject, Parsable {
    @Managed var uuid: String
    @Managed var name: String
    @Managed var score: Int
    @Managed var orders: Set<Purchase>
    static var idKeyPath: ReferenceWritableKeyPath<Customer, String> { \.uuid }
    static var jsonKey: String { "uuid" }

    func mapValues(from map: MappingValues) throws {
        try name <- map["name"]
        try score <- map["score"]
    }
}

final class Purchase: ManagedObject {
    @Managed var customerID: String
    @Managed var number: Int
    @Managed var total: Double
    @Managed var customer: Customer?
}

final class Memo: ManagedObject {
    @Managed var text: String
}

/// The connect tests' model: `Customer` keyed by a uniqueness constraint, `Purchase` by a composite
/// `uniquenessAttributes` setting, `Memo` with no key (not managed), an abstract `Document` whose
/// setting its sub-entity `Invoice` inherits, and a `Broken` entity whose setting names a missing attribute.
enum ConnectTestModel {
    static let model: ManagedObjectModel = {
        do {
            return try ManagedObjectModel(version: "1") {
                Entity("Customer", as: Customer.self) {
                    Attribute("uuid", .string, preservesValueInHistoryOnDeletion: true)
                    Attribute("name", .string, defaultValue: "")
                    Attribute("score", .integer64, defaultValue: 0)
                    Relationship("orders", toMany: "Purchase", inverse: "customer", deleteRule: .cascade)
                    Unique("uuid")
                }
                Entity("Purchase", as: Purchase.self, userInfo: ["uniquenessAttributes": "customerID, number"]) {
                    Attribute("customerID", .string, preservesValueInHistoryOnDeletion: true)
                    Attribute("number", .integer32, preservesValueInHistoryOnDeletion: true)
                    Attribute("total", .double, defaultValue: 0.0)
                    Relationship("customer", to: "Customer", inverse: "orders")
                }
                Entity("Memo", as: Memo.self) {
                    Attribute("text", .string, defaultValue: "")
                }
                Entity("Document", abstract: true, userInfo: ["uniquenessAttributes": "code"]) {
                    Attribute("code", .string, preservesValueInHistoryOnDeletion: true)
                }
                Entity("Invoice", parent: "Document") {
                    Attribute("amount", .double, defaultValue: 0.0)
                }
                Entity("Broken", userInfo: ["uniquenessAttributes": "id, missing"]) {
                    Attribute("id", .integer64)
                }
            }
        } catch {
            fatalError("the connect test model does not build: \(error)")
        }
    }()

    static func scratchDirectory(_ label: String = #function) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("granary-connect")
            .appendingPathComponent("\(label.filter { $0.isLetter })-\(UUID().uuidString.prefix(8))", isDirectory: true)
    }

    /// A started connect over a durable store (with persistent history) in a new directory.
    static func makeConnect<S: ConnectStrategy>(_ strategy: S.Type = DirectStrategy.self, label: String = #function,
                                                options: ConnectOptions = ConnectOptions(), directory: URL? = nil) throws -> GenericConnect<S> {
        var options = options
        options.stack.storeDirectory = directory ?? scratchDirectory(label)
        let connect = GenericConnect<S>(name: "Shop", managedObjectModel: model, options: options)
        try connect.attachPersistentStore(for: StoreConfiguration(options: .init(persistentHistoryTracking: true)))
        try connect.start()
        return connect
    }
}

/// Records what happened, from any thread, for the tests to read after.
final class Recorder<Element: Sendable>: Sendable {
    private let items = Mutex<[Element]>([])
    func append(_ item: Element) { items.withLock { $0.append(item) } }
    var all: [Element] { items.withLock { $0 } }
}

/// A generic action running a closure.
final class BlockAction: GenericAction {
    let canceled = CancellationFlag()
    let body: @Sendable (BlockAction) throws -> Void
    init(_ body: @escaping @Sendable (BlockAction) throws -> Void = { _ in }) { self.body = body }
    func execute() throws { try body(self) }
    func cancel() { canceled.set() }
}

/// An entity action on `Customer` running a closure on the action's context.
final class CustomerAction: EntityAction {
    typealias ManagedObjectType = Customer
    let canceled = CancellationFlag()
    let body: @Sendable (ActionContext, CustomerAction) throws -> Void
    init(_ body: @escaping @Sendable (ActionContext, CustomerAction) throws -> Void = { _, _ in }) { self.body = body }
    func execute(context: ActionContext) throws { try body(context, self) }
    func cancel() { canceled.set() }
}

/// An entity action on `Purchase` running a closure.
final class PurchaseAction: EntityAction {
    typealias ManagedObjectType = Purchase
    let body: @Sendable (ActionContext) throws -> Void
    init(_ body: @escaping @Sendable (ActionContext) throws -> Void = { _ in }) { self.body = body }
    func execute(context: ActionContext) throws { try body(context) }
    func cancel() {}
}

struct TestFailure: Error, Equatable { let text: String }

/// A latch between an action and the test. Actions (on the connect's threads) block in `wait()`; test
/// bodies, which run on Swift's few cooperative threads, poll with `arrived()` instead of blocking one.
final class Gate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    func open() { semaphore.signal() }
    /// Blocks an action until the test opens the gate: for as long as a full run may keep the test's
    /// task from running (other suites hold Swift's cooperative threads for minutes at a time).
    func wait(seconds: Double = 900) -> Bool { semaphore.wait(timeout: .now() + seconds) == .success }

    func arrived(seconds: Double = 300) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if semaphore.wait(timeout: .now()) == .success { return true }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return false
    }
}
