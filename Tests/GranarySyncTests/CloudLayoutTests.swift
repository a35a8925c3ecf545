import Foundation
import Testing
@testable import GranarySync

@Suite struct CloudLayoutTests {
    @Test func everyPathIsUnderTheEnsembleDirectory() throws {
        let layout = try CloudLayout(ensembleIdentifier: "Notes")
        let store = StoreID.random()
        #expect(layout.directories == ["Notes", "Notes/stores", "Notes/events", "Notes/baselines", "Notes/data"])
        #expect(layout.formatFile == "Notes/format.json")
        #expect(layout.path(for: .registration(store: store)) == "Notes/stores/\(store).gsstore")
        #expect(layout.path(for: .event(globalCount: 3, store: store, revision: 2, part: nil)) == "Notes/events/3_\(store)_2.gsevent")
        #expect(layout.path(for: .data(sha256: String(repeating: "a", count: 64), store: store)).hasPrefix("Notes/data/"))
        #expect(layout.path(for: .baseline(globalCount: 3, id: UUID(), store: store, part: nil)).hasPrefix("Notes/baselines/"))
        for path in layout.directories + [layout.formatFile] {
            #expect(throws: Never.self) { try CloudPath.components(path) }
        }
    }

    @Test func ensembleIdentifiersArePathComponentsThatAreNeverHidden() {
        for good in ["Notes", "a", "com.example.notes_v2-1", String(repeating: "x", count: 64)] {
            #expect(throws: Never.self) { try CloudLayout(ensembleIdentifier: good) }
        }
        for bad in ["", ".", "..", ".hidden", "a/b", "a b", "notes\u{0}", String(repeating: "x", count: 65), "é"] {
            #expect(throws: CloudFileSystemError.self, "\(bad.debugDescription)") { try CloudLayout(ensembleIdentifier: bad) }
        }
    }

    @Test func theFormatMarkerRefusesANewerVersion() throws {
        let current = try CloudLayout.FormatMarker.current.encoded()
        #expect(String(decoding: current, as: UTF8.self) == #"{"format":"granary-sync","version":1}"#)
        #expect(try CloudLayout.FormatMarker.decode(current) == .current)
        #expect(throws: EventFileError.unsupportedFormatVersion(name: "format.json", found: 2, supported: 1)) {
            try CloudLayout.FormatMarker.decode(Data(#"{"format":"granary-sync","version":2}"#.utf8))
        }
        for bad in [#"{"format":"ensembles","version":1}"#, #"{"format":"granary-sync","version":0}"#, #"{"version":1}"#, "[]", ""] {
            #expect(throws: EventFileError.self, "\(bad)") { try CloudLayout.FormatMarker.decode(Data(bad.utf8)) }
        }
    }
}
