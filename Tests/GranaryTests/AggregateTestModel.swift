import Foundation
@testable import Granary

/// Purchases at outlets, with labels: attributes of every type an aggregate reads (integers of two
/// widths, doubles, decimals, dates, strings), most optional, a to-one to group by and a to-many that
/// cannot be grouped by. `amount` and `category` are indexed.
final class Outlet: ManagedObject {
    @Managed var name: String
    @Managed var city: String?
    @Managed var purchases: Set<Purchase>
}

final class Purchase: ManagedObject {
    @Managed var category: String?
    @Managed var amount: Int64?
    @Managed var price: Double?
    @Managed var quantity: Int16
    @Managed var total: Decimal?
    @Managed var sold: Date?
    @Managed var code: UUID?
    @Managed var outlet: Outlet?
    @Managed var labels: Set<Label>
}

final class Label: ManagedObject {
    @Managed var text: String
    @Managed var purchases: Set<Purchase>
}

func makeAggregateModel() throws -> ManagedObjectModel {
    try ManagedObjectModel(version: "aggregates") {
        Entity("Outlet", as: Outlet.self) {
            Attribute("name", .string)
            Attribute("city", .string, optional: true)
            Relationship("purchases", toMany: "Purchase", inverse: "outlet")
        }
        Entity("Purchase", as: Purchase.self) {
            Attribute("category", .string, optional: true)
            Attribute("amount", .integer64, optional: true)
            Attribute("price", .double, optional: true)
            Attribute("quantity", .integer16, defaultValue: Int16(0))
            Attribute("total", .decimal, optional: true)
            Attribute("sold", .date, optional: true)
            Attribute("code", .uuid, optional: true)
            Attribute("memo", .string, optional: true, transient: true)
            Relationship("outlet", to: "Outlet", inverse: "purchases")
            Relationship("labels", toMany: "Label", inverse: "purchases")
            Index("byAmount", "amount")
            Index("byCategory", "category")
        }
        Entity("Label", as: Label.self) {
            Attribute("text", .string)
            Relationship("purchases", toMany: "Purchase", inverse: "labels")
        }
    }
}

/// A coordinator with one store of the aggregate model and a private-queue context on it.
func makeAggregateStack(_ type: PersistentStore.StoreType = .inMemory) throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
    let coordinator = PersistentStoreCoordinator(managedObjectModel: try makeAggregateModel())
    try coordinator.addPersistentStore(type: type, at: type == .durable ? scratchURL() : nil)
    return (coordinator, ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator))
}

@discardableResult
func makePurchase(_ context: ManagedObjectContext, _ category: String?, amount: Int64?, price: Double? = nil, quantity: Int16 = 0,
                  total: Decimal? = nil, sold: Date? = nil, outlet: Outlet? = nil) -> Purchase {
    let purchase = Purchase(context: context)
    purchase.category = category
    purchase.amount = amount
    purchase.price = price
    purchase.quantity = quantity
    purchase.total = total
    purchase.sold = sold
    purchase.outlet = outlet
    return purchase
}
