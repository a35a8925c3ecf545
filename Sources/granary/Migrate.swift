import ArgumentParser
import Foundation
import Granary

struct Migrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show what a model changes in a store and migrate the store to it.",
        discussion: """
            The model is an Xcode model file: a .xcdatamodeld bundle (its current version, or --version; \
            a store written by any earlier version of the bundle is migrated through each version in turn) \
            or a single .xcdatamodel. A store written by a version the file does not hold is migrated from \
            the model the store recorded. The migration is all or nothing: interrupted, the store keeps its \
            old version.
            """)

    @OptionGroup var store: StoreArgument

    @Option(name: .long, help: "The model file (.xcdatamodeld or .xcdatamodel).")
    var model: String

    @Option(name: .long, help: "The version of a .xcdatamodeld to migrate to (default: its current version).")
    var version: String?

    @Flag(name: .long, help: "Only show the changes; write nothing.")
    var dryRun = false

    @Option(name: .customLong("mapping-model"), help: "A mapping model (.xcmappingmodel) to use for the versions it covers.")
    var mappingModels: [String] = []

    @Option(name: .customLong("acknowledge-removal"), help: "A removal meant as such (Entity or Entity.property), not a rename.")
    var acknowledgedRemovals: [String] = []

    func run() throws {
        try reportingFailures {
            let (target, versions) = try loadModel()
            let url = URL(fileURLWithPath: store.path)
            _ = try store.open(readOnly: true).close()  // the shared checks: exists, is a store, readable
            var options = MigrationOptions(versions: versions, acknowledgedRemovals: Set(acknowledgedRemovals), progress: Self.show)
            for path in mappingModels {
                do { options.mappingModels.append(try MappingModel(contentsOf: URL(fileURLWithPath: path))) } catch {
                    throw Failure("\(error)")
                }
            }
            let migrator = StoreMigrator(model: target, options: options)
            let plan: StoreMigrator.Plan
            do { plan = try migrator.plan(forStoreAt: url) } catch { throw Failure("cannot plan the migration of \(store.path): \(error)") }
            guard plan.isNeeded else {
                print("\(store.path) is already at model \(label(target)); nothing to do")
                return
            }
            print("\(store.path): model \(plan.path.first ?? "?") → \(plan.path.last ?? "?")")
            for (i, changes) in plan.changes.enumerated() {
                print("step \(i + 1): \(plan.path[i]) → \(plan.path[i + 1])")
                for change in changes { print("  \(change.isInferable ? (change.dataRequirement == nil ? "  " : "? ") : "✗ ")\(change)") }
                if changes.isEmpty { print("    (no change to stored data)") }
            }
            if !plan.problems.isEmpty {
                throw Failure("\(plan.problems.reduce(0) { $0 + $1.changes.count }) change(s) cannot be inferred (marked ✗); the store was not changed")
            }
            if dryRun {
                print("dry run: nothing written")
                return
            }
            let start = Date()
            let report: MigrationReport?
            do { report = try migrator.migrateStore(at: url) } catch { throw Failure("migration failed, the store keeps its old version: \(error)") }
            let seconds = Date().timeIntervalSince(start)
            print("migrated: \(report?.rowsWritten ?? 0) objects written, \(report?.rowsDropped ?? 0) dropped, in \(String(format: "%.2f", seconds)) s")
        }
    }

    /// The target model and the versions before it.
    private func loadModel() throws -> (ManagedObjectModel, [ManagedObjectModel]) {
        let url = URL(fileURLWithPath: model)
        do {
            if url.pathExtension == "xcdatamodeld" {
                let bundle = try XcodeModelBundle(contentsOf: url)
                let name = version ?? bundle.currentVersionName
                guard let index = bundle.versionNames.firstIndex(of: name) else {
                    throw Failure("\(model) has no version named '\(name)'; it has \(bundle.versionNames.joined(separator: ", "))")
                }
                return (bundle.versions[index], Array(bundle.versions[..<index]))
            }
            if version != nil { throw Failure("--version needs a .xcdatamodeld bundle, and \(model) is a single model") }
            return (try ManagedObjectModel(contentsOf: url), [])
        } catch let error as XcodeModelError {
            throw Failure("cannot load the model: \(error)")
        }
    }

    private func label(_ model: ManagedObjectModel) -> String {
        model.versionIdentifier ?? String(model.versionHash.prefix(12))
    }

    /// Progress on standard error, one line per table and every 16,384 rows.
    @Sendable private static func show(_ progress: MigrationProgress) {
        let line: String
        switch progress.phase {
        case .mapping:
            guard let entity = progress.entity else { return }
            line = "step \(progress.step)/\(progress.stepCount): \(entity) (\(progress.entitiesCompleted + 1)/\(progress.entityCount)), \(progress.rowsCompleted)/\(progress.rowCount) rows"
        case .writing:
            line = "writing the migrated store (\(progress.rowsCompleted) objects)"
        case .finished:
            line = "switched to the migrated store"
        }
        FileHandle.standardError.write(Data("\(line)\n".utf8))
    }
}
