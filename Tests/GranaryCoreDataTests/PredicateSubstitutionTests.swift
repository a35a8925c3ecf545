// Core Data's predicate templates: a format string with `$VARIABLE`s, filled per fetch with
// `withSubstitutionVariables(_:)`.
import GranaryCoreData
import Testing

@Suite struct PredicateSubstitutionTests {
    @Test func aTemplateIsFilledWithItsVariables() throws {
        let template = NSPredicate(format: "place == $PLACE AND magnitude >= $LIMITS.low")
        // Unfilled, it keeps the error, which a fetch would throw.
        #expect(throws: PredicateParseError.self) { try template.predicateNode() }
        let filled = template.withSubstitutionVariables(["PLACE": "Alaska" as NSString, "LIMITS": ["low": NSNumber(value: 4.5)]])
        #expect(try filled.predicateNode() == .and([
            .compare(["place"], .equal, .value(.string("Alaska"))), .compare(["magnitude"], .greaterOrEqual, .value(.double(4.5))),
        ]))
        // The template stays a template, and can be filled again.
        let other = filled.withSubstitutionVariables(["PLACE": "Chile", "LIMITS": ["low": 6]])
        #expect(try other.predicateNode() == .and([
            .compare(["place"], .equal, .value(.string("Chile"))), .compare(["magnitude"], .greaterOrEqual, .value(.int(6))),
        ]))
    }

    @Test func aTemplateFilledWithAMissingVariableStillFails() {
        let filled = NSPredicate(format: "place == $PLACE").withSubstitutionVariables(["OTHER": 1])
        #expect(throws: PredicateParseError.self) { try filled.predicateNode() }
    }
}
