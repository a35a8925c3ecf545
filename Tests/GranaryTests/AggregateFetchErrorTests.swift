import Foundation
import Testing
@testable import Granary

/// A grouped or aggregate fetch that cannot be run is a typed error naming what is wrong and where,
/// thrown before the store reads a row (Core Data raises an exception for most of these).
@Suite struct AggregateFetchErrorTests {
    static func expression(_ name: String, _ expression: ExpressionDescription.Expression, as type: AttributeType = .undefined) -> FetchProperty {
        .expression(ExpressionDescription(name: name, expression: expression, resultType: type))
    }

    /// The error a request throws, with its message.
    static func failure(_ context: ManagedObjectContext, _ request: FetchRequest<Purchase>) -> (ContextError, String)? {
        do {
            _ = try context.fetchDictionaries(request)
            return nil
        } catch let error as ContextError {
            return (error, error.description)
        } catch {
            Issue.record("not a ContextError: \(error)")
            return nil
        }
    }

    @Test func aSumOrAverageOfSomethingNotANumber() throws {
        let (_, context) = try makeAggregateStack()
        context.performAndWait {
            var request = FetchRequest<Purchase>()
            request.propertiesToFetch = [Self.expression("total", .sum("category"))]
            guard case (.invalidAggregate(let entity, let name, let keyPath, _), let message)? = Self.failure(context, request) else {
                Issue.record("no invalidAggregate")
                return
            }
            #expect(entity == "Purchase" && name == "total" && keyPath == "category")
            #expect(message.contains("number") && message.contains("string"))
            request.propertiesToFetch = [Self.expression("mean", .average("sold"))]
            #expect(Self.failure(context, request).map { "\($0.0)" }?.contains("mean") == true)
            request.propertiesToFetch = [Self.expression("first", .min("code"))]
            guard case (.invalidAggregate(_, "first", "code", _), _)? = Self.failure(context, request) else {
                Issue.record("a minimum of a UUID was accepted")
                return
            }
            request.propertiesToFetch = [Self.expression("most", .max("outlet"))]
            guard case (.invalidAggregate(_, "most", "outlet", _), _)? = Self.failure(context, request) else {
                Issue.record("a maximum of a relationship was accepted")
                return
            }
            request.propertiesToFetch = [Self.expression("total", .function(.sum, keyPath: nil))]
            guard case (.invalidAggregate(_, "total", _, _), _)? = Self.failure(context, request) else {
                Issue.record("a sum without a key path was accepted")
                return
            }
        }
    }

    @Test func aResultTypeTheValueCannotTake() throws {
        let (_, context) = try makeAggregateStack()
        context.performAndWait {
            var request = FetchRequest<Purchase>()
            request.propertiesToFetch = [Self.expression("last", .max("sold"), as: .integer64)]
            guard case (.invalidAggregate(_, "last", "sold", _), let message)? = Self.failure(context, request) else {
                Issue.record("a date returned as an integer was accepted")
                return
            }
            #expect(message.contains("integer64"))
        }
    }

    @Test func anUnknownKeyAnywhere() throws {
        let (_, context) = try makeAggregateStack()
        context.performAndWait {
            var request = FetchRequest<Purchase>()
            request.propertiesToFetch = [Self.expression("total", .sum("amont"))]
            guard case (.unknownKey("Purchase", "amont"), _)? = Self.failure(context, request) else {
                Issue.record("no unknownKey for the aggregate's key path")
                return
            }
            request.propertiesToFetch = [Self.expression("n", .count())]
            request.propertiesToGroupBy = ["outlet.town"]
            guard case (.unknownKey("Outlet", "outlet.town"), _)? = Self.failure(context, request) else {
                Issue.record("no unknownKey for the grouped key path")
                return
            }
        }
    }

    // Core Data raises "Invalid keypath … passed to setPropertiesToGroupBy:" for a to-many relationship.
    @Test func groupingByAToManyRelationship() throws {
        let (_, context) = try makeAggregateStack()
        context.performAndWait {
            var request = FetchRequest<Purchase>()
            request.propertiesToFetch = [Self.expression("n", .count())]
            request.propertiesToGroupBy = ["labels"]
            guard case (.invalidGrouping("Purchase", "labels", _), let message)? = Self.failure(context, request) else {
                Issue.record("grouping by a to-many was accepted")
                return
            }
            #expect(message.contains("to-many"))
            request.propertiesToGroupBy = ["memo"]
            guard case (.invalidGrouping("Purchase", "memo", _), _)? = Self.failure(context, request) else {
                Issue.record("grouping by a transient attribute was accepted")
                return
            }
            request.propertiesToGroupBy = ["category.count"]
            guard case (.invalidGrouping("Purchase", "category.count", _), _)? = Self.failure(context, request) else {
                Issue.record("a key path through an attribute was accepted")
                return
            }
        }
    }

    // Core Data raises "SELECT clauses in queries with GROUP BY components can only contain properties
    // named in the GROUP BY or aggregate functions".
    @Test func aFetchedPropertyThatIsNeitherGroupedNorAnAggregate() throws {
        let (_, context) = try makeAggregateStack()
        context.performAndWait {
            var request = FetchRequest<Purchase>()
            request.propertiesToFetch = ["category", "amount", Self.expression("n", .count())]
            request.propertiesToGroupBy = ["category"]
            guard case (.ungroupedProperty("Purchase", "amount", ["category"]), let message)? = Self.failure(context, request) else {
                Issue.record("an ungrouped property was accepted")
                return
            }
            #expect(message.contains("'amount'") && message.contains("'category'"))
            // Without grouping, a plain property beside an aggregate has no one value either.
            request.propertiesToGroupBy = []
            request.propertiesToFetch = ["category", Self.expression("n", .count())]
            guard case (.ungroupedProperty("Purchase", "category", []), _)? = Self.failure(context, request) else {
                Issue.record("a plain property beside an aggregate was accepted")
                return
            }
            request.propertiesToFetch = [Self.expression("n", .count()), "objectID"]
            guard case (.ungroupedProperty("Purchase", "objectID", []), _)? = Self.failure(context, request) else {
                Issue.record("the object ID beside an aggregate was accepted")
                return
            }
        }
    }

    @Test func aHavingPredicateOrSortOnAKeyTheResultsLack() throws {
        let (_, context) = try makeAggregateStack()
        try context.performAndWait {
            var request = FetchRequest<Purchase>()
            request.propertiesToFetch = ["category", Self.expression("n", .count())]
            request.propertiesToGroupBy = ["category"]
            request.havingPredicate = try PredicateParser.parseHaving("total > 1")
            guard case (.unknownResultKey("Purchase", "total", "havingPredicate", let keys), let message)? = Self.failure(context, request) else {
                Issue.record("a having predicate on an unknown key was accepted")
                return
            }
            #expect(keys == ["category", "n"])
            #expect(message.contains("'total'") && message.contains("'n'"))
            request.havingPredicate = try PredicateParser.parseHaving("ANY labels.text == 'x'")
            guard case (.invalidRequest, _)? = Self.failure(context, request) else {
                Issue.record("ANY in a having predicate was accepted")
                return
            }
            request.havingPredicate = nil
            request.sortKeys = [SortKey("amount")]
            guard case (.unknownResultKey(_, "amount", "the sort", _), _)? = Self.failure(context, request) else {
                Issue.record("a sort on a key the results lack was accepted")
                return
            }
            // A having predicate on a fetch that neither groups nor aggregates.
            var plain = FetchRequest<Purchase>()
            plain.propertiesToFetch = ["category"]
            plain.havingPredicate = try PredicateParser.parseHaving("category == 'x'")
            guard case (.invalidRequest, _)? = Self.failure(context, plain) else {
                Issue.record("a having predicate without grouping was accepted")
                return
            }
        }
    }

    @Test func twoFetchedKeysOfOneName() throws {
        let (_, context) = try makeAggregateStack()
        context.performAndWait {
            var request = FetchRequest<Purchase>()
            request.propertiesToFetch = [Self.expression("n", .count()), Self.expression("n", .sum("amount"))]
            guard case (.invalidRequest, let message)? = Self.failure(context, request) else {
                Issue.record("two keys named alike were accepted")
                return
            }
            #expect(message.contains("'n'"))
        }
    }
}
