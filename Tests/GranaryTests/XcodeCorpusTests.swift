import Foundation
import Testing
@testable import Granary

/// The corpus runner: every model bundle under `Fixtures/Corpus` loads version by version, and a store
/// holding generated objects migrates across each pair of consecutive versions with its data intact.
///
/// A bundle `Corpus/<Name>.xcdatamodeld` may have a manifest `Corpus/<Name>.json` beside it (see
/// `CorpusManifest`) saying what to expect when it is not "every version loads and every consecutive pair
/// migrates". One test case per bundle, so a failure names the bundle.
@Suite struct XcodeCorpusTests {
    @Test func theCorpusHoldsBundles() throws {
        #expect(try XcodeCorpus.bundleNames().count >= 2)
    }

    @Test(arguments: (try? XcodeCorpus.bundleNames()) ?? [])
    func bundleLoadsAndMigrates(_ name: String) throws {
        let url = try XcodeCorpus.bundleURL(name)
        let manifest = try XcodeCorpus.manifest(name)
        let expectedProblems = manifest.expectLoadProblems ?? [:]
        let listing = try XcodeModelBundle.listing(of: url)
        let names = listing.packages.map(\.name)
        for version in expectedProblems.keys where !names.contains(version) {
            Issue.record("\(name).json expects problems in version '\(version)', which the bundle does not hold (\(names))")
        }

        // Each version on its own: those the manifest names fail with that many problems, the rest load.
        var models: [ManagedObjectModel?] = []
        for package in listing.packages {
            do {
                let model = try ManagedObjectModel(contentsOf: package.url)
                if let count = expectedProblems[package.name] {
                    Issue.record("version '\(package.name)' loaded; \(name).json expects \(count) problems")
                }
                models.append(model)
            } catch {
                if let count = expectedProblems[package.name] {
                    #expect(error.problems.count == count, "version '\(package.name)': \(error)")
                } else {
                    Issue.record("version '\(package.name)' does not load: \(error)")
                }
                models.append(nil)
            }
        }

        // The bundle as a whole: it loads exactly when every version does, with the same models.
        let expectedTotal = expectedProblems.values.reduce(0, +)
        do {
            let bundle = try XcodeModelBundle(contentsOf: url)
            #expect(expectedTotal == 0, "the bundle loaded; \(name).json expects \(expectedTotal) problems")
            #expect(bundle.versionNames == names)
            #expect(bundle.versions.map(\.versionHash) == models.compactMap { $0?.versionHash })
            if let expected = manifest.expectWarnings {
                for (version, count) in expected {
                    #expect(bundle.warnings(forVersion: version).count == count,
                            "warnings of '\(version)': \(bundle.warnings(forVersion: version))")
                }
            }
        } catch {
            #expect(error.problems.count == expectedTotal, "\(error)")
        }

        let refused = Set(manifest.expectMigrationRefused ?? [])
        for (from, to) in zip(names.indices, names.indices.dropFirst()) {
            guard let old = models[from], let new = models[to] else { continue }
            let step = "\(names[from]) -> \(names[to])"
            try CorpusMigrationCheck(bundle: name, bundleURL: url, manifest: manifest, old: old, new: new,
                                     expectRefused: refused.contains(step)).run()
        }
        for step in refused where !zip(names, names.dropFirst()).contains(where: { "\($0) -> \($1)" == step }) {
            Issue.record("\(name).json expects '\(step)' refused, which is no pair of consecutive versions (\(names))")
        }
    }
}

/// A corpus bundle's manifest, `Corpus/<Name>.json`. Every key is optional; unknown keys are ignored.
struct CorpusManifest: Decodable, Sendable {
    /// Versions that fail to load, with how many problems each reports.
    var expectLoadProblems: [String: Int]?
    /// Steps (`"Model 2 -> Model 3"`) whose migration is refused, leaving the store as it was.
    var expectMigrationRefused: [String]?
    /// Pass the opt-in that acknowledges renames inference cannot tell from a removal and an addition.
    var acknowledgeRenames: Bool?
    /// `.xcmappingmodel` files beside the bundle cover some steps; values are checked only where an
    /// attribute keeps its name and type, since a mapping may move data elsewhere on purpose.
    var mappingModels: Bool?
    /// Warnings each version loads with (`XcodeModelBundle.warnings(forVersion:)`), checked when given.
    var expectWarnings: [String: Int]?
    /// What the bundle exercises, for readers.
    var note: String?

    static let empty = CorpusManifest()
}

/// Finding the corpus and the options its stores migrate with.
enum XcodeCorpus {
    /// The `Fixtures/Corpus` directory of the test bundle.
    static func directory() throws -> URL {
        try XcodeFixtures.url("Corpus")
    }

    /// The names of the corpus's bundles (without `.xcdatamodeld`), sorted.
    static func bundleNames() throws -> [String] {
        let entries = try FileManager.default.contentsOfDirectory(atPath: try directory().path)
        return entries.filter { $0.hasSuffix(".xcdatamodeld") }.map { String($0.dropLast(".xcdatamodeld".count)) }.sorted()
    }

    static func bundleURL(_ name: String) throws -> URL {
        try directory().appendingPathComponent("\(name).xcdatamodeld", isDirectory: true)
    }

    /// The bundle's manifest, or an empty one when it has none.
    static func manifest(_ name: String) throws -> CorpusManifest {
        let url = try directory().appendingPathComponent("\(name).json")
        guard FileManager.default.fileExists(atPath: url.path) else { return .empty }
        return try JSONDecoder().decode(CorpusManifest.self, from: Data(contentsOf: url))
    }

    // MARK: Hook for the migrate helper's options

    /// The migration options a store of the bundle at `bundleURL` is opened with: `"acknowledgeRenames"`
    /// allows unannounced renames as removals (`MigrationOptions.allowsUnannouncedRenames`);
    /// `"mappingModels"` loads every `.xcmappingmodel` beside the bundle that names its versions.
    static func migrationOptions(forBundle bundleURL: URL, manifest: CorpusManifest) throws -> MigrationOptions {
        var options = MigrationOptions()
        options.allowsUnannouncedRenames = manifest.acknowledgeRenames == true
        guard manifest.mappingModels == true else { return options }
        options.mappingModels = try MappingModel.all(besideBundleAt: bundleURL)
        #expect(!options.mappingModels.isEmpty, "\(bundleURL.lastPathComponent): the manifest says mapping models, and none beside it names its versions")
        return options
    }
}

/// One step of a corpus bundle: a store written under `old`, filled with generated objects, migrated to
/// `new`, reopened and compared.
struct CorpusMigrationCheck {
    let bundle: String
    let bundleURL: URL
    let manifest: CorpusManifest
    let old: ManagedObjectModel
    let new: ManagedObjectModel
    let expectRefused: Bool

    private var step: String { "\(bundle): \(old.versionIdentifier ?? "?") -> \(new.versionIdentifier ?? "?")" }

    func run() throws {
        let store = MigrationHarness("corpus\(bundle)")
        defer { try? FileManager.default.removeItem(at: store.url) }
        do {
            try store.write(old) { context in try CorpusFiller(model: old, context: context).fill() }
        } catch {
            Issue.record("\(step): filling a store of the older version failed: \(error)")
            return
        }
        let before = try store.open(old) { _, context in try CorpusSnapshot(model: old, context: context) }
        #expect(before.totalObjects > 0, "\(step): the older version holds no objects to migrate")

        var options = PersistentStore.Options()
        options.migration = try XcodeCorpus.migrationOptions(forBundle: bundleURL, manifest: manifest)
        do {
            try store.open(new, options: options) { persistentStore, _ in
                // Versions that differ only in what storage ignores (a warning's attribute) need no migration.
                let expectsMigration = old.versionHash != new.versionHash
                #expect((persistentStore.migrationReport != nil) == expectsMigration,
                        "\(step): migrated: \(persistentStore.migrationReport != nil), expected: \(expectsMigration)")
            }
            if expectRefused { Issue.record("\(step): migrated; the manifest expects it refused") }
        } catch {
            guard expectRefused else {
                Issue.record("\(step): migration failed: \(error)")
                return
            }
            // Refused: the store still opens under the older version, untouched.
            let after = try store.open(old) { _, context in try CorpusSnapshot(model: old, context: context) }
            #expect(after == before, "\(step): a refused migration changed the store")
            return
        }
        let after = try store.open(new) { persistentStore, context in
            #expect(persistentStore.migrationReport == nil, "\(step): the reopened store migrated again")
            return try CorpusSnapshot(model: new, context: context)
        }
        compare(before, after)
    }

    /// Every entity of the newer version that has a source in the older one holds as many objects, and the
    /// properties it keeps (same kind and type, same optionality) hold the same values, object by object.
    /// Objects have no identity across a migration here, so each entity's objects compare as a sorted list
    /// of their kept values; generated values are distinct per object, so the lists pin each object.
    private func compare(_ before: CorpusSnapshot, _ after: CorpusSnapshot) {
        for entity in new.entities where !entity.isAbstract {
            guard let source = sourceEntity(of: entity) else { continue }
            let oldObjects = before.objects[source.name] ?? []
            let newObjects = after.objects[entity.name] ?? []
            #expect(newObjects.count == oldObjects.count,
                    "\(step): \(entity.name) holds \(newObjects.count) objects; \(source.name) held \(oldObjects.count)")
            if manifest.mappingModels == true && source.name != entity.name { continue }
            var kept: [(new: String, old: String)] = []
            for property in entity.properties where !property.isTransient {
                guard let origin = sourceProperty(of: property, in: source), keeps(property, origin) else { continue }
                if manifest.mappingModels == true && origin.name != property.name { continue }
                kept.append((property.name, origin.name))
            }
            // An attribute the step adds with a default value holds that default in every migrated object.
            for attribute in entity.attributes where !attribute.isTransient && attribute.defaultValue != nil {
                guard sourceProperty(of: .attribute(attribute), in: source) == nil else { continue }
                let expected = CorpusSnapshot.text(attribute.defaultValue)
                let values = newObjects.map { $0[attribute.name] ?? nil }
                #expect(values.allSatisfy { $0 == expected },
                        "\(step): added attribute \(entity.name).\(attribute.name) should hold its default \(expected ?? "nil"): \(values)")
            }
            let oldRows = oldObjects.map { row in kept.map { "\($0.new)=\(row[$0.old] ?? "∅")" }.joined(separator: ", ") }.sorted()
            let newRows = newObjects.map { row in kept.map { "\($0.new)=\(row[$0.new] ?? "∅")" }.joined(separator: ", ") }.sorted()
            #expect(newRows == oldRows, "\(step): \(entity.name) (from \(source.name)) lost values")
        }
    }

    /// The older entity a newer one comes from, as inference finds it: by renaming identifier (naming the
    /// older entity, or carried by it too), then by name.
    private func sourceEntity(of entity: EntityDescription) -> EntityDescription? {
        if let identifier = entity.renamingIdentifier {
            if let found = old.entity(named: identifier) ?? old.entities.first(where: { $0.renamingIdentifier == identifier }) {
                return found
            }
        }
        return old.entity(named: entity.name)
    }

    private func sourceProperty(of property: PropertyDescription, in entity: EntityDescription) -> PropertyDescription? {
        var candidates: [PropertyDescription?] = []
        if let identifier = property.renamingIdentifier {
            candidates.append(entity.propertiesByName[identifier])
            candidates.append(entity.properties.first { $0.renamingIdentifier == identifier })
        }
        candidates.append(entity.propertiesByName[property.name])
        return candidates.lazy.compactMap { $0 }.first { !$0.isTransient }
    }

    /// Whether a property's values should survive the step unchanged.
    private func keeps(_ property: PropertyDescription, _ origin: PropertyDescription) -> Bool {
        guard property.isOptional == origin.isOptional else { return false }
        if let a = property.attribute, let b = origin.attribute { return a.type == b.type }
        if let a = property.relationship, let b = origin.relationship {
            return a.isToMany == b.isToMany && a.isOrdered == b.isOrdered
        }
        return false
    }
}

/// What a store holds, entity by entity (exact entity, not counting sub-entities): each object as its
/// stored properties' values in a comparable text form (relationships as a member count).
struct CorpusSnapshot: Equatable {
    var objects: [String: [[String: String]]] = [:]

    var totalObjects: Int { objects.values.reduce(0) { $0 + $1.count } }

    init(model: ManagedObjectModel, context: ManagedObjectContext) throws {
        for entity in model.entities where !entity.isAbstract {
            var request = FetchRequest<ManagedObject>(entityName: entity.name)
            request.includesSubentities = false
            var rows: [[String: String]] = []
            for object in try context.fetch(request) {
                var row: [String: String] = [:]
                for property in entity.properties where !property.isTransient {
                    let value = try object.value(forKey: property.name)
                    row[property.name] = property.relationship != nil ? Self.count(value) : Self.text(value)
                }
                rows.append(row)
            }
            objects[entity.name] = rows
        }
    }

    private static func count(_ value: Any?) -> String? {
        switch value {
        case nil: return nil
        case let set as Set<ManagedObject>: return "\(set.count) objects"
        case let array as [ManagedObject]: return "\(array.count) objects"
        case is ManagedObject: return "1 object"
        case let other?: return "unexpected \(type(of: other))"
        }
    }

    /// A value as text that is equal exactly when the values are: data in hex, dates in seconds.
    static func text(_ value: Any?) -> String? {
        switch ManagedValueCoercion.unwrap(value) {
        case nil: return nil
        case let data as Data: return "0x" + data.map { String(format: "%02x", $0) }.joined()
        case let date as Date: return "date(\(date.timeIntervalSinceReferenceDate))"
        case let url as URL: return url.absoluteString
        case let other?: return "\(type(of: other))(\(String(describing: other)))"
        }
    }
}

/// Fills a store with a few objects of every concrete entity: each stored attribute given a value of its
/// type that its rules accept (optional ones left nil on the last object), each relationship linked to
/// objects of its destination.
struct CorpusFiller {
    static let objectsPerEntity = 3

    let model: ManagedObjectModel
    let context: ManagedObjectContext

    func fill() throws {
        var serial = 0
        var objects: [String: [ManagedObject]] = [:]
        for entity in model.entities where !entity.isAbstract {
            for index in 0..<Self.objectsPerEntity {
                let object = ManagedObject(entity: entity, insertInto: context)
                // A derived attribute is computed at save and refuses values; a transient one is not stored.
                for attribute in entity.attributes where !attribute.isTransient && attribute.derivationExpression == nil {
                    serial += 1
                    if attribute.isOptional && index == Self.objectsPerEntity - 1 { continue }
                    let candidates = CorpusValues.candidates(for: attribute.type, rules: attribute.validationRules, serial: serial)
                    if let value = candidates.first(where: { attribute.validate($0).isEmpty }) {
                        try object.setValue(value, forKey: attribute.name)
                    } else if !attribute.isOptional && attribute.defaultValue == nil {
                        Issue.record("no generated value of \(attribute.type) satisfies \(entity.name).\(attribute.name)'s rules \(attribute.validationRules)")
                    }
                }
                objects[entity.name, default: []].append(object)
            }
        }
        for entity in model.entities {
            for property in entity.declaredProperties where !property.isTransient {
                guard let relationship = property.relationship, isSetter(relationship, in: entity) else { continue }
                let sources = pool(of: entity, in: objects)
                guard let destination = model.entity(named: relationship.destinationEntityName) else { continue }
                let targets = pool(of: destination, in: objects)
                guard !targets.isEmpty else { continue }
                let inverse = inverse(of: relationship)
                for (k, source) in sources.enumerated() {
                    if relationship.isToMany {
                        let wanted = min(max(relationship.minCount, 2), relationship.maxCount ?? Int.max, targets.count)
                        let members = (0..<wanted).map { targets[(k + $0) % targets.count] }
                        try source.setValue(relationship.isOrdered ? members as Any : Set(members) as Any, forKey: relationship.name)
                    } else {
                        // A one-to-one target taken twice would be stolen from its first source.
                        if inverse?.isToMany == false && k >= targets.count { continue }
                        try source.setValue(targets[k % targets.count], forKey: relationship.name)
                    }
                }
            }
        }
    }

    /// Every generated object of `entity` or a sub-entity.
    private func pool(of entity: EntityDescription, in objects: [String: [ManagedObject]]) -> [ManagedObject] {
        model.entities.filter { $0.isKind(of: entity) }.sorted { $0.name < $1.name }.flatMap { objects[$0.name] ?? [] }
    }

    private func inverse(of relationship: RelationshipDescription) -> RelationshipDescription? {
        // Optional either way, so this reads the same if inverses become optional.
        let name: String? = relationship.inverseName
        guard let name, !name.isEmpty else { return nil }
        return model.entity(named: relationship.destinationEntityName)?.relationshipsByName[name]
    }

    /// Whether this side of a relationship pair is the one set (the other follows as the inverse): the
    /// to-one side of a one-to-many, otherwise the side whose entity and name sort first.
    private func isSetter(_ relationship: RelationshipDescription, in entity: EntityDescription) -> Bool {
        guard let inverse = inverse(of: relationship) else { return true }
        if relationship.isToMany != inverse.isToMany { return !relationship.isToMany }
        let mine = [entity.name, relationship.name]
        let theirs = [inverse.entityName ?? relationship.destinationEntityName, inverse.name]
        return mine.lexicographicallyPrecedes(theirs) || mine == theirs
    }
}

/// Candidate values of an attribute type, distinct per `serial`, shaped by the attribute's rules where
/// that is easy (ranges, lengths); the filler takes the first one the attribute validates.
enum CorpusValues {
    static func candidates(for type: AttributeType, rules: [ValidationRule], serial: Int) -> [Any] {
        let s = Int64(serial)
        var low: Double?
        var high: Double?
        var lowDate: Date?
        var highDate: Date?
        var minLength: Int?
        var maxLength: Int?
        for rule in rules {
            switch rule {
            case .range(let min, let max):
                for (bound, isMin) in [(min, true), (max, false)] {
                    switch bound {
                    case .integer(let i)?: if isMin { low = Double(i) } else { high = Double(i) }
                    case .double(let d)?: if isMin { low = d } else { high = d }
                    case .decimal(let d)?:
                        let value = NSDecimalNumber(decimal: d).doubleValue
                        if isMin { low = value } else { high = value }
                    case .date(let d)?: if isMin { lowDate = d } else { highDate = d }
                    case nil: break
                    }
                }
            case .length(let min, let max):
                minLength = min
                maxLength = max
            default:
                break
            }
        }
        // A whole number within the range, different for each serial where the range allows.
        func whole() -> [Int64] {
            let lo = low.map { Int64($0.rounded(.up)) }
            let hi = high.map { Int64($0.rounded(.down)) }
            var result: [Int64] = []
            switch (lo, hi) {
            case let (lo?, hi?) where hi >= lo: result.append(lo + s % (hi - lo + 1))
            case let (lo?, nil): result.append(lo + s)
            case let (nil, hi?): result.append(hi - s)
            default: result.append(s)
            }
            return result + [lo, hi, 0, 1].compactMap { $0 }
        }
        // Padded with letters after, or zeros before (for digit patterns), to the minimum length.
        func text(_ base: String) -> [String] {
            var padded = [base]
            if let minLength, base.count < minLength {
                let missing = minLength - base.count
                padded = [base + String(repeating: "x", count: missing), String(repeating: "0", count: missing) + base]
            }
            guard let maxLength else { return padded }
            return padded.map { $0.count > maxLength ? String($0.suffix(maxLength)) : $0 }
        }
        switch type {
        case .integer16:
            return whole().compactMap { Int16(exactly: $0) }
        case .integer32:
            return whole().compactMap { Int32(exactly: $0) }
        case .integer64:
            return whole()
        case .double:
            return whole().flatMap { [Double($0) + 0.25, Double($0)] }
        case .float:
            return whole().flatMap { [Float($0) + 0.25, Float($0)] }
        case .decimal:
            return whole().flatMap { [Decimal($0) + Decimal(string: "0.25")!, Decimal($0)] }
        case .boolean:
            return [serial % 2 == 0, serial % 2 != 0]
        case .string:
            return ["v\(serial)", "abc\(serial)", "\(serial)", "user\(serial)@example.com", "https://example.com/\(serial)",
                    "ABC\(serial)", "a", "1", ""].flatMap(text)
        case .date:
            var seconds = 86_400 * Double(serial)
            if let lowDate { seconds = lowDate.timeIntervalSinceReferenceDate + Double(serial) }
            if let highDate, seconds > highDate.timeIntervalSinceReferenceDate {
                seconds = highDate.timeIntervalSinceReferenceDate - Double(serial)
            }
            return [Date(timeIntervalSinceReferenceDate: seconds), lowDate, highDate].compactMap { $0 }
        case .binaryData:
            var bytes = [UInt8(serial & 0xff), UInt8((serial >> 8) & 0xff), 0x2a]
            if let minLength, bytes.count < minLength { bytes += Array(repeating: 0x78, count: minLength - bytes.count) }
            if let maxLength, bytes.count > maxLength { bytes = Array(bytes.prefix(maxLength)) }
            return [Data(bytes)]
        case .uuid:
            return [UUID(uuidString: String(format: "00000000-0000-4000-8000-%012x", serial)) ?? UUID()]
        case .uri:
            return [URL(string: "https://example.com/item/\(serial)")!]
        default:
            // Transformable (and any type added later): whichever of these the type's codec takes.
            return ["text\(serial)", ["item\(serial)"], ["key": "value\(serial)"], Data([UInt8(serial & 0xff)]),
                    serial, Double(serial) + 0.5, Date(timeIntervalSinceReferenceDate: Double(serial)),
                    URL(string: "https://example.com/\(serial)")!, UUID()]
        }
    }
}
