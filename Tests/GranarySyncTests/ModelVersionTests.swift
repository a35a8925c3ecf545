import Foundation
import Granary
@testable import GranarySync
import Testing

/// M26: events made with a model version a device does not know wait, with a status naming the version,
/// while that device's own changes keep being recorded and sent.
@Suite struct ModelVersionTests {
    /// The notes model with one more attribute: the next version of the app.
    static func notesModelVersion2() throws -> ManagedObjectModel {
        try ManagedObjectModel(version: "2") {
            Entity("Note", as: SyncNote.self) {
                Attribute("uniqueIdentifier", .string)
                Attribute("text", .string, defaultValue: "")
                Attribute("stars", .integer64, defaultValue: 0)
                Attribute("color", .string, optional: true)
                Relationship("folder", to: "Folder", inverse: "notes", deleteRule: .nullify)
                Relationship("tags", toMany: "Tag", inverse: "notes", deleteRule: .nullify)
            }
            Entity("Folder", as: SyncFolder.self) {
                Attribute("uniqueIdentifier", .string)
                Attribute("name", .string, defaultValue: "")
                Relationship("notes", toMany: "Note", inverse: "folder", deleteRule: .cascade)
            }
            Entity("Tag", as: SyncTag.self) {
                Attribute("uniqueIdentifier", .string)
                Attribute("name", .string, defaultValue: "")
                Relationship("notes", toMany: "Note", inverse: "tags", deleteRule: .nullify)
            }
        }
    }

    @Test func eventsOfAnUnknownModelWaitWhileLocalChangesAreStillSent() async throws {
        let root = try makeScratchDirectory()
        defer { removeScratch(root) }
        let cloud = MemoryFileSystem()
        let version1 = try syncNotesModel(), version2 = try Self.notesModelVersion2()
        #expect(version1.versionHash != version2.versionHash)
        let old = try SyncTestDevice("old", in: root, model: version1, cloud: cloud)
        let new = try SyncTestDevice("new", in: root, model: version2, cloud: cloud,
                                     configuration: EnsembleConfiguration(globalIdentifierAttribute: "uniqueIdentifier",
                                                                          previousModels: [version1]))
        try await old.ensemble.leech()
        try await new.ensemble.leech()

        try new.addNote("from the new app", id: "n-new")
        try await new.ensemble.merge()
        let report = try await old.ensemble.merge()
        #expect(report.waitingEvents >= 1, "\(report)")
        #expect(old.ensemble.status == .waitingForModelVersion(hashes: [version2.versionHash]), "\(old.ensemble.status)")
        #expect(try old.graph().nodes["Note/n-new"] == nil, "an event of an unknown model was integrated")

        // The old device keeps recording and sending its own changes, which the new one can read.
        try old.addNote("from the old app", id: "n-old")
        let sent = try await old.ensemble.merge()
        #expect(sent.exportedEvents >= 1)
        try await new.ensemble.merge()
        #expect(try new.graph().nodes["Note/n-old"] != nil)
        #expect(old.ensemble.status == .waitingForModelVersion(hashes: [version2.versionHash]))
    }
}
