import Foundation
import Granary
@testable import GranaryConnect
import GranaryStack
import Testing

/// §4.1: which entities a connect manages and by which attributes (Coherence's rule, in its order).
@Suite struct ManagedEntityTests {
    @Test func keysComeFromUserInfoThenTheSuperentityThenTheSmallestConstraint() throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        #expect(connect.managedEntityKeys["Customer"] == ["uuid"])
        #expect(connect.managedEntityKeys["Purchase"] == ["customerID", "number"])
        #expect(connect.managedEntityKeys["Invoice"] == ["code"], "inherited from the abstract Document")
    }

    @Test func abstractEntitiesEntitiesWithoutKeysAndBrokenSettingsAreNotManaged() throws {
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        #expect(connect.managedEntityKeys["Document"] == nil)
        #expect(connect.managedEntityKeys["Memo"] == nil)
        #expect(connect.managedEntityKeys["Broken"] == nil)
        #expect(connect.managedEntityNames == ["Customer", "Purchase", "Invoice"])
    }

    @Test func theSettingIsReadAsAStringOrAPropertyListArray() {
        #expect(ManagedEntities.parse(" a ,b,  c ") == ["a", "b", "c"])
        #expect(ManagedEntities.parse("(\"a\", b)") == ["a", "b"])
        #expect(ManagedEntities.parse("") == [])
    }

    @Test func theSmallestUniquenessConstraintWins() throws {
        let model = try ManagedObjectModel {
            Entity("Thing") {
                Attribute("a", .string)
                Attribute("b", .string)
                Attribute("c", .string)
                Unique("a", "b")
                Unique("c")
            }
        }
        #expect(ManagedEntities(model: model).keys["Thing"] == ["c"])
    }

    @Test func anEntityActionOnAnUnmanagedEntityFailsAtOnceNamingIt() throws {
        final class MemoAction: EntityAction {
            typealias ManagedObjectType = Memo
            func execute(context: ActionContext) throws { Issue.record("an action on an unmanaged entity ran") }
            func cancel() {}
        }
        let connect = try ConnectTestModel.makeConnect()
        defer { try? connect.close() }
        #expect {
            try connect.execute(MemoAction())
        } throws: { error in
            guard case .unmanagedEntity("Memo", let reason) = error as? ConnectError else { return false }
            return "\(error)".hasPrefix("Entity 'Memo' not managed by Connect") && reason.contains("no uniqueness")
        }
        #expect(connect.activeActionCount == 0)
    }

    @Test func entityUserInfoIsReadFromXcodeModelFiles() throws {
        let xml = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" systemVersion="22A380" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            <entity name="Ticket" representedClassName="Ticket" syncable="YES" codeGenerationType="class">
                <attribute name="code" optional="YES" attributeType="String"/>
                <userInfo>
                    <entry key="uniquenessAttributes" value="code"/>
                </userInfo>
            </entity>
        </model>
        """
        let directory = ConnectTestModel.scratchDirectory().appendingPathComponent("Ticket.xcdatamodel", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(xml.utf8).write(to: directory.appendingPathComponent("contents"))
        let model = try ManagedObjectModel(contentsOf: directory)
        #expect(model.entity(named: "Ticket")?.userInfo == ["uniquenessAttributes": "code"])
        #expect(ManagedEntities(model: model).keys["Ticket"] == ["code"])
    }
}
