import Foundation
import PropertyBased
import Testing
@testable import GranaryStorage

/// Random sequences of inserts, updates, deletes, commits, aborts, checkpoints and reopens, checked
/// against a dictionary after every step: rows, both indexes, and counts must agree.
@Suite struct EnginePropertyTests {
    /// One step, decoded from a random integer so that PropertyBased can shrink failing sequences.
    enum Step: CustomStringConvertible {
        case insert(Int64, Int64), update(Int64, Int64), delete(Int64), commit, abort, checkpoint, reopen

        init(_ x: Int) {
            let key = Int64((x / 16) % 24)
            let value = Int64((x / 384) % 40)
            switch x % 16 {
            case 0...4: self = .insert(key, value)
            case 5...7: self = .update(key, value)
            case 8...9: self = .delete(key)
            case 10...12: self = .commit
            case 13: self = .abort
            case 14: self = .checkpoint
            default: self = .reopen
            }
        }

        var description: String {
            switch self {
            case .insert(let k, let v): "insert(\(k), \(v))"
            case .update(let k, let v): "update(\(k), \(v))"
            case .delete(let k): "delete(\(k))"
            case .commit: "commit"
            case .abort: "abort"
            case .checkpoint: "checkpoint"
            case .reopen: "reopen"
            }
        }
    }

    /// Rows: key → (v, tag). `v` is unique; `tag` has a non-unique descending index.
    typealias Model = [Int64: (v: Int64, tag: String)]

    static let schema = TableSchema(
        name: "t", columns: [Column("v", .int, nullable: false), Column("tag", .string)],
        indexes: [IndexDefinition(name: "byV", on: "v", unique: true),
                  IndexDefinition(name: "byTag", columns: [IndexColumn("tag", descending: true)])])

    static func row(_ v: Int64) -> Row { [.int(v), .string("tag\(v % 5)")] }

    /// Applies a row step to the model the way the engine must: a step that would fail changes nothing.
    static func apply(_ step: Step, to model: inout Model) -> Bool {
        func vTaken(_ v: Int64, except key: Int64) -> Bool { model.contains { $0.key != key && $0.value.v == v } }
        switch step {
        case .insert(let k, let v):
            guard model[k] == nil, !vTaken(v, except: k) else { return false }
            model[k] = (v, "tag\(v % 5)")
        case .update(let k, let v):
            guard model[k] != nil, !vTaken(v, except: k) else { return false }
            model[k] = (v, "tag\(v % 5)")
        case .delete(let k):
            guard model[k] != nil else { return false }
            model[k] = nil
        default: return false
        }
        return true
    }

    static func perform(_ step: Step, in tx: WriteTransaction) -> Bool {
        do {
            switch step {
            case .insert(let k, let v): try tx.insert(row(v), into: "t", key: k)
            case .update(let k, let v): try tx.update(row(v), in: "t", key: k)
            case .delete(let k): try tx.delete(from: "t", key: k)
            default: return false
            }
            return true
        } catch {
            return false
        }
    }

    static func check(_ engine: Engine, _ model: Model, after steps: ArraySlice<Step>) throws {
        let s = engine.read()
        let context = "after \(steps.map(\.description).joined(separator: ", "))"
        let rows = try s.rows(in: "t")
        #expect(rows.map(\.key) == model.keys.sorted(), "\(context)")
        for (key, row) in rows {
            #expect(model[key].map { Self.row($0.v) } == row, "\(context)")
        }
        let byV = try s.queryKeys(IndexQuery(table: "t", index: "byV"))
        #expect(byV == model.sorted { $0.value.v < $1.value.v }.map(\.key), "byV \(context)")
        let byTag = try s.queryKeys(IndexQuery(table: "t", index: "byTag"))
        // Descending on tag; equal tags stay in primary-key order because the key suffix is not inverted.
        let expectedTag = model.sorted { $0.value.tag != $1.value.tag ? $0.value.tag > $1.value.tag : $0.key < $1.key }.map(\.key)
        #expect(byTag == expectedTag, "byTag \(context)")
        let mid = try s.queryKeys(IndexQuery(table: "t", index: "byV", range: .closed(10, 25)))
        #expect(mid == model.filter { (10...25).contains($0.value.v) }.sorted { $0.value.v < $1.value.v }.map(\.key), "range \(context)")
    }

    @Test func randomOperationSequencesMatchADictionary() async throws {
        await propertyCheck(count: 40, input: Gen.int(in: 0...1_000_000).array(of: 1...70)) { raw in
            do {
                let steps = raw.map(Step.init)
                let dir = temporaryDirectory("property")
                let options = Engine.Options(durability: .off, checkpointThreshold: 2 << 10)
                var engine = try Engine.open(.directory(dir), options: options)
                try engine.write { tx in try tx.createTable(Self.schema) }
                var committed = Model()
                var pending: [Step] = []
                for (i, step) in steps.enumerated() {
                    switch step {
                    case .insert, .update, .delete:
                        pending.append(step)
                    case .commit:
                        try engine.write { tx in for p in pending { _ = Self.perform(p, in: tx) } }
                        for p in pending { _ = Self.apply(p, to: &committed) }
                        pending = []
                    case .abort:
                        struct Abort: Error {}
                        #expect(throws: Abort.self) {
                            try engine.write { tx in
                                for p in pending { _ = Self.perform(p, in: tx) }
                                throw Abort()
                            }
                        }
                        pending = []
                    case .checkpoint:
                        try engine.checkpoint()
                    case .reopen:
                        try engine.close()
                        engine = try Engine.open(.directory(dir), options: options)
                    }
                    try Self.check(engine, committed, after: steps[...i])
                }
                try engine.close()
            } catch {
                Issue.record("\(raw): \(error)")
            }
        }
    }

    /// Inside one transaction, each operation must see the effects of the ones before it, and a failed
    /// operation must leave nothing behind.
    @Test func operationsInsideATransactionSeeEachOther() async throws {
        await propertyCheck(count: 60, input: Gen.int(in: 0...1_000_000).array(of: 1...40)) { raw in
            do {
                let engine = try Engine.open(.inMemory)
                try engine.write { tx in try tx.createTable(Self.schema) }
                var model = Model()
                try engine.write { tx in
                    for step in raw.map(Step.init) {
                        let engineOK = Self.perform(step, in: tx)
                        let modelOK = Self.apply(step, to: &model)
                        if case .insert = step { #expect(engineOK == modelOK, "\(step)") }
                        if case .update = step { #expect(engineOK == modelOK, "\(step)") }
                        if case .delete = step { #expect(engineOK == modelOK, "\(step)") }
                    }
                }
                try Self.check(engine, model, after: [])
            } catch {
                Issue.record("\(raw): \(error)")
            }
        }
    }
}
