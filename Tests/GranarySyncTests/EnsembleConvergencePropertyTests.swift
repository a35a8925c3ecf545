import Foundation
import Granary
import PropertyBased
@testable import GranarySync
import Testing

/// Three devices, each its own durable store, coordinator and ensemble, make random inserts (with global
/// identifiers drawn from a small pool, so objects collide on purpose), edits, deletes and relationship
/// changes, attachments inline and as data files, merging in random order, relaunching and removing the
/// cloud's data files now and then; after final rounds of merges every
/// device holds the same graph, with no duplicated identifier, and it is the graph the reference model
/// of the merge rules computes from the events in the cloud.
@Suite struct EnsembleConvergencePropertyTests {
    static let notes = ["n1", "n2", "n3", "n4", "n5"]
    static let folders = ["f1", "f2"]
    static let tags = ["t1", "t2", "t3"]

    /// One random step on `device`.
    static func step(_ g: inout SplitMix, on device: SyncTestDevice) async throws -> String {
        switch Int.random(in: 0..<18, using: &g) {
        case 0..<3:
            let id = notes.randomElement(using: &g)!
            let text = "text \(Int.random(in: 0..<100, using: &g))"
            // A note may exist here already: then it is an edit, else an insert (which may collide
            // with another device's insert of the same identifier).
            try device.perform { context in
                let note = try device.note(id, in: context) ?? {
                    let note = SyncNote(context: context)
                    note.uniqueIdentifier = id
                    return note
                }()
                note.text = text
                try context.save()
            }
            return "\(device.name): upsert \(id) text=\(text)"
        case 3..<5:
            let id = notes.randomElement(using: &g)!
            let stars = Int.random(in: 0..<5, using: &g)
            try device.perform { context in
                guard let note = try device.note(id, in: context) else { return }
                note.stars = stars
                try context.save()
            }
            return "\(device.name): \(id).stars=\(stars)"
        case 5:
            let id = notes.randomElement(using: &g)!
            try device.perform { context in
                guard let note = try device.note(id, in: context) else { return }
                context.delete(note)
                try context.save()
            }
            return "\(device.name): delete \(id)"
        case 6..<8:
            let id = notes.randomElement(using: &g)!
            let folder = Bool.random(using: &g) ? folders.randomElement(using: &g)! : nil
            try device.perform { context in
                guard let note = try device.note(id, in: context) else { return }
                note.folder = try folder.map { try device.folder($0, in: context) }
                try context.save()
            }
            return "\(device.name): \(id).folder=\(folder ?? "nil")"
        case 8..<10:
            let id = notes.randomElement(using: &g)!
            let tag = tags.randomElement(using: &g)!
            let adding = Bool.random(using: &g)
            try device.perform { context in
                guard let note = try device.note(id, in: context) else { return }
                if adding {
                    note.tags.insert(try device.tag(tag, in: context))
                } else {
                    note.tags = note.tags.filter { $0.uniqueIdentifier != tag }
                }
                try context.save()
            }
            return "\(device.name): \(id).tags \(adding ? "+" : "-")\(tag)"
        case 10:
            try device.relaunch()
            return "\(device.name): relaunch"
        case 11..<13:
            // Inline or a data file (M15), or none.
            let id = notes.randomElement(using: &g)!
            let size = [0, 100, SyncConstants.inlineDataLimit, SyncConstants.inlineDataLimit + 1, 30_000].randomElement(using: &g)!
            let attachment = size == 0 ? nil : g.bytes(size)
            try device.perform { context in
                guard let note = try device.note(id, in: context) else { return }
                try note.setValue(attachment, forKey: "attachment")
                try context.save()
            }
            return "\(device.name): \(id).attachment=\(size) bytes"
        case 13:
            // Ensembles' random histories delete the cloud's data files; their writers upload them again.
            let cloud = try #require(device.cloud as? MemoryFileSystem)
            guard (try? await cloud.fileExists(atPath: "Notes/data"))?.isDirectory == true else { return "\(device.name): no data/" }
            if Bool.random(using: &g) {
                try await cloud.removeItem(atPath: "Notes/data")
                return "\(device.name): removed the cloud's data/ directory"
            }
            var removed = 0
            for case let .file(name, _) in try await cloud.contentsOfDirectory(atPath: "Notes/data") {
                try await cloud.removeItem(atPath: "Notes/data/" + name)
                removed += 1
            }
            return "\(device.name): removed \(removed) data files from the cloud"
        default:
            try await device.ensemble.merge()
            return "\(device.name): merge"
        }
    }

    static func check(seed: Int, steps: Int) async throws {
        var g = SplitMix(seed: seed)
        let root = try makeScratchDirectory()
        defer { removeScratch(root) }
        let cloud = MemoryFileSystem()
        let model = try syncNotesModel(attachments: true)
        let devices = try ["a", "b", "c"].map { try SyncTestDevice($0, in: root, model: model, cloud: cloud) }
        for device in devices { try await device.ensemble.leech() }
        var log: [String] = []
        for _ in 0..<steps {
            let device = devices.randomElement(using: &g)!
            log.append(try await step(&g, on: device))
        }
        try await mergeAll(devices, rounds: 3)
        let graphs = try devices.map { try $0.graph() }
        let history = log.suffix(60).joined(separator: "\n")
        for (device, graph) in zip(devices, graphs) {
            #expect(graph.duplicates.isEmpty, "seed \(seed): \(device.name) has duplicates \(graph.duplicates)\n\(history)")
        }
        #expect(graphs[0] == graphs[1], "seed \(seed): a and b differ\na:\n\(graphs[0])\nb:\n\(graphs[1])\n\(history)")
        #expect(graphs[0] == graphs[2], "seed \(seed): a and c differ\na:\n\(graphs[0])\nc:\n\(graphs[2])\n\(history)")

        // And the graph is the one the merge rules give for the events in the cloud, evaluated by the
        // reference model (slow, written from the rules, sharing no code with the ledger).
        let baselines = try await cloud.contentsOfDirectory(atPath: "Notes/baselines")
        guard baselines.isEmpty else { return }     // a rebase removed events; the model needs them all
        let events = try await Self.cloudEvents(cloud, scratch: root)
        let schema = LedgerSchema(model: model, configuration: EnsembleConfiguration(globalIdentifierAttribute: "uniqueIdentifier"))
        let reference = Self.graph(of: ReferenceMergeModel(schema: schema).projection(of: events))
        #expect(graphs[0].nodes == reference, "seed \(seed): the stores differ from the reference model\nstore:\n\(graphs[0])\n\(history)")
    }

    /// Every event in the cloud, read from its files.
    static func cloudEvents(_ cloud: MemoryFileSystem, scratch: URL) async throws -> [Event] {
        var parts: [String: [(name: CloudFileName, bytes: Data)]] = [:]
        for case let .file(name, _) in try await cloud.contentsOfDirectory(atPath: "Notes/events") {
            let parsed = try CloudFileName.parse(name)
            guard case let .event(_, store, revision, _) = parsed else { continue }
            let local = scratch.appendingPathComponent("event-\(UUID().uuidString)")
            try await cloud.downloadFile(atPath: "Notes/events/" + name, toLocalFile: local)
            parts["\(store)/\(revision)", default: []].append((parsed, try Data(contentsOf: local)))
        }
        return try parts.values.map { try EventFileParts.event(from: $0) }
    }

    /// A projection in the form `SyncGraph` reads a store: values as text, relationships as sorted lists.
    static func graph(of projection: Projection) -> [String: SyncGraph.Node] {
        func id(_ key: ObjectKey) -> String { "\(key.entity)/\(key.globalID)" }
        func text(_ value: SyncValue?) -> String {
            switch value {
            case let .string(string)?: string
            case let .integer(integer)?: "\(integer)"
            case let .data(bytes)?: "data:" + LargeValues.sha256(bytes)
            case let .dataFile(.data(sha256, _))?: "data:" + sha256
            case let other?: "\(other)"
            case nil: "nil"
            }
        }
        var nodes: [String: SyncGraph.Node] = [:]
        for (key, object) in projection.objects {
            var node = SyncGraph.Node()
            for (name, value) in object.attributes { node.attributes[name] = text(value) }
            for (name, target) in object.toOnes { node.relationships[name] = target.flatMap { $0 }.map { [id($0)] } ?? [] }
            for (name, members) in object.toManys { node.relationships[name] = members.map(id).sorted() }
            nodes[id(key)] = node
        }
        return nodes
    }

    @Test func threeDevicesConvergeAfterRandomWork() async {
        await propertyCheck(count: 25, input: Gen.int(in: 0...Int.max)) { seed in
            // propertyCheck drops what its body throws (`try?` around it): an error must be an issue.
            do { try await Self.check(seed: seed, steps: 40) } catch { Issue.record("seed \(seed): \(error)") }
        }
    }
}
