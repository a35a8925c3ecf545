import Foundation
import Granary
import GranaryRecords
import Testing

/// A persistable class bound to the entity of an Xcode model file written by the test.
final class Badge: ManagedObject, Persistable {
    @Managed var code: String
    @Managed var title: String?
    static var idKeyPath: ReferenceWritableKeyPath<Badge, String> { \.code }
}

@Suite struct StoreManagerXcodeModelTests {
    /// Writes `<directory>/Badges.xcdatamodel/contents`, with or without the uniqueness constraint.
    static func writeModel(in directory: URL, unique: Bool) throws -> URL {
        let bundle = directory.appendingPathComponent("Badges.xcdatamodel", isDirectory: true)
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        let constraint = unique
            ? "<uniquenessConstraints><uniquenessConstraint><constraint value=\"code\"/></uniquenessConstraint></uniquenessConstraints>"
            : ""
        let contents = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22522" \
            systemVersion="23F79" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
                <entity name="Badge" representedClassName="Badge" syncable="YES">
                    <attribute name="code" attributeType="String"/>
                    <attribute name="title" optional="YES" attributeType="String"/>
                    \(constraint)
                </entity>
            </model>
            """
        try Data(contents.utf8).write(to: bundle.appendingPathComponent("contents"))
        return bundle
    }

    @Test func aManagerFromAnXcodeModelFileWritesAndReads() async throws {
        let directory = RecordsTestModel.scratchDirectory()
        let url = try Self.writeModel(in: directory, unique: true)
        let manager = try StoreManager(modelAt: url, classes: ["Badge": Badge.self], location: .directory(directory))
        try await Badge.create(in: manager) { badge, _ in badge.code = "gold"; badge.title = "Gold" }
        let main = manager.mainContext
        let title = try await main.perform { try Badge.get(entityID: "gold", from: manager)?.title }
        #expect(title == "Gold")
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("Badges.granary").path))
    }

    @Test func anXcodeModelWithoutTheConstraintIsRefused() throws {
        let directory = RecordsTestModel.scratchDirectory()
        let url = try Self.writeModel(in: directory, unique: false)
        #expect {
            try StoreManager(modelAt: url, classes: ["Badge": Badge.self], location: .inMemory)
        } throws: { error in
            guard case RecordsError.idNotUnique(let entity, _) = error else { return false }
            return entity == "Badge"
        }
    }

    // The closure form of createTemporary saves nothing either.
    @Test func closureCreateTemporarySavesNothing() async throws {
        let manager = try RecordsTestModel.makeManager()
        let error: String? = await withCheckedContinuation { continuation in
            Order.createTemporary(in: manager, update: { order, context in
                order.orderID = 5
                order.user = try User(entityID: "stub", context: context)
            }, complete: { continuation.resume(returning: $0.map { "\($0)" }) })
        }
        #expect(error == nil)
        await manager.waitForWrites()
        let context = manager.newBackgroundContext()
        let counts = try await context.perform {
            (try context.count(for: FetchRequest<Order>(entityName: "Order")), try context.count(for: FetchRequest<User>(entityName: "User")))
        }
        #expect(counts == (0, 0))
    }
}
