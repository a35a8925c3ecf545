import ArgumentParser
import Foundation
import Granary

/// `granary model …`: commands about model files rather than stores.
struct ModelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model",
        abstract: "Check Xcode model files.",
        subcommands: [ModelCheck.self])
}

struct ModelCheck: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Show whether each version of a model loads and whether a store would migrate between them.",
        discussion: """
            For each version of a .xcdatamodeld bundle (or a single .xcdatamodel), prints whether it loads, \
            with every problem and warning; for each pair of consecutive versions, whether a store of the \
            older one would migrate to the newer one: by inference, by a mapping model, only if its objects \
            satisfy some new constraints (an empty store always does), or not at all and why. Mapping models \
            (.xcmappingmodel) beside the bundle are used, as are those given with --mapping-model; the \
            migration policies they name are assumed to be registered by the app. Exits with status 1 when a \
            version does not load or a pair would be refused.
            """)

    @Argument(help: "The model file (.xcdatamodeld or .xcdatamodel).")
    var model: String

    @Option(name: .customLong("mapping-model"), help: "A mapping model (.xcmappingmodel) to use besides those found beside the model.")
    var mappingModels: [String] = []

    @Option(name: .customLong("acknowledge-removal"), help: "A removal meant as such (Entity or Entity.property), not a rename.")
    var acknowledgedRemovals: [String] = []

    @Flag(name: .customLong("allow-unannounced-renames"), help: "Treat every possible rename without renaming identifier as a removal plus an addition, as Core Data does.")
    var allowsUnannouncedRenames = false

    func run() throws {
        try reportingFailures {
            let url = URL(fileURLWithPath: model)
            guard FileManager.default.fileExists(atPath: url.path) else { throw Failure("no model at \(model): the path does not exist") }
            var failed = false
            var options = MigrationOptions(acknowledgedRemovals: Set(acknowledgedRemovals), allowsUnannouncedRenames: allowsUnannouncedRenames)
            let versionNames = Set(((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? [url.lastPathComponent])
                .filter { $0.hasSuffix(".xcdatamodel") }.map { ($0 as NSString).deletingPathExtension })
            for (path, given) in mappingModelPaths(beside: url).map({ ($0, false) }) + mappingModels.map({ ($0, true) }) {
                do {
                    let mapping = try MappingModel(contentsOf: URL(fileURLWithPath: path))
                    // One found beside the model is for it only if it names its versions.
                    let names = [mapping.sourceVersionName, mapping.destinationVersionName].compactMap { $0 }
                    if !given && !names.allSatisfy(versionNames.contains) { continue }
                    options.mappingModels.append(mapping)
                    for name in mapping.entityMappings.compactMap(\.migrationPolicyClassName) {
                        options.migrationPolicies[name] = EntityMigrationPolicy()
                    }
                    let span = "\(mapping.sourceVersionName ?? "any version") → \(mapping.destinationVersionName ?? "any version")"
                    print("mapping model \(path): \(span), \(mapping.entityMappings.count) entity mapping(s)")
                } catch {
                    failed = true
                    print("mapping model \(path): ✗ \(error)")
                }
            }
            let check: ModelBundleCheck
            do { check = try ModelBundleCheck(contentsOf: url, options: options) } catch { throw Failure("cannot read the model: \(error)") }
            print("\(model): \(check.versions.count) version(s), current \(check.versions.first { $0.isCurrent }?.name ?? "?")")
            for version in check.versions {
                var line = "version \(version.name)\(version.isCurrent ? " (current)" : ""): "
                line += version.loads ? "loads" : "does not load (\(version.problems.count) problem(s))"
                if !version.warnings.isEmpty { line += ", \(version.warnings.count) warning(s)" }
                print(line)
                for problem in version.problems { print("  ✗ \(problem)") }
                for warning in version.warnings { print("  ! \(warning)") }
            }
            for step in check.steps {
                print("\(step.from) → \(step.to): \(step.verdict)".replacingOccurrences(of: "\n  - ", with: "\n  \(step.verdict.isRefusal ? "✗" : "?") "))
            }
            let policies = options.migrationPolicies.keys.sorted()
            if !policies.isEmpty {
                print("note: the app must register these migration policies (MigrationOptions.migrationPolicies): \(policies.joined(separator: ", "))")
            }
            if failed || check.hasRefusals {
                let versions = check.versions.filter { !$0.loads }.count
                let steps = check.steps.filter { $0.verdict.isRefusal }.count
                throw Failure("\(versions) version(s) do not load, \(steps) pair(s) of versions would not migrate\(failed ? ", a mapping model cannot be read" : "")")
            }
        }
    }

    /// The `.xcmappingmodel` packages in the directory that holds the model, as an app bundle would ship
    /// them beside it.
    private func mappingModelPaths(beside url: URL) -> [String] {
        let folder = url.deletingLastPathComponent()
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return entries.filter { $0.hasSuffix(".xcmappingmodel") }.sorted().map { folder.appendingPathComponent($0).path }
    }
}
