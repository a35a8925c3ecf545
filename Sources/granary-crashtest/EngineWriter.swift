import Foundation
import GranaryStorage

/// The engine crash child: opens a store in `.full` durability and commits transactions forever,
/// printing `ack <n>` after each commit returns, until it is killed. Each transaction inserts one row
/// into `ledger` and one into `audit` and bumps a counter row, so a parent that reopens the store can
/// check that every acknowledged commit is present and that no commit is half there.
func runEngineWriter(_ args: [String]) -> Never {
    guard args.count >= 2 else {
        FileHandle.standardError.write("usage: granary-crashtest <store-directory> [threads] [checkpoint-threshold]\n".data(using: .utf8)!)
        exit(2)
    }
    let threads = args.count > 2 ? Int(args[2]) ?? 1 : 1
    let threshold = args.count > 3 ? Int64(args[3]) ?? (64 << 10) : (64 << 10)

    do {
        let engine = try Engine.open(.directory(URL(fileURLWithPath: args[1])),
                                     options: .init(durability: .full, checkpointThreshold: threshold))
        try engine.write { tx in
            if !tx.snapshot.tableNames.contains("ledger") {
                try tx.createTable(TableSchema(name: "ledger", columns: [Column("n", .int, nullable: false), Column("payload", .string)],
                                               indexes: [IndexDefinition(name: "byN", on: "n", unique: true)]))
                try tx.createTable(TableSchema(name: "audit", columns: [Column("n", .int, nullable: false)]))
                try tx.createTable(TableSchema(name: "counter", columns: [Column("count", .int, nullable: false)]))
                try tx.insert([.int(0)], into: "counter", key: 1)
            }
        }
        say("ready")
        let group = DispatchGroup()
        for t in 0..<threads {
            group.enter()
            Thread.detachNewThread {
                var rng = SystemRandomNumberGenerator()
                while true {
                    do {
                        let n: Int64 = try engine.write { tx in
                            guard case .int(let count)? = try tx.row(in: "counter", key: 1)?[0] else { fatalError("counter row missing") }
                            let n = count + 1
                            let payload = String(repeating: "x", count: Int.random(in: 0...300, using: &rng)) + "-\(t)"
                            try tx.insert([.int(n), .string(payload)], into: "ledger", key: n)
                            try tx.insert([.int(n)], into: "audit", key: n)
                            try tx.update([.int(n)], in: "counter", key: 1)
                            return n
                        }
                        say("ack \(n)")
                        if n % 97 == 0 { try engine.checkpoint() }
                    } catch {
                        say("error \(error)")
                        exit(1)
                    }
                }
            }
        }
        group.wait()
    } catch {
        say("error \(error)")
        exit(1)
    }
    exit(0)
}
