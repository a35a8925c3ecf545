import Foundation
import FuzzSupport
import Granary

/// Fuzzes `PredicateParser`, the `NSPredicate(format:)` reader that ported code hands its predicate strings.
///
/// Property: any text parses or throws `PredicateParseError`, never traps; a predicate that parses
/// describes itself as text that parses back to the same node (the round trip the parser tests check
/// on hand-picked nodes), and fetches from a small store (planned, evaluated, counted, explained) or
/// throws, never traps.
@main enum PredicateFuzzer {
    /// One argument of each kind a placeholder can take, so that `%@`, `%K`, `%d` and `%f` are reached.
    nonisolated(unsafe) static let arguments: [Any?] = [
        "name", 42, 2.5, nil, ["a", "b"], [1, 2, 3], Date(timeIntervalSinceReferenceDate: 86_400), "reports.age",
        UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!, Data([1, 2, 0xFF]), true, -7, Int64.max, Double.infinity,
    ]

    nonisolated(unsafe) static var fixture: FetchFixture?

    static func main() {
        do { fixture = try FetchFixture() } catch { fatalError("the fetch fixture cannot be built: \(error)") }
        FuzzDriver.run("fuzz-predicate", test)
    }

    static func test(_ bytes: [UInt8]) {
        let format = String(decoding: bytes, as: UTF8.self)
        let node: PredicateNode
        do {
            node = try PredicateParser.parse(format, arguments: arguments)
        } catch let error as PredicateParseError {
            _ = error.description
            return
        } catch {
            FuzzDriver.fail("the parser threw \(type(of: error)), not PredicateParseError: \(error)", bytes)
        }
        let description = node.description
        let again: PredicateNode
        do {
            again = try PredicateParser.parse(description)
        } catch {
            FuzzDriver.fail("the description \(String(reflecting: description)) of a parsed predicate does not parse: \(error)", bytes)
        }
        guard again == node || again.description == description else {
            FuzzDriver.fail("the description \(String(reflecting: description)) parses to another node: \(String(reflecting: again.description))", bytes)
        }
        fixture?.fetch(node)
    }
}
