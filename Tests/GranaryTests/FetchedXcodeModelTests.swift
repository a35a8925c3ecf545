import Foundation
import Testing
@testable import Granary

/// The `Fetched…` bundles of the corpus: fetched properties and derived attributes read from Xcode's
/// files, working through a durable store across the bundles' versions.
@Suite struct FetchedXcodeModelTests {
    static let bundles = [
        "FetchedProperties", "FetchedDerivedAttributes", "FetchedUserInfoVariable", "FetchedAggregates", "FetchedInheritance",
    ]

    private func bundle(_ name: String) throws -> XcodeModelBundle {
        try XcodeModelBundle(contentsOf: try XcodeFixtures.url("Corpus/\(name).xcdatamodeld"))
    }

    private func migrationOptions(_ bundle: XcodeModelBundle, through index: Int) -> PersistentStore.Options {
        var options = PersistentStore.Options()
        options.migration.versions = Array(bundle.versions[...index])
        return options
    }

    private func strings(_ objects: Any?, _ key: String) -> [String] {
        ((objects as? [ManagedObject]) ?? []).compactMap { try? $0.value(forKey: key) as? String }
    }

    @Test(arguments: bundles)
    func everyVersionLoadsWithItsFetchedPropertiesAndDerivedAttributes(_ name: String) throws {
        let bundle = try bundle(name)
        #expect(bundle.versions.count >= 2)
        #expect(bundle.warnings.isEmpty, "\(bundle.warnings)")
        let computed = bundle.versions.map { model in
            model.entities.reduce(0) { $0 + $1.fetchedProperties.count + $1.attributes.filter(\.isDerived).count }
        }
        // Every bundle's versions add computed properties as they go.
        #expect(computed.last! > computed.first!, "\(computed)")
    }

    @Test func fetchedPropertiesWorkAfterAStoreFollowsTheVersions() throws {
        let bundle = try bundle("FetchedProperties")
        #expect(bundle.currentVersionName == "FetchedProperties 3")
        let (v1, v2, v3) = (bundle.versions[0], bundle.versions[1], bundle.versions[2])
        // Fetched properties are not stored: adding one leaves the version hash as it was.
        #expect(v1.versionHash == v2.versionHash)
        #expect(v2.versionHash != v3.versionHash)
        let store = MigrationHarness()
        try store.write(v1) { context in
            let ann = try context.insert("Author", ["name": "Ann"])
            let bo = try context.insert("Author", ["name": "Bo"])
            for (title, pages, author) in [("Tome", 800, ann), ("Leaflet", 20, ann), ("Middle", 260, ann), ("Other", 900, bo)] {
                try context.insert("Book", ["title": title, "pages": Int32(pages), "author": author])
            }
        }
        try store.open(v2) { _, context in
            let ann = try #require(try context.all("Author", sortedBy: "name").first)
            #expect(strings(try ann.value(forKey: "longBooks"), "title").sorted() == ["Tome"])
        }
        try store.open(v3, options: migrationOptions(bundle, through: 2)) { _, context in
            let ann = try #require(try context.all("Author", sortedBy: "name").first)
            #expect(strings(try ann.value(forKey: "longBooks"), "title").sorted() == ["Middle", "Tome"])
            let tome = try #require(try context.all("Book", sortedBy: "title").first { try $0.get("title", as: String.self) == "Tome" })
            #expect(strings(try tome.value(forKey: "sameAuthor"), "title").sorted() == ["Leaflet", "Middle"])
            try tome.setValue(Int16(2010), forKey: "year")
            try context.save()
            context.refresh(ann, mergeChanges: false)
            #expect(strings(try ann.value(forKey: "recentBooks"), "title") == ["Tome"])
        }
    }

    @Test func derivedAttributesAreFilledAtTheNextSaveAfterMigrationAndStayQueryable() throws {
        let bundle = try bundle("FetchedDerivedAttributes")
        let v3 = bundle.versions[2]
        let store = MigrationHarness()
        try store.write(bundle.versions[0]) { context in
            let zola = try context.insert("Writer", ["name": "Émile Zola"])
            try context.insert("Writer", ["name": "Ann"])
            for (title, pages) in [("Nana", 400), ("Germinal", 600)] {
                try context.insert("Volume", ["title": title, "pages": Int32(pages), "writer": zola])
            }
        }
        try store.open(v3, options: migrationOptions(bundle, through: 2)) { _, context in
            let writers = try context.all("Writer", sortedBy: "name")
            // Migration copies stored values; a derived attribute new in this version is computed when its
            // object is next saved, as any other change of the object would.
            #expect(try writers.map { try $0.get("nameLower", as: String.self) } == [nil, nil])
            // Setting a value back is no change; a new volume changes its writer (and, through the inverse,
            // every volume that reads the writer's name).
            let ann = writers[0]
            try ann.setValue("Ann", forKey: "name")
            try context.insert("Volume", ["title": "Short", "pages": Int32(10), "writer": ann])
            let zola = writers[1]
            try zola.setValue("Émile Zola", forKey: "name")
            try context.insert("Volume", ["title": "Thérèse", "pages": Int32(250), "writer": zola])
            try context.save()
        }
        try store.open(v3) { _, context in
            let writers = try context.all("Writer", sortedBy: "name")
            #expect(try writers.map { try $0.get("nameLower", as: String.self) } == ["ann", "émile zola"])
            #expect(try writers.map { try $0.get("bookCount", as: Int64.self) } == [1, 3])
            #expect(try writers.map { try $0.get("totalPages", as: Int64.self) } == [10, 1250])
            #expect(try writers.allSatisfy { try $0.get("updated", as: Date.self) != nil })
            var request = FetchRequest<ManagedObject>(entityName: "Writer")
            request.filter = try PredicateParser.parse("searchName == 'emile zola'")
            #expect(try context.fetch(request).count == 1)
            var volumes = FetchRequest<ManagedObject>(entityName: "Volume")
            volumes.filter = try PredicateParser.parse("writerName == 'Émile Zola'")
            volumes.sortKeys = [SortKey("titleCopy")]
            #expect(try context.fetch(volumes).map { try $0.get("titleCopy", as: String.self) } == ["Germinal", "Nana", "Thérèse"])
        }
    }

    @Test func theUserInfoOfEachVersionDecidesWhatTheFetchedPropertyReturns() throws {
        let bundle = try bundle("FetchedUserInfoVariable")
        let store = MigrationHarness()
        try store.write(bundle.versions[0]) { context in
            try context.insert("Critic", ["alias": "kit"])
            for text in ["A GREAT read", "Superb pacing", "Dear reader, great", "meh"] {
                try context.insert("Review", ["authorAlias": "kit", "text": text])
            }
            try context.insert("Review", ["authorAlias": "someone", "text": "great too"])
        }
        try store.open(bundle.versions[0]) { _, context in
            let kit = try #require(try context.all("Critic", sortedBy: "alias").first)
            let description = try #require(kit.entity.fetchedPropertiesByName["favoriteReviews"])
            #expect(description.userInfo == ["search": "great"] && description.destinationEntityName == "Review")
            #expect(strings(try kit.value(forKey: "favoriteReviews"), "text").sorted() == ["A GREAT read", "Dear reader, great"])
        }
        try store.open(bundle.versions[1], options: migrationOptions(bundle, through: 1)) { _, context in
            let kit = try #require(try context.all("Critic", sortedBy: "alias").first)
            #expect(strings(try kit.value(forKey: "favoriteReviews"), "text") == ["Superb pacing"])
            #expect(strings(try kit.value(forKey: "namedReviews"), "text") == ["Dear reader, great"])
        }
    }

    @Test func aggregatesOfAToManyRelationshipAreStoredAtSave() throws {
        let bundle = try bundle("FetchedAggregates")
        let store = MigrationHarness()
        let base = Date(timeIntervalSinceReferenceDate: 700_000_000)
        try store.write(bundle.versions[0]) { context in
            let mix = try context.insert("Playlist", ["title": "Mix"])
            for (index, seconds) in [180, 240, 95].enumerated() {
                try context.insert("Track", [
                    "title": "t\(index)", "seconds": Int32(seconds), "added": base.addingTimeInterval(Double(index) * 60),
                    "playlist": mix,
                ])
            }
            try context.insert("Playlist", ["title": "Empty"])
        }
        try store.open(bundle.versions[0]) { _, context in
            let lists = try context.all("Playlist", sortedBy: "title")
            #expect(try lists.map { try $0.get("trackCount", as: Int32.self) } == [0, 3])
        }
        try store.open(bundle.versions[1], options: migrationOptions(bundle, through: 1)) { _, context in
            let mix = try #require(try context.all("Playlist", sortedBy: "title").last)
            // New derived attributes are empty until the object's next save.
            #expect(try mix.get("totalSeconds", as: Int64.self) == nil)
            try context.insert("Track", ["title": "t3", "seconds": Int32(300), "added": base.addingTimeInterval(-60), "playlist": mix])
            try context.save()
        }
        try store.open(bundle.versions[1]) { _, context in
            let lists = try context.all("Playlist", sortedBy: "title")
            let (empty, mix) = (lists[0], lists[1])
            #expect(try mix.get("trackCount", as: Int32.self) == 4)
            #expect(try mix.get("totalSeconds", as: Int64.self) == 815)
            #expect(try mix.get("longestSeconds", as: Int32.self) == 300)
            #expect(try mix.get("shortestSeconds", as: Int32.self) == 95)
            #expect(try mix.get("averageSeconds", as: Double.self) == 815.0 / 4)
            #expect(try mix.get("lastAdded", as: Date.self) == base.addingTimeInterval(120))
            // The empty playlist was not saved again: its values are what migration left.
            #expect(try empty.get("totalSeconds", as: Int64.self) == nil)
            var request = FetchRequest<ManagedObject>(entityName: "Playlist")
            request.filter = try PredicateParser.parse("longestSeconds > 200")
            #expect(try context.fetch(request).count == 1)
        }
    }

    @Test func subEntitiesInheritDerivedAttributesAndFetchedPropertiesFromAnAbstractParent() throws {
        let bundle = try bundle("FetchedInheritance")
        let model = bundle.currentVersion
        let film = try #require(model.entity(named: "Film"))
        #expect(film.fetchedProperties.map(\.name) == ["sameYear", "sameDirector"])
        #expect(film.attributesByName["sortTitle"]?.derivationExpression == "canonical:(title)")
        #expect(model.entity(named: "Album")?.fetchedProperties.map(\.name) == ["sameYear"])
        let store = MigrationHarness()
        try store.write(bundle.versions[0]) { context in
            try context.insert("Album", ["title": "Blue", "year": Int16(1971), "artist": "Joni"])
            try context.insert("Film", ["title": "Été", "year": Int16(1971), "director": "Rohmer"])
            try context.insert("Film", ["title": "Autre", "year": Int16(1990), "director": "Rohmer"])
        }
        try store.open(model, options: migrationOptions(bundle, through: 1)) { _, context in
            let items = try context.all("Item", sortedBy: "sortTitle")
            #expect(try items.map { try $0.get("title", as: String.self) } == ["Autre", "Blue", "Été"])
            let ete = items[2]
            #expect(strings(try ete.value(forKey: "sameYear"), "title") == ["Blue"])
            #expect(strings(try ete.value(forKey: "sameDirector"), "title").sorted() == ["Autre", "Été"])
            try ete.setValue("Rohmer, Éric", forKey: "director")
            try context.save()
            #expect(try ete.get("directorKey", as: String.self) == "ROHMER, ÉRIC")
        }
    }

    @Test func aBrokenVersionReportsEachProblemOfItsComputedProperties() throws {
        let url = try XcodeFixtures.url("Corpus/FetchedBrokenDeclarations.xcdatamodeld")
        do {
            _ = try XcodeModelBundle(contentsOf: url)
            Issue.record("the broken bundle loaded")
        } catch {
            let problems = error.problems
            #expect(problems.count == 3, "\(problems)")
            #expect(problems.allSatisfy { $0.description.contains("FetchedBrokenDeclarations 2.xcdatamodel") })
            let missing = problems.compactMap { problem -> String? in
                if case .missingAttribute(let location, let attribute) = problem { return "\(location.line ?? 0):\(attribute)" }
                return nil
            }
            #expect(missing.sorted() == ["6:derivationExpression", "7:fetchRequest", "9:entity"])
        }
        let repaired = try ManagedObjectModel(contentsOf: url.appendingPathComponent("FetchedBrokenDeclarations 3.xcdatamodel"))
        #expect(repaired.entity(named: "Note")?.fetchedProperties.map(\.name) == ["others", "related"])
    }

    // MARK: Problems in files

    private func problems(_ entityBody: String) throws -> [XcodeModelError] {
        let directory = try XcodeFixtures.scratchDirectory()
        let package = try XcodeFixtures.writePackage(
            """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="23507" systemVersion="24C101" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
                <entity name="Item" representedClassName="Item" syncable="YES">
                    <attribute name="name" attributeType="String"/>
            \(entityBody)
                </entity>
            </model>
            """, named: "Broken", in: directory)
        do {
            _ = try ManagedObjectModel(contentsOf: package)
            return []
        } catch {
            return error.problems
        }
    }

    @Test func aFetchedPropertyWithoutAFetchRequestOrEntityIsReportedWithItsLine() throws {
        let found = try problems("""
                    <fetchedProperty name="lost" optional="YES"/>
                    <fetchedProperty name="nowhere" optional="YES">
                        <fetchRequest name="fetchedPropertyFetchRequest" predicateString="name != nil"/>
                        <sortDescriptor key="name"/>
                    </fetchedProperty>
            """)
        #expect(found.count == 2, "\(found)")
        #expect(found.contains { if case .missingAttribute(let l, "fetchRequest") = $0 { return l.line == 5 } else { return false } })
        #expect(found.contains { if case .unknownElement(let l, "fetchedProperty") = $0 { return l.line == 8 } else { return false } })
    }

    @Test func aDerivedAttributeWithABadExpressionIsAModelErrorAtItsElement() throws {
        let found = try problems("""
                    <attribute name="shout" optional="YES" attributeType="String" derived="YES" derivationExpression="scream:(name)"/>
            """)
        guard found.count == 1, case .invalidModel(let location, .invalidDerivation("Item", "shout", "scream:(name)", _)) = found[0] else {
            Issue.record("\(found)")
            return
        }
        #expect(location.line == 5 && location.name == "shout")
        let missing = try problems("""
                    <attribute name="shout" optional="YES" attributeType="String" derived="YES"/>
            """)
        #expect(missing.count == 1)
        if case .missingAttribute(_, "derivationExpression")? = missing.first {} else { Issue.record("\(missing)") }
    }

    @Test func aFetchedPropertyPredicateThatDoesNotParseIsAModelErrorAtItsElement() throws {
        let found = try problems("""
                    <fetchedProperty name="odd" optional="YES">
                        <fetchRequest name="fetchedPropertyFetchRequest" entity="Item" predicateString="name == $SOURCE"/>
                    </fetchedProperty>
            """)
        guard found.count == 1, case .invalidModel(let location, .invalidFetchedProperty("Item", "odd", let reason)) = found[0] else {
            Issue.record("\(found)")
            return
        }
        #expect(location.line == 5 && reason.contains("$SOURCE"))
    }
}
