import Foundation
import Testing
@testable import GranarySync

@Suite struct StoreIDTests {
    @Test func onlyTheUppercaseCanonicalSpellingParses() throws {
        let id = StoreID.random()
        #expect(StoreID(canonical: id.description) == id)
        #expect(StoreID(canonical: id.description.lowercased()) == nil)
        #expect(StoreID(canonical: "{\(id.description)}") == nil)
        #expect(StoreID(canonical: id.description + " ") == nil)
        #expect(StoreID(canonical: "") == nil)
    }

    @Test func storeIDsAreOrderedByTheBytesOfTheirText() {
        var generator = SplitMix(seed: 7)
        let ids = (0..<200).map { _ in generator.storeID() }
        let byText = ids.map(\.description).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        #expect(ids.sorted().map(\.description) == byText)
    }

    @Test func decodingRefusesANonCanonicalStoreID() throws {
        let id = StoreID.random()
        let good = try EventPayloadCoding.encode([id])
        #expect(try EventPayloadCoding.decode([StoreID].self, from: good, name: "t") == [id])
        let bad = Data("[\"\(id.description.lowercased())\"]".utf8)
        #expect(throws: EventFileError.self) { try EventPayloadCoding.decode([StoreID].self, from: bad, name: "t") }
    }
}
