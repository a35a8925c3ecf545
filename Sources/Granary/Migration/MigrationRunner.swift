import Foundation

/// Carries a chain of migration steps out inside one `Engine.rewrite`: rows are read from the store,
/// mapped through every step, and written as the new content in one atomic switch, so a progressive
/// migration across many versions is still all or nothing.
///
/// A single step that drops no object streams rows from the old tables into the new ones. Otherwise
/// the steps stage their rows in memory, so that references to dropped objects can be removed before
/// anything is written.
///
/// Primary keys and table IDs are kept, so object URIs and references stay valid; a table whose root
/// entity was dropped is dropped with its rows.
struct MigrationRunner {
    let steps: [InferredMapping]
    let progress: (@Sendable (MigrationProgress) -> Void)?
    /// How many failing objects a `validationFailed` error lists; it counts them all.
    static let listedFailures = 100

    /// One table's rows, read in key order by `forEachRow`.
    struct SourceTable {
        var id: TableID
        /// The table's name in the model of the stage it belongs to (its root entity's name).
        var name: String
        var nextKey: Int64
        var count: Int
        /// The schema, for tables no model of the chain knows (carried over as they are).
        var foreignSchema: TableSchema?
        var forEachRow: ((Int64, Row) throws -> Void) throws -> Void
    }

    /// Rows of one table between steps, in key order.
    final class StagedTable {
        let id: TableID
        let name: String
        let nextKey: Int64
        let foreignSchema: TableSchema?
        var keys: [Int64] = []
        var rows: [Row] = []

        init(id: TableID, name: String, nextKey: Int64, foreignSchema: TableSchema?) {
            self.id = id
            self.name = name
            self.nextKey = nextKey
            self.foreignSchema = foreignSchema
        }

        var source: SourceTable {
            SourceTable(id: id, name: name, nextKey: nextKey, count: rows.count, foreignSchema: foreignSchema) { body in
                for (i, row) in self.rows.enumerated() { try body(self.keys[i], row) }
            }
        }
    }

    struct Outcome {
        var rowsWritten = 0
        var rowsDropped = 0
    }

    /// Where a step puts a table's rows: a function that opens the table and returns its row appender.
    typealias Sink = (_ id: TableID, _ name: String, _ nextKey: Int64, _ schema: TableSchema, _ foreign: Bool) throws -> (Int64, Row) throws -> Void

    func run(on engine: Engine) throws -> Outcome {
        var outcome = Outcome()
        do {
            let store = engine.metadata.storeUUID
            try engine.rewrite { rewrite in
                let sources = try tables(of: rewrite.source)
                let final = finalSink(rewrite)
                if steps.count == 1 && !steps[0].dropsObjects && steps[0].mappingModel == nil {
                    try run(steps[0], number: 1, on: sources, into: final.sink, store: store, outcome: &outcome)
                } else {
                    var staged = sources
                    var tables: [StagedTable] = []
                    for (index, step) in steps.enumerated() {
                        if let model = step.mappingModel {
                            let migration = MappingModelMigration(step: step, model: model, policies: step.migrationPolicies, store: store)
                            report(.mapping, step: index + 1, entity: nil, done: 0, of: staged.count, rows: 0, of: staged.reduce(0) { $0 + $1.count })
                            tables = try migration.run(staged, reserve: rewrite.reserveTableID, outcome: &outcome)
                        } else {
                            let stage = Stage()
                            try run(step, number: index + 1, on: staged, into: stage.sink, store: store, outcome: &outcome)
                            tables = stage.tables
                        }
                        staged = tables.map(\.source)
                    }
                    if outcome.rowsDropped > 0 { removeDanglingReferences(in: tables) }
                    for table in tables {
                        let schema = table.foreignSchema ?? steps.last!.destinationMapping.table(named: table.name)!.schema
                        let append = try final.sink(table.id, table.name, table.nextKey, schema, table.foreignSchema != nil)
                        for (i, row) in table.rows.enumerated() { try append(table.keys[i], row) }
                    }
                }
                outcome.rowsWritten = final.written()
                let model = steps.last!.destination
                rewrite.metadata.record(model)
                rewrite.metadata.schemaVersion = model.versionIdentifier
                report(.writing, step: steps.count, entity: nil, done: 0, of: 0, rows: outcome.rowsWritten, of: outcome.rowsWritten)
            }
        } catch let error as StorageError {
            throw translate(error)
        }
        report(.finished, step: steps.count, entity: nil, done: 0, of: 0, rows: outcome.rowsWritten, of: outcome.rowsWritten)
        return outcome
    }

    // MARK: Reading

    /// The store's tables, read lazily from the snapshot. Tables the first source model does not know
    /// are carried over as they are, with their schema.
    private func tables(of snapshot: Snapshot) throws -> [SourceTable] {
        let known = steps[0].sourceMapping
        return try snapshot.tableNames.map { name in
            SourceTable(id: try snapshot.tableID(of: name), name: name, nextKey: try snapshot.nextKey(in: name),
                        count: try snapshot.count(in: name),
                        foreignSchema: known.table(named: name) == nil ? try snapshot.schema(of: name) : nil) { body in
                try snapshot.forEachRow(in: name) { key, row in
                    try body(key, row)
                    return true
                }
            }
        }
    }

    // MARK: Mapping

    /// - Throws: `MigrationError.validationFailed` after mapping every row, when some fail the
    ///   destination model; the rewrite is then abandoned, so the store keeps its old content.
    private func run(_ step: InferredMapping, number: Int, on input: [SourceTable], into sink: Sink, store: UUID,
                     outcome: inout Outcome) throws {
        var failures: [MigrationValidationFailure] = []
        var failureCount = 0
        let totalRows = input.reduce(0) { $0 + ($1.foreignSchema == nil ? $1.count : 0) }
        var rowsDone = 0
        // Tables kept by this step; references into any other table are dropped.
        var kept = Set<TableID>()
        var plans: [TableID: (table: String, entities: [EntityPlan?])] = [:]
        for table in input {
            if table.foreignSchema != nil {
                kept.insert(table.id)
                continue
            }
            guard let mapping = step.sourceMapping.table(named: table.name) else { continue }
            let entities = try mapping.entityNames.map { try EntityPlan(source: $0, step: step) }
            guard let destination = entities.lazy.compactMap({ $0?.destinationTable }).first else { continue }
            kept.insert(table.id)
            plans[table.id] = (destination, entities)
        }

        for (tableIndex, table) in input.enumerated() {
            if let schema = table.foreignSchema {
                let append = try sink(table.id, table.name, table.nextKey, schema, true)
                try table.forEachRow(append)
                continue
            }
            report(.mapping, step: number, entity: table.name, done: tableIndex, of: input.count, rows: rowsDone, of: totalRows)
            guard let plan = plans[table.id], let schema = step.destinationMapping.table(named: plan.table)?.schema else {
                outcome.rowsDropped += table.count
                rowsDone += table.count
                continue
            }
            let append = try sink(table.id, plan.table, table.nextKey, schema, false)
            var dropped = 0
            try table.forEachRow { key, row in
                if case .int(let code) = row[StorageMapping.entityColumn], code >= 0, code < plan.entities.count,
                   let entity = plan.entities[Int(code)], let mapped = try entity.map(row, key: key, kept: kept) {
                    for failure in entity.failures(of: mapped) {
                        failureCount += 1
                        guard failures.count < Self.listedFailures else { continue }
                        let name = entity.destination.name
                        failures.append(MigrationValidationFailure(
                            entity: name, key: key,
                            objectURI: ManagedObjectID(entityName: entity.source.name, store: store, key: key).uriRepresentation.absoluteString,
                            property: failure.property, reason: failure.reason))
                    }
                    // Nothing is written once a row fails; the rest are still checked, to list them all.
                    if failureCount == 0 { try append(key, mapped) }
                } else {
                    dropped += 1
                }
                rowsDone += 1
                if rowsDone & 0x3FFF == 0 {
                    report(.mapping, step: number, entity: table.name, done: tableIndex, of: input.count, rows: rowsDone, of: totalRows)
                }
            }
            outcome.rowsDropped += dropped
        }
        if failureCount > 0 {
            throw MigrationError.validationFailed(from: StoreMigrator.label(step.source), to: StoreMigrator.label(step.destination),
                                                  failures: failures, count: failureCount)
        }
        report(.mapping, step: number, entity: nil, done: input.count, of: input.count, rows: rowsDone, of: totalRows)
    }

    /// The tables one step stages.
    final class Stage {
        var tables: [StagedTable] = []

        var sink: Sink {
            { id, name, nextKey, schema, foreign in
                let table = StagedTable(id: id, name: name, nextKey: nextKey, foreignSchema: foreign ? schema : nil)
                self.tables.append(table)
                return { key, row in
                    table.keys.append(key)
                    table.rows.append(row)
                }
            }
        }
    }

    /// The new store's tables; counts what it writes, and names the object a rejected row belongs to.
    private func finalSink(_ rewrite: StoreRewrite) -> (sink: Sink, written: () -> Int) {
        final class Counter { var value = 0 }
        let counter = Counter()
        let mapping = steps.last!.destinationMapping
        let sink: Sink = { id, name, nextKey, schema, _ in
            let target = try rewrite.addTable(schema, id: id, nextKey: nextKey)
            let table = mapping.table(named: name)
            return { key, row in
                do {
                    try target.append(row, key: key)
                    counter.value += 1
                } catch let error as StorageError {
                    var entity = name
                    if case .int(let code) = row[StorageMapping.entityColumn], let known = table?.entityName(forCode: code) { entity = known }
                    throw MigrationError.invalidObject(entity: entity, key: key, reason: SafeDescription.of(error))
                }
            }
        }
        return (sink, { counter.value })
    }

    /// References to rows that a step dropped (objects of removed sub-entities, objects a custom step
    /// discarded) are removed, so no row points at nothing.
    private func removeDanglingReferences(in tables: [StagedTable]) {
        var alive: [TableID: Set<Int64>] = [:]
        for table in tables { alive[table.id] = Set(table.keys) }
        func isAlive(_ ref: RowReference) -> Bool { alive[ref.table]?.contains(ref.key) ?? false }
        for table in tables {
            for r in table.rows.indices {
                for (c, value) in table.rows[r].values.enumerated() {
                    switch value {
                    case .reference(let ref) where !isAlive(ref): table.rows[r][c] = .null
                    case .references(let refs) where !refs.allSatisfy(isAlive): table.rows[r][c] = .references(refs.filter(isAlive))
                    default: break
                    }
                }
            }
        }
    }

    // MARK: Reporting

    /// A unique index the new rows break is reported as the entity's uniqueness constraint.
    private func translate(_ error: StorageError) -> MigrationError {
        if case .uniqueViolation(_, let index, let value) = error {
            for entity in steps.last!.destination.entities {
                for planned in StorageMapping.plannedIndexes(of: entity.storage.declaration) where planned.isUnique && planned.name == index {
                    return .uniquenessViolation(entity: entity.name, properties: planned.elements.map(\.propertyName), duplicates: value)
                }
            }
        }
        return .storage(error)
    }

    private func report(_ phase: MigrationProgress.Phase, step: Int, entity: String?, done: Int, of entities: Int, rows: Int, of total: Int) {
        progress?(MigrationProgress(phase: phase, step: step, stepCount: steps.count, entity: entity, entitiesCompleted: done,
                                    entityCount: entities, rowsCompleted: rows, rowCount: total))
    }
}
