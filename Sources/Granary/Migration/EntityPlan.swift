import Foundation

/// How the rows of one source entity become rows of its destination entity in one step: a list of
/// column moves worked out once, then applied to every row without looking anything up by name. A
/// class, so that finding a row's plan costs no copy of its arrays.
final class EntityPlan: Sendable {
    /// Where one destination column's value comes from.
    struct Move {
        enum Conversion {
            /// The source value as it is (same type, or a widening that storage does not see).
            case copy
            /// The source value, or `fill` where it is nil (an attribute made required with a default).
            case fillingNull
            /// A to-one reference, kept as to-one or wrapped into a to-many.
            case reference(toMany: Bool)
            /// A to-many reference list.
            case references
            /// The first of a to-many reference list, for a to-one column filled from a to-many partner
            /// (an inverse added to a one-sided relationship).
            case firstReference
            /// `fill` for every row (a new property).
            case constant
        }

        let column: Int
        let source: Int?
        let conversion: Conversion
        let fill: Value
    }

    let source: EntityDescription
    let destination: EntityDescription
    /// The name of the destination table.
    let destinationTable: String
    private let code: Int64
    private let columnCount: Int
    private let moves: [Move]
    /// Destination properties whose values a migrated row may lack (a required value with nothing to
    /// fill it, a to-many with a higher minimum): checked on every row, as Core Data validates.
    private let checks: [(column: Int, property: PropertyDescription)]
    private let transform: EntityMigration.Transform?
    /// For custom transforms: the attributes of each side with their columns.
    private let sourceAttributes: [(AttributeDescription, Int)]
    private let destinationAttributes: [(AttributeDescription, Int)]

    /// The plan for a source entity, or nil when its objects are dropped.
    /// - Throws: `MigrationError.invalidObject` when a default value cannot be stored.
    init?(source name: String, step: InferredMapping) throws {
        guard let destinationName = step.destinationOf[name], let source = step.source.entity(named: name),
              let destination = step.destination.entity(named: destinationName),
              let sourceMapping = step.sourceMapping.entity(named: name),
              let mapping = step.destinationMapping.entity(named: destinationName)
        else { return nil }
        self.source = source
        self.destination = destination
        destinationTable = mapping.tableName
        code = mapping.entityCode
        columnCount = mapping.tableSchema.columns.count
        transform = step.custom[name]?.transform

        var moves: [Move] = []
        var checks: [(column: Int, property: PropertyDescription)] = []
        // Hidden inverses included: their columns are filled like any relationship's.
        for property in destination.storage.properties where !property.isTransient {
            guard let column = mapping.column(forProperty: property.name) else { continue }
            let previous = step.sourceProperty(of: property, in: source)
            let from = previous.flatMap { sourceMapping.column(forProperty: $0.name) }
            switch (property, previous) {
            case (.attribute(let a), let p):
                let fill: Value
                do { fill = a.defaultValue == nil ? .null : try a.storageValue(for: a.defaultValue) } catch {
                    throw MigrationError.invalidObject(entity: destination.name, key: 0, reason: "the default value of \(a.name) cannot be stored: \(SafeDescription.of(error))")
                }
                var alwaysSet = fill != .null
                if case .attribute(let old)? = p, let from, old.type == a.type || InferredMapping.isWidening(from: old.type, to: a.type) {
                    moves.append(Move(column: column, source: from, conversion: fill == .null ? .copy : .fillingNull, fill: fill))
                    alwaysSet = alwaysSet || !old.isOptional
                } else {
                    moves.append(Move(column: column, source: nil, conversion: .constant, fill: fill))
                }
                if !a.isOptional && !alwaysSet { checks.append((column, property)) }
            case (.relationship(let r), _):
                let empty: Value = r.isToMany ? .references([]) : .null
                let old = step.sourceRelationship(of: r, in: destination, from: source)
                if let old, let from = sourceMapping.column(forProperty: old.name) {
                    let conversion: Move.Conversion =
                        old.isToMany ? (r.isToMany ? .references : .firstReference) : .reference(toMany: r.isToMany)
                    moves.append(Move(column: column, source: from, conversion: conversion, fill: empty))
                    let sameRules = old.isToMany == r.isToMany && old.isOptional == r.isOptional
                        && old.minCount == r.minCount && old.maxCount == r.maxCount
                    if !sameRules && Self.canFail(r) { checks.append((column, property)) }
                } else {
                    moves.append(Move(column: column, source: nil, conversion: .constant, fill: empty))
                    if Self.canFail(r) { checks.append((column, property)) }
                }
            }
        }
        self.moves = moves
        self.checks = checks
        sourceAttributes = source.attributes.filter { !$0.isTransient }.compactMap { a in sourceMapping.column(forProperty: a.name).map { (a, $0) } }
        destinationAttributes = destination.attributes.filter { !$0.isTransient }.compactMap { a in mapping.column(forProperty: a.name).map { (a, $0) } }
    }

    /// Whether some number of destinations fails the relationship's rules.
    private static func canFail(_ r: RelationshipDescription) -> Bool {
        if r.isToMany { return (!r.isOptional && r.minCount > 0) || r.maxCount != nil }
        return !r.isOptional
    }

    /// How a mapped row fails the destination entity: each checked property with the reason.
    func failures(of row: Row) -> [(property: String, reason: ValidationError.Reason)] {
        var result: [(property: String, reason: ValidationError.Reason)] = []
        for (column, property) in checks {
            let value = row[column]
            switch property {
            case .attribute(let a):
                if value.isNull { result.append((a.name, .missing)) }
            case .relationship(let r):
                let count: Int
                switch value {
                case .references(let refs): count = refs.count
                case .reference: count = 1
                default: count = 0
                }
                for error in r.validate(count: count) { result.append((r.name, error.reason)) }
            }
        }
        return result
    }

    /// The destination row for a source row, or nil when a custom transform discards it.
    /// - Parameter kept: The tables that exist after this step; references into others are dropped.
    /// - Throws: `MigrationError.transformFailed` or `.invalidObject` from a custom transform.
    func map(_ row: Row, key: Int64, kept: Set<TableID>) throws -> Row? {
        var out = [Value](repeating: .null, count: columnCount)
        out[StorageMapping.entityColumn] = .int(code)
        out[StorageMapping.versionColumn] = row[StorageMapping.versionColumn]
        for move in moves {
            let value = move.source.map { row[$0] } ?? .null
            switch move.conversion {
            case .copy:
                out[move.column] = value
            case .fillingNull:
                out[move.column] = value.isNull ? move.fill : value
            case .constant:
                out[move.column] = move.fill
            case .reference(let toMany):
                if case .reference(let ref) = value, kept.contains(ref.table) {
                    out[move.column] = toMany ? .references([ref]) : .reference(ref)
                } else {
                    out[move.column] = move.fill
                }
            case .firstReference:
                if case .references(let refs) = value, let ref = refs.first(where: { kept.contains($0.table) }) {
                    out[move.column] = .reference(ref)
                } else {
                    out[move.column] = move.fill
                }
            case .references:
                if case .references(let refs) = value {
                    out[move.column] = .references(refs.filter { kept.contains($0.table) })
                } else {
                    out[move.column] = move.fill
                }
            }
        }
        guard let transform else { return Row(out) }
        return try applyCustom(transform, to: row, key: key, mapped: out)
    }

    private func applyCustom(_ transform: EntityMigration.Transform, to row: Row, key: Int64, mapped: [Value]) throws -> Row? {
        func decode(_ attributes: [(AttributeDescription, Int)], _ value: (Int) -> Value, entity: String) throws -> [String: any Sendable] {
            var values: [String: any Sendable] = [:]
            for (attribute, column) in attributes {
                do {
                    if let v = try attribute.swiftValue(from: value(column)) { values[attribute.name] = v }
                } catch {
                    throw MigrationError.invalidObject(entity: entity, key: key, reason: SafeDescription.of(error))
                }
            }
            return values
        }
        let old = MigrationObject(entity: source, key: key, values: try decode(sourceAttributes, { row[$0] }, entity: source.name))
        var new = MigrationObject(entity: destination, key: key, values: try decode(destinationAttributes, { mapped[$0] }, entity: destination.name))
        do { try transform(old, &new) } catch {
            throw MigrationError.transformFailed(entity: source.name, key: key, underlying: SafeDescription.of(error))
        }
        if new.isDiscarded { return nil }
        var out = mapped
        for (attribute, column) in destinationAttributes {
            let value = new.values[attribute.name]
            do { out[column] = try attribute.storageValue(for: value) } catch {
                throw MigrationError.invalidObject(entity: destination.name, key: key, reason: SafeDescription.of(error))
            }
            if out[column].isNull && !attribute.isOptional {
                throw MigrationError.invalidObject(entity: destination.name, key: key, reason: "required attribute \(attribute.name) has no value")
            }
        }
        return Row(out)
    }
}
