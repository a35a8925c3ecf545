import Foundation
import PropertyBased
import Testing

/// Runs a property test whose input is one seed, so that a failure can be replayed:
/// `<PREFIX>_SEED=n` replays one seed, `<PREFIX>_SEEDS=n` runs n random seeds (40 by default), and
/// `<PREFIX>_STEPS=n` makes each run n steps long (200).
enum SeededPropertyRuns {
    static func run(environmentPrefix prefix: String, label: String, _ check: (_ seed: Int, _ steps: Int) throws -> Void) async {
        let environment = ProcessInfo.processInfo.environment
        let steps = Int(environment["\(prefix)_STEPS"] ?? "") ?? 200
        let count = Int(environment["\(prefix)_SEEDS"] ?? "") ?? 40
        if let seed = environment["\(prefix)_SEED"].flatMap(Int.init) {
            do { try check(seed, steps) } catch { report(label: label, seed: seed, error) }
            return
        }
        await propertyCheck(count: count, input: Gen.int(in: 0...Int.max)) { seed in
            do { try check(seed, steps) } catch { report(label: label, seed: seed, error) }
        }
    }

    /// Records a failing seed, and writes it to standard error too: the property runner reports the
    /// failing input but not the recorded issue's text, and a failure that does not replay from its seed
    /// (one that depends on timing) is otherwise lost.
    static func report(label: String, seed: Int, _ error: Error) {
        FileHandle.standardError.write(Data("\(label) seed \(seed): \(error)\n".utf8))
        Issue.record("seed \(seed): \(error)")
    }
}
