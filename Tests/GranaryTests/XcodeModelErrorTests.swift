import Foundation
import Testing
@testable import Granary

/// Each way a model file can fail names the file, the element and its line. `XcodeFixtures.model(entity:)`
/// puts the first line of the entity body on line 4.
@Suite struct XcodeModelErrorTests {
    private func load(_ contents: String, _ label: String = #function) throws -> XcodeModelError {
        try #require(try XcodeFixtures.error(loading: contents, label))
    }

    @Test func malformedXMLGivesTheLine() throws {
        let error = try load(XcodeFixtures.model(entity: """
                    <attribute name="a" optional="YES" attributeType="String"/>
                    <attribute name="b" optional="YES" attributeType="String">
                </entity>
            """))
        guard case .malformedXML(let location, let reason) = error else {
            Issue.record("expected malformedXML, got \(error)")
            return
        }
        #expect(location.line == 6 && location.path.hasSuffix("Broken.xcdatamodel/contents"))
        #expect(reason.contains("</entity>") && reason.contains("<attribute>") && reason.contains("line 5"))
        #expect(error.description.contains("contents:6: malformed XML"))

        let unquoted = try load(XcodeFixtures.model(entity: #"        <attribute name=a attributeType="String"/>"#))
        #expect(unquoted.line == 4)
        if case .malformedXML = unquoted {} else { Issue.record("expected malformedXML, got \(unquoted)") }
    }

    @Test func unknownElementsAreNamedWithTheirParentAndLine() throws {
        let error = try load(XcodeFixtures.model(entity: """
                    <attribute name="a" optional="YES" attributeType="String"/>
                    <widget name="gadget"/>
            """))
        guard case .unknownElement(let location, let parent) = error else {
            Issue.record("expected unknownElement, got \(error)")
            return
        }
        #expect(location.element == "widget" && location.name == "gadget" && location.line == 5 && parent == "entity")
        #expect(error.description.hasSuffix(#"contents:5: <widget name="gadget">: unknown element inside <entity>"#))

        let atModelLevel = try load(XcodeFixtures.model(entity: "", after: "    <diagram/>\n"))
        #expect(atModelLevel.location.element == "diagram" && atModelLevel.line == 6)
    }

    @Test func unknownAttributeTypesAreRejected() throws {
        let error = try load(XcodeFixtures.model(entity: """
                    <attribute name="a" optional="YES" attributeType="String"/>

                    <attribute name="size" attributeType="Integer 8" usesScalarValueType="YES"/>
            """))
        guard case .invalidValue(let location, let attribute, let value, _) = error else {
            Issue.record("expected invalidValue, got \(error)")
            return
        }
        #expect(location.line == 6 && location.element == "attribute" && location.name == "size")
        #expect(attribute == "attributeType" && value == "Integer 8")
        #expect(error.description.contains(#"<attribute name="size">: attributeType="Integer 8""#))
    }

    @Test func unknownXMLAttributesAreRejected() throws {
        let error = try load(XcodeFixtures.model(entity: #"        <attribute name="a" attributeType="String" sparkles="YES"/>"#))
        guard case .unknownAttribute(let location, let attribute) = error else {
            Issue.record("expected unknownAttribute, got \(error)")
            return
        }
        #expect(location.line == 4 && attribute == "sparkles")
    }

    @Test func valuesThatDoNotParseAreRejected() throws {
        let cases: [(String, String)] = [
            (#"<attribute name="n" attributeType="Integer 16" defaultValueString="70000"/>"#, "defaultValueString"),
            (#"<attribute name="n" attributeType="Integer 32" minValueString="low"/>"#, "minValueString"),
            (#"<attribute name="n" attributeType="Decimal" defaultValueString="12abc"/>"#, "defaultValueString"),
            (#"<attribute name="n" attributeType="UUID" defaultValueString="not-a-uuid"/>"#, "defaultValueString"),
            (#"<attribute name="n" attributeType="Boolean" defaultValueString="maybe"/>"#, "defaultValueString"),
            (#"<attribute name="n" attributeType="Date" defaultDateTimeInterval="yesterday"/>"#, "defaultDateTimeInterval"),
            (#"<attribute name="n" attributeType="Boolean" minValueString="1"/>"#, "minValueString"),
            (#"<attribute name="n" attributeType="String" optional="maybe"/>"#, "optional"),
            (#"<attribute name="n" attributeType="String" maxValueString="-1"/>"#, "maxValueString"),
        ]
        for (line, attribute) in cases {
            let error = try load(XcodeFixtures.model(entity: "        " + line))
            guard case .invalidValue(let location, let name, _, _) = error else {
                Issue.record("expected invalidValue for \(line), got \(error)")
                continue
            }
            #expect(location.line == 4 && name == attribute, "\(line)")
        }
    }

    @Test func unsupportedCoreDataFeaturesAreRejectedByName() throws {
        let cases: [(String, Int, String)] = [
            (
                """
                        <attribute name="x" attributeType="Double"/>
                        <fetchIndex name="byLocation">
                            <fetchIndexElement property="x" type="RTree" order="ascending"/>
                        </fetchIndex>
                """, 6, "R-tree index"
            ),
            (#"        <attribute name="n" optional="YES"/>"#, 4, "attribute type Undefined on a stored attribute"),
            (#"        <attribute name="n" optional="YES" attributeType="Composite" composite="Address"/>"#, 4,
             "composite attributes (Xcode 15)"),
        ]
        for (body, line, feature) in cases {
            let error = try load(XcodeFixtures.model(entity: body))
            guard case .unsupported(let location, let name, _) = error else {
                Issue.record("expected unsupported \(feature), got \(error)")
                continue
            }
            #expect(location.line == line && name == feature, "\(feature): \(error)")
        }
    }

    @Test func modelErrorsPointAtTheElementTheyConcern() throws {
        let destination = try load(XcodeFixtures.model(entity: """
                    <attribute name="a" optional="YES" attributeType="String"/>
                    <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Nobody" inverseName="things" inverseEntity="Nobody"/>
            """))
        guard case .invalidModel(let location, .unknownDestination(entity: "Thing", relationship: "owner", destination: "Nobody")) = destination
        else {
            Issue.record("expected unknownDestination, got \(destination)")
            return
        }
        #expect(location.line == 5 && location.name == "owner")
        #expect(destination.description.contains("contents:5: <relationship name=\"owner\">: invalid model: relationship 'Thing.owner'"))

        let duplicate = try load(XcodeFixtures.model(entity: """
                    <attribute name="a" optional="YES" attributeType="String"/>
                    <attribute name="b" optional="YES" attributeType="String"/>
                    <attribute name="a" optional="YES" attributeType="Integer 32"/>
            """))
        #expect(duplicate == .invalidModel(
            XcodeModelError.Location(path: duplicate.location.path, line: 6, element: "attribute", name: "a"),
            error: .duplicateProperty(entity: "Thing", property: "a")))

        let index = try load(XcodeFixtures.model(entity: """
                    <attribute name="a" optional="YES" attributeType="String"/>
                    <fetchIndex name="byB">
                        <fetchIndexElement property="b" type="Binary" order="ascending"/>
                    </fetchIndex>
            """))
        guard case .invalidModel(let indexLocation, .unknownProperty(_, "b", .index("byB"))) = index else {
            Issue.record("expected unknownProperty, got \(index)")
            return
        }
        #expect(indexLocation.line == 5 && indexLocation.element == "fetchIndex")

        let configuration = try load(XcodeFixtures.model(entity: "", after: """
                <configuration name="Cloud">
                    <memberEntity name="Thing"/>
                    <memberEntity name="Ghost"/>
                </configuration>

            """))
        guard case .invalidModel(let memberLocation, .unknownConfigurationEntity("Cloud", "Ghost")) = configuration else {
            Issue.record("expected unknownConfigurationEntity, got \(configuration)")
            return
        }
        #expect(memberLocation.line == 8 && memberLocation.element == "memberEntity")
    }

    @Test func transformablesAreNamedByTheirCustomClassAndLoadBeforeItIsRegistered() throws {
        let body = #"        <attribute name="shape" optional="YES" attributeType="Transformable" valueTransformerName="NSSecureUnarchiveFromData" customClassName=".XcodeTestShape"/>"#
        let directory = try XcodeFixtures.scratchDirectory()
        let unregistered = try ManagedObjectModel(contentsOf: XcodeFixtures.writePackage(XcodeFixtures.model(entity: body), named: "Early", in: directory))
        #expect(unregistered.entity(named: "Thing")?.attributesByName["shape"]?.type == .transformable(valueTypeName: "XcodeTestShape"))
        let noClass = #"        <attribute name="shape" optional="YES" attributeType="Transformable" valueTransformerName="NSSecureUnarchiveFromData"/>"#
        let archived = try ManagedObjectModel(contentsOf: XcodeFixtures.writePackage(XcodeFixtures.model(entity: noClass), named: "NoClass", in: directory))
        #expect(archived.entity(named: "Thing")?.attributesByName["shape"]?.type == .secureUnarchiveFromData)

        struct Shape: Codable, Sendable, Equatable { var sides: Int }
        _ = AttributeType.transformable(Shape.self, name: "XcodeTestShape")
        let package = try XcodeFixtures.writePackage(XcodeFixtures.model(entity: body), named: "Shapes", in: directory)
        let model = try ManagedObjectModel(contentsOf: package)
        #expect(model.entity(named: "Thing")?.attributesByName["shape"]?.type == .transformable(valueTypeName: "XcodeTestShape"))
    }

    @Test func urlsThatAreNotModelsAreRejected() throws {
        let directory = try XcodeFixtures.scratchDirectory()
        let nowhere = directory.appendingPathComponent("Missing.xcdatamodeld")
        #expect(throws: XcodeModelError.unreadable(XcodeModelError.Location(path: nowhere.path), reason: "no such file or directory")) {
            try ManagedObjectModel(contentsOf: nowhere)
        }
        let file = directory.appendingPathComponent("Model.txt")
        try Data("hello".utf8).write(to: file)
        #expect {
            try ManagedObjectModel(contentsOf: file)
        } throws: { error in
            guard case .notAModel(let location, _) = error as? XcodeModelError else { return false }
            return location.path == file.path
        }
        let compiled = directory.appendingPathComponent("Model.momd")
        try FileManager.default.createDirectory(at: compiled, withIntermediateDirectories: true)
        #expect {
            try ManagedObjectModel(contentsOf: compiled)
        } throws: { error in
            guard case .notAModel(_, let reason) = error as? XcodeModelError else { return false }
            return reason.contains("compiled")
        }
        let empty = directory.appendingPathComponent("Empty.xcdatamodel")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        #expect {
            try ManagedObjectModel(contentsOf: empty)
        } throws: { error in
            guard case .unreadable(let location, _) = error as? XcodeModelError else { return false }
            return location.path == empty.path
        }
        let plist = try load(#"<?xml version="1.0" encoding="UTF-8"?>\#n<plist version="1.0"><dict/></plist>\#n"#)
        guard case .notAModel(let location, _) = plist else {
            Issue.record("expected notAModel, got \(plist)")
            return
        }
        #expect(location.line == 2 && location.element == "plist")
    }

    @Test func aContentsFileLoadsAsItsPackage() throws {
        let contents = try XcodeFixtures.url("Library.xcdatamodel/contents")
        XcodeFixtures.registerLibraryTransformables()
        let model = try ManagedObjectModel(contentsOf: contents)
        #expect(model.versionIdentifier == "Library" && model.entities.count == 6)
    }
}
