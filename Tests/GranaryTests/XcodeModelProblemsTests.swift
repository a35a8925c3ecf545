import Foundation
import Testing
@testable import Granary

/// The loader reads on past a problem to report every problem of a file, and of every version of a
/// bundle, in one error. `XcodeFixtures.model(entity:)` puts the first line of the entity body on line 4.
@Suite struct XcodeModelProblemsTests {
    @Test func aFileWithFiveProblemsReportsAllFiveWithTheirLines() throws {
        let contents = XcodeFixtures.model(entity: """
                    <attribute name="a" optional="YES" attributeType="String" sparkles="YES"/>
                    <attribute name="b" attributeType="Integer 16" defaultValueString="70000"/>
                    <widget name="gadget"/>
                    <relationship name="r" destinationEntity="Thing" inverseName="r" deletionRule="Explode"/>
                    <attribute attributeType="String"/>
                    <attribute name="fine" optional="YES" attributeType="String"/>
            """)
        let error = try #require(try XcodeFixtures.error(loading: contents))
        let problems = error.problems
        #expect(problems.count == 5)
        #expect(problems.map(\.line) == [4, 5, 6, 7, 8])
        guard case .problems(let list) = error else {
            Issue.record("expected .problems, got \(error)")
            return
        }
        #expect(list == problems)
        if case .unknownAttribute(_, let attribute) = problems[0] { #expect(attribute == "sparkles") } else { Issue.record("\(problems[0])") }
        if case .invalidValue(_, let attribute, let value, _) = problems[1] {
            #expect(attribute == "defaultValueString" && value == "70000")
        } else { Issue.record("\(problems[1])") }
        if case .unknownElement(let location, let parent) = problems[2] {
            #expect(location.element == "widget" && parent == "entity")
        } else { Issue.record("\(problems[2])") }
        if case .invalidValue(_, let attribute, _, _) = problems[3] { #expect(attribute == "deletionRule") } else { Issue.record("\(problems[3])") }
        if case .missingAttribute(_, let attribute) = problems[4] { #expect(attribute == "name") } else { Issue.record("\(problems[4])") }
        // The message lists each problem on a line of its own, each with its file and line.
        let lines = error.description.split(separator: "\n")
        #expect(lines.first == "5 problems:" && lines.count == 6)
        for (line, number) in zip(lines.dropFirst(), 4...8) { #expect(line.contains("contents:\(number): ")) }
        // The error's location is the first problem's.
        #expect(error.line == 4)
    }

    @Test func problemsInsideOneElementAreEachReported() throws {
        // A bad flag, a bad default and an unknown attribute on one attribute element: three problems.
        let contents = XcodeFixtures.model(entity: """
                    <attribute name="a" optional="maybe" attributeType="Integer 32" defaultValueString="x" glitter="1"/>
            """)
        let error = try #require(try XcodeFixtures.error(loading: contents))
        #expect(error.problems.count == 3)
        #expect(Set(error.problems.compactMap(\.line)) == [4])
    }

    @Test func aSingleProblemIsThrownAsItself() throws {
        let error = try #require(try XcodeFixtures.error(loading: XcodeFixtures.model(entity: """
                    <attribute name="a" attributeType="String" sparkles="YES"/>
            """)))
        if case .unknownAttribute = error {} else { Issue.record("expected unknownAttribute, got \(error)") }
        #expect(error.problems == [error])
    }

    @Test func aBundleReportsTheProblemsOfEveryVersion() throws {
        let bundle = try XcodeFixtures.scratchDirectory().appendingPathComponent("M.xcdatamodeld")
        let good = XcodeFixtures.model(entity: #"        <attribute name="a" optional="YES" attributeType="String"/>"#)
        let twoProblems = XcodeFixtures.model(entity: """
                    <attribute name="a" optional="YES" attributeType="Strung"/>
                    <gizmo/>
            """)
        let oneProblem = XcodeFixtures.model(entity: #"        <attribute name="a" optional="YES" attributeType="String" x="1"/>"#)
        try XcodeFixtures.writePackage(good, named: "M", in: bundle)
        try XcodeFixtures.writePackage(twoProblems, named: "M 2", in: bundle)
        try XcodeFixtures.writePackage(oneProblem, named: "M 3", in: bundle)
        try XcodeFixtures.writePackage("<model", named: "M 4", in: bundle)
        try XcodeFixtures.writeCurrentVersion("M 4", in: bundle)
        do {
            _ = try XcodeModelBundle(contentsOf: bundle, classes: ["Nobody": ManagedObject.self])
            Issue.record("the bundle loaded")
        } catch {
            let problems = error.problems
            #expect(problems.count == 5)
            let versions = problems.map { URL(fileURLWithPath: $0.location.path).pathComponents.first { $0.hasSuffix(".xcdatamodel") } }
            #expect(versions == ["M 2.xcdatamodel", "M 2.xcdatamodel", "M 3.xcdatamodel", "M 4.xcdatamodel", nil])
            if case .malformedXML = problems[3] {} else { Issue.record("expected malformedXML, got \(problems[3])") }
            if case .unknownClass(_, let name) = problems[4] { #expect(name == "Nobody") } else { Issue.record("\(problems[4])") }
        }
    }

    @Test func theCurrentVersionLoaderReportsOnlyItsOwnFile() throws {
        let bundle = try XcodeFixtures.scratchDirectory().appendingPathComponent("M.xcdatamodeld")
        try XcodeFixtures.writePackage(XcodeFixtures.model(entity: "<bad/>\n<worse/>"), named: "M", in: bundle)
        try XcodeFixtures.writePackage(
            XcodeFixtures.model(entity: #"        <attribute name="a" optional="YES" attributeType="String"/>"#), named: "M 2", in: bundle)
        try XcodeFixtures.writeCurrentVersion("M 2", in: bundle)
        let model = try ManagedObjectModel(contentsOf: bundle)
        #expect(model.versionIdentifier == "M 2")
        #expect(throws: XcodeModelError.self) { try XcodeModelBundle(contentsOf: bundle) }
    }
}
