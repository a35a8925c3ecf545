import Foundation
import GranaryStorage

/// A grouped or aggregate dictionary fetch checked against the model: what splits the objects into
/// groups, what is computed over each group, which keys the results hold and how they are filtered,
/// ordered and windowed. The store runs it (`PersistentStore.aggregate`) on its rows.
///
/// Built once per fetch by `init(request:entity:model:sort:)`, which is where every mistake in the request is
/// found and named: running it then meets no error but the store's own.
struct AggregateQuery {
    /// A key path read from each object: to-one relationships, then an attribute or a to-one
    /// relationship.
    struct Input: Hashable {
        var keyPath: KeyPathExpr
        /// The attribute's type, or nil when the key path ends at a to-one relationship.
        var attributeType: AttributeType?

        var name: String { keyPath.joined(separator: ".") }
    }

    /// An aggregate computed over the values of an input (or over the objects, for a count without a
    /// key path).
    struct Aggregate {
        var function: ExpressionDescription.Function
        var input: Input?
        var operation: AggregateAccumulator.Operation
    }

    /// What a result value is read as: an attribute's type (a number converted to it), or an object ID.
    enum ResultType: Hashable {
        case attribute(AttributeType)
        case object

        var fieldKind: FieldKind {
            switch self {
            case .attribute(let type): return FieldKind(type)
            case .object: return .toOne(destination: "")
            }
        }
    }

    /// A key of the results: a grouped value or an aggregate, of a type.
    struct Column {
        enum Source: Hashable {
            case group(Int)
            case aggregate(Int)
        }
        var name: String
        var source: Source
        /// The type the source's value has before conversion (see `AggregateAccumulator.Operation`).
        var natural: ResultType
        var type: ResultType
    }

    var groupings: [Input] = []
    var aggregates: [Aggregate] = []
    /// The keys of the dictionaries, in the order fetched, then the grouped key paths that are not
    /// fetched (which `havingPredicate` and the sort may still name).
    var columns: [Column] = []
    var fetchedCount = 0
    /// Over the columns, each key path one component naming a column.
    var having: PredicateNode?
    var sort: [SortKey] = []
    var distinct = false
    var offset = 0
    var limit: Int?

    /// The columns as fields of a row, so that `RowEvaluator` can run the having predicate and the sort
    /// on a group's values.
    var resultSchema: FetchSchema {
        var fields: [String: FieldInfo] = [:]
        for (i, column) in columns.enumerated() { fields[column.name] = FieldInfo(column: i, kind: column.type.fieldKind) }
        return FetchSchema(entityName: "results", fields: fields)
    }

    /// Whether a request is answered by grouping: it groups, or fetches an aggregate.
    static func isAggregate<T>(_ request: FetchRequest<T>) -> Bool {
        !request.propertiesToGroupBy.isEmpty || request.propertiesToFetch.contains {
            if case .expression(let e) = $0, e.expression.function != nil { return true }
            return false
        }
    }

    /// The query a grouped or aggregate request asks for, with `sort` its order as key paths.
    ///
    /// - Throws: `ContextError.unknownKey` for a key path naming no property; `.invalidGrouping` for a
    ///   grouped key path ending at a to-many relationship or a transient attribute;
    ///   `.invalidAggregate` for an aggregate its key path does not allow (a sum of a string) or a result
    ///   type its value cannot take; `.ungroupedProperty` for a fetched property that is neither grouped
    ///   by nor an aggregate; `.unknownResultKey` for a having predicate or sort key naming no key of the
    ///   results; `.invalidRequest` for two fetched keys of one name or ANY/@count in the having
    ///   predicate.
    init<T>(request: FetchRequest<T>, entity: EntityDescription, model: ManagedObjectModel, sort: [SortKey]) throws {
        let entityName = entity.name
        for name in request.propertiesToGroupBy {
            let input = try Self.input(name, entity: entity, model: model) { reason in ContextError.invalidGrouping(entity: entityName, keyPath: name, reason: reason) }
            if !groupings.contains(input) { groupings.append(input) }
        }
        func groupColumn(_ name: String, input: Input) -> Column {
            let natural: ResultType = input.attributeType.map(ResultType.attribute) ?? .object
            return Column(name: name, source: .group(groupings.firstIndex(of: input)!), natural: natural, type: natural)
        }
        let grouped = groupings.map(\.name)
        func notGrouped(_ property: String) -> ContextError { .ungroupedProperty(entity: entityName, property: property, groupedBy: grouped) }
        let properties = request.propertiesToFetch.isEmpty ? groupings.map { FetchProperty.property($0.name) } : request.propertiesToFetch
        for property in properties {
            guard !columns.contains(where: { $0.name == property.name }) else {
                throw ContextError.invalidRequest(entity: entityName, reason: "propertiesToFetch holds two keys named '\(property.name)'")
            }
            switch property {
            case .property(let name):
                guard name != FetchRequest<T>.objectIDKey else { throw notGrouped(name) }
                let input = try Self.input(name, entity: entity, model: model) { _ in notGrouped(name) }
                guard groupings.contains(input) else { throw notGrouped(name) }
                columns.append(groupColumn(name, input: input))
            case .expression(let description):
                let name = description.name
                func invalid(_ reason: String) -> ContextError {
                    .invalidAggregate(entity: entityName, name: name, keyPath: description.expression.keyPath ?? "SELF", reason: reason)
                }
                switch description.expression {
                case .keyPath(let path):
                    let input = try Self.input(path, entity: entity, model: model) { _ in notGrouped(name) }
                    guard groupings.contains(input) else { throw notGrouped(name) }
                    var column = groupColumn(name, input: input)
                    column.type = try Self.resultType(description.expressionResultType, for: column.natural, invalid)
                    columns.append(column)
                case .function(let function, let path):
                    let input = try path.map { path in try Self.input(path, entity: entity, model: model, invalid) }
                    let (operation, natural) = try Self.operation(function, input, invalid)
                    aggregates.append(Aggregate(function: function, input: input, operation: operation))
                    let type = try Self.resultType(description.expressionResultType, for: natural, invalid)
                    columns.append(Column(name: name, source: .aggregate(aggregates.count - 1), natural: natural, type: type))
                }
            }
        }
        fetchedCount = columns.count
        // Every grouped key path can be named by its own name too, fetched under another or not at all.
        for input in groupings where !columns.contains(where: { $0.name == input.name }) {
            columns.append(groupColumn(input.name, input: input))
        }
        let keys = columns.map(\.name)
        if let having = request.havingPredicate {
            try having.checkDepth()
            self.having = try Self.overResults(having, keys: keys) { key in
                ContextError.unknownResultKey(entity: entityName, key: key, clause: "havingPredicate", resultKeys: keys)
            } invalid: { reason in
                ContextError.invalidRequest(entity: entityName, reason: "havingPredicate \(reason)")
            }
        }
        self.sort = try sort.map { key in
            let name = key.keyPath.joined(separator: ".")
            guard keys.contains(name) else {
                throw ContextError.unknownResultKey(entity: entityName, key: name, clause: "the sort", resultKeys: keys)
            }
            return SortKey(keyPath: [name], ascending: key.ascending, comparison: key.comparison)
        }
        // Groups differ in their grouped values: when all of them are fetched, the dictionaries are
        // distinct already.
        let fetchedGroups = Set(columns.prefix(fetchedCount).map(\.source))
        distinct = request.returnsDistinctResults && !groupings.indices.allSatisfy { fetchedGroups.contains(.group($0)) }
        offset = request.fetchOffset
        limit = request.fetchLimit > 0 ? request.fetchLimit : nil
    }

    /// The query of a distinct fetch of plain properties (`returnsDistinctResults` without aggregates):
    /// a group per distinct combination of their values, which the store finds without making a record
    /// per object. `properties` are stored, non-to-many properties of the entity itself; `sort` names
    /// only them.
    init(distinct properties: [String], entity: EntityDescription, model: ManagedObjectModel, sort: [SortKey], offset: Int, limit: Int?) throws {
        for name in properties {
            let input = try Self.input(name, entity: entity, model: model) { reason in ContextError.invalidGrouping(entity: entity.name, keyPath: name, reason: reason) }
            if !groupings.contains(input) { groupings.append(input) }
            let natural: ResultType = input.attributeType.map(ResultType.attribute) ?? .object
            columns.append(Column(name: name, source: .group(groupings.firstIndex(of: input)!), natural: natural, type: natural))
        }
        fetchedCount = columns.count
        self.sort = sort
        // One group per distinct combination of the fetched values: distinct by construction.
        distinct = false
        self.offset = offset
        self.limit = limit
    }

    // MARK: Checking

    /// A key path resolved against the entity: to-one relationships, then a stored attribute or to-one
    /// relationship.
    /// - Throws: `ContextError.unknownKey` for a component naming nothing; what `invalid` makes of the
    ///   reason otherwise.
    private static func input(_ path: String, entity: EntityDescription, model: ManagedObjectModel,
                              _ invalid: (String) -> ContextError) throws -> Input {
        let components = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var current = entity
        for (i, name) in components.enumerated() {
            guard let property = current.propertiesByName[name] else { throw ContextError.unknownKey(entity: current.name, key: path) }
            let isLast = i == components.count - 1
            switch property {
            case .attribute(let a):
                guard isLast else { throw invalid("'\(name)' is an attribute, and only to-one relationships can be followed") }
                guard !a.isTransient else { throw invalid("'\(name)' is transient, so the store holds no value for it") }
                return Input(keyPath: components, attributeType: a.type)
            case .relationship(let r):
                guard !r.isToMany else {
                    throw invalid("'\(name)' is a to-many relationship, which holds many objects where one value is needed")
                }
                if isLast { return Input(keyPath: components, attributeType: nil) }
                guard let destination = model.entity(named: r.destinationEntityName) else {
                    throw ContextError.unknownEntity(r.destinationEntityName)
                }
                current = destination
            }
        }
        throw ContextError.unknownKey(entity: entity.name, key: path)
    }

    /// How an aggregate is accumulated, and the type of its value.
    private static func operation(_ function: ExpressionDescription.Function, _ input: Input?,
                                  _ invalid: (String) -> ContextError) throws -> (AggregateAccumulator.Operation, ResultType) {
        guard let input else {
            guard function == .count else { throw invalid("\(function.rawValue): needs a key path; only count: counts the objects themselves") }
            return (.countObjects, .attribute(.integer64))
        }
        if function == .count { return (.countValues, .attribute(.integer64)) }
        guard let type = input.attributeType else {
            throw invalid("\(function.rawValue): of a relationship has no meaning; name an attribute of its destination ('\(input.name).attribute')")
        }
        let kind = FieldKind(type)
        switch function {
        case .sum, .average:
            let isSum = function == .sum
            switch kind {
            case .integer: return isSum ? (.sumIntegers, .attribute(.integer64)) : (.averageIntegers, .attribute(.double))
            case .double: return isSum ? (.sumDoubles, .attribute(.double)) : (.averageDoubles, .attribute(.double))
            case .decimal: return isSum ? (.sumDecimals, .attribute(.decimal)) : (.averageDecimals, .attribute(.decimal))
            default: throw invalid("\(function.rawValue): needs a number attribute, and '\(input.name)' is \(type)")
            }
        case .min, .max:
            switch kind {
            case .integer, .double, .decimal, .date, .string:
                return (function == .min ? .minimum(decimal: kind == .decimal) : .maximum(decimal: kind == .decimal), .attribute(type))
            default: throw invalid("\(function.rawValue): needs a number, date or string attribute, and '\(input.name)' is \(type)")
            }
        case .count:
            return (.countValues, .attribute(.integer64))
        }
    }

    /// The type a value is returned as: `requested` unless it is `.undefined`. Numbers convert to any
    /// number type; anything else only to its own type.
    private static func resultType(_ requested: AttributeType, for natural: ResultType, _ invalid: (String) -> ContextError) throws -> ResultType {
        if requested == .undefined || natural == .attribute(requested) { return natural }
        if case .attribute(let own) = natural, own.isNumeric && requested.isNumeric { return .attribute(requested) }
        let own: String
        switch natural {
        case .attribute(let type): own = "\(type)"
        case .object: own = "an object ID"
        }
        throw invalid("its value is \(own), which cannot be returned as \(requested)")
    }

    /// The having predicate with each key path made one component naming a column (`company.name` is
    /// the column of that name), so that `RowEvaluator` reads it from a group's row.
    private static func overResults(_ node: PredicateNode, keys: [String], unknown: (String) -> ContextError,
                                    invalid: (String) -> ContextError) throws -> PredicateNode {
        func key(_ path: KeyPathExpr) throws -> KeyPathExpr {
            let name = path.joined(separator: ".")
            guard keys.contains(name) else { throw unknown(name.isEmpty ? "SELF" : name) }
            return [name]
        }
        func walk(_ node: PredicateNode) throws -> PredicateNode {
            switch node {
            case .true, .false: return node
            case .and(let terms): return .and(try terms.map(walk))
            case .or(let terms): return .or(try terms.map(walk))
            case .not(let term): return .not(try walk(term))
            case .compare(let path, let op, .keyPath(let other)): return .compare(try key(path), op, .keyPath(try key(other)))
            case .compare(let path, let op, let operand): return .compare(try key(path), op, operand)
            case .isIn(let path, let values): return .isIn(try key(path), values)
            case .between(let path, let lower, let upper): return .between(try key(path), lower, upper)
            case .string(let path, let op, let pattern, let c, let d): return .string(try key(path), op, pattern, caseInsensitive: c, diacriticInsensitive: d)
            case .isNil(let path): return .isNil(try key(path))
            case .objects(let path, let ids): return .objects(try key(path), ids)
            case .any, .count: throw invalid("uses ANY, SUBQUERY or @count, which need a to-many relationship, and results hold none")
            }
        }
        return try walk(node)
    }
}
