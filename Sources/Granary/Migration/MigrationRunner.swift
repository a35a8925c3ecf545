import Foundation

/// Carries a chain of migration steps out inside one `Engine.rewrite`: rows are read from the store,
/// mapped through every step in memory, and written as the new content in one atomic switch, so a
/// progressive migration across many versions is still all or nothing.
///
/// Primary keys and table IDs are kept, so object URIs and references stay valid; a table whose root
/// entity was dropped is dropped with its rows, and references to dropped rows are removed.
struct MigrationRunner {
    let steps: [InferredMapping]
    let progress: (@Sendable (MigrationProgress) -> Void)?

    /// Rows of one table between steps, in key order.
    struct StagedTable {
        var id: TableID
        /// The table's name in the model of the stage it belongs to (its root entity's name).
        var name: String
        var nextKey: Int64
        var keys: [Int64] = []
        var rows: [Row] = []
        /// The schema, for tables no model of the chain knows (left as they are).
        var foreignSchema: TableSchema?
    }

    struct Outcome {
        var rowsWritten = 0
        var rowsDropped = 0
    }

    func run(on engine: Engine) throws -> Outcome {
        var outcome = Outcome()
        do {
            try engine.rewrite { rewrite in
                var tables = try stage(rewrite.source)
                for (index, step) in steps.enumerated() {
                    tables = try run(step, number: index + 1, on: tables, outcome: &outcome)
                }
                if outcome.rowsDropped > 0 { removeDanglingReferences(in: &tables) }
                try write(tables, to: rewrite, outcome: &outcome)
                let model = steps.last!.destination
                rewrite.metadata.userInfo[PersistentStore.modelHashKey] = model.versionHash
                rewrite.metadata.userInfo[StoredModel.metadataKey] = StoredModel(model).json
                rewrite.metadata.schemaVersion = model.versionIdentifier
                report(.writing, step: steps.count, entity: nil, done: tables.count, of: tables.count,
                       rows: outcome.rowsWritten, of: outcome.rowsWritten)
            }
        } catch let error as StorageError {
            throw translate(error)
        }
        report(.finished, step: steps.count, entity: nil, done: 0, of: 0, rows: outcome.rowsWritten, of: outcome.rowsWritten)
        return outcome
    }

    // MARK: Reading

    /// Every table of the store, decoded. Tables the first source model does not know are kept as they
    /// are, with their schema.
    private func stage(_ snapshot: Snapshot) throws -> [StagedTable] {
        let known = steps[0].sourceMapping
        var result: [StagedTable] = []
        for name in snapshot.tableNames {
            var table = StagedTable(id: try snapshot.tableID(of: name), name: name, nextKey: try snapshot.nextKey(in: name))
            if known.table(named: name) == nil { table.foreignSchema = try snapshot.schema(of: name) }
            let count = try snapshot.count(in: name)
            table.keys.reserveCapacity(count)
            table.rows.reserveCapacity(count)
            try snapshot.forEachRow(in: name) { key, row in
                table.keys.append(key)
                table.rows.append(row)
                return true
            }
            result.append(table)
        }
        return result
    }

    // MARK: Mapping

    private func run(_ step: InferredMapping, number: Int, on input: [StagedTable], outcome: inout Outcome) throws -> [StagedTable] {
        let totalRows = input.reduce(0) { $0 + ($1.foreignSchema == nil ? $1.rows.count : 0) }
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
            guard let destinationTable = entities.lazy.compactMap({ $0?.destinationTable }).first else { continue }
            kept.insert(table.id)
            plans[table.id] = (destinationTable, entities)
        }

        var output: [StagedTable] = []
        for (tableIndex, table) in input.enumerated() {
            if table.foreignSchema != nil {
                output.append(table)
                continue
            }
            report(.mapping, step: number, entity: table.name, done: tableIndex, of: input.count, rows: rowsDone, of: totalRows)
            guard let plan = plans[table.id] else {
                outcome.rowsDropped += table.rows.count
                rowsDone += table.rows.count
                continue
            }
            var staged = StagedTable(id: table.id, name: plan.table, nextKey: table.nextKey)
            staged.keys.reserveCapacity(table.rows.count)
            staged.rows.reserveCapacity(table.rows.count)
            for (i, row) in table.rows.enumerated() {
                let key = table.keys[i]
                guard case .int(let code) = row[StorageMapping.entityColumn], code >= 0, code < plan.entities.count,
                      let entity = plan.entities[Int(code)]
                else {
                    outcome.rowsDropped += 1
                    continue
                }
                if let mapped = try entity.map(row, key: key, kept: kept) {
                    staged.keys.append(key)
                    staged.rows.append(mapped)
                } else {
                    outcome.rowsDropped += 1
                }
                rowsDone += 1
                if rowsDone & 0x3FFF == 0 {
                    report(.mapping, step: number, entity: table.name, done: tableIndex, of: input.count, rows: rowsDone, of: totalRows)
                }
            }
            output.append(staged)
        }
        report(.mapping, step: number, entity: nil, done: input.count, of: input.count, rows: rowsDone, of: totalRows)
        return output
    }

    /// References to rows that a step dropped (objects of removed sub-entities, objects a custom step
    /// discarded) are removed, so no row points at nothing.
    private func removeDanglingReferences(in tables: inout [StagedTable]) {
        var alive: [TableID: Set<Int64>] = [:]
        for table in tables { alive[table.id] = Set(table.keys) }
        func isAlive(_ ref: RowReference) -> Bool { alive[ref.table]?.contains(ref.key) ?? false }
        for t in tables.indices {
            for r in tables[t].rows.indices {
                for (c, value) in tables[t].rows[r].values.enumerated() {
                    switch value {
                    case .reference(let ref) where !isAlive(ref): tables[t].rows[r][c] = .null
                    case .references(let refs) where !refs.allSatisfy(isAlive): tables[t].rows[r][c] = .references(refs.filter(isAlive))
                    default: break
                    }
                }
            }
        }
    }

    // MARK: Writing

    private func write(_ tables: [StagedTable], to rewrite: StoreRewrite, outcome: inout Outcome) throws {
        let mapping = steps.last!.destinationMapping
        for table in tables {
            guard let schema = table.foreignSchema ?? mapping.table(named: table.name)?.schema else { continue }
            let target = try rewrite.addTable(schema, id: table.id, nextKey: table.nextKey)
            for (i, row) in table.rows.enumerated() {
                do {
                    try target.append(row, key: table.keys[i])
                } catch let error as StorageError {
                    let entity = mapping.table(named: table.name)
                        .flatMap { m -> String? in
                            guard case .int(let code) = row[StorageMapping.entityColumn] else { return nil }
                            return m.entityName(forCode: code)
                        } ?? table.name
                    throw MigrationError.invalidObject(entity: entity, key: table.keys[i], reason: "\(error)")
                }
            }
            outcome.rowsWritten += table.rows.count
        }
    }

    /// A unique index the new rows break is reported as the entity's uniqueness constraint.
    private func translate(_ error: StorageError) -> MigrationError {
        if case .uniqueViolation(_, let index, let value) = error {
            for entity in steps.last!.destination.entities {
                for constraint in entity.uniquenessConstraints
                where "\(entity.name)_unique_" + constraint.joined(separator: "_") == index {
                    return .uniquenessViolation(entity: entity.name, properties: constraint, duplicates: value)
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
