import Foundation

/// What a versioned model (an `.xcdatamodeld` bundle) would do to the stores of an app: whether each
/// version loads, with its problems and warnings, and for each pair of consecutive versions whether a
/// store would migrate, how, and if not why, without any store at hand.
///
/// `granary model check` prints it. Use it in a test of an app's model to catch, before shipping, a
/// version that does not load or a change that no store could migrate.
///
/// ```swift
/// let check = try ModelBundleCheck(contentsOf: modelURL, options: MigrationOptions(mappingModels: mappings))
/// #expect(!check.hasRefusals, "\(check.steps.map(\.verdict))")
/// ```
public struct ModelBundleCheck: Sendable {
    /// One version of the bundle.
    public struct Version: Sendable {
        /// Its name ("Model 2").
        public var name: String
        /// Whether it is the version `.xccurrentversion` names.
        public var isCurrent: Bool
        /// The model, when the version loads.
        public var model: ManagedObjectModel?
        /// Every reason it does not load; empty when it loads.
        public var problems: [XcodeModelError]
        /// What Core Data would load with a warning.
        public var warnings: [XcodeModelWarning]
        public var loads: Bool { model != nil }
    }

    /// What happens to a store written by one version when opened with the next.
    public enum Verdict: Sendable, CustomStringConvertible {
        /// Both versions store the same way: nothing to migrate.
        case noMigrationNeeded
        /// Lightweight migration carries every change out, whatever the store holds.
        case migratesByInference
        /// The mapping model at this path covers the pair and fits it.
        case migratesByMappingModel(path: String)
        /// Inference carries the changes out if the stored objects satisfy these changes'
        /// `dataRequirement`s (an empty store always does); objects that do not are listed by the
        /// migration, which then changes nothing.
        case needsDataCheck([ModelChange])
        /// No store of the older version can migrate: each reason (unannounced renames included).
        case refused([String])
        /// One of the two versions does not load.
        case notChecked(reason: String)

        /// Whether a store may fail to migrate: refused or not checked.
        public var isRefusal: Bool {
            switch self {
            case .refused, .notChecked: return true
            default: return false
            }
        }

        public var description: String {
            switch self {
            case .noMigrationNeeded: return "no migration needed (same storage)"
            case .migratesByInference: return "migrates by inference"
            case .migratesByMappingModel(let path): return "migrates by the mapping model \(path)"
            case .needsDataCheck(let changes):
                return "migrates by inference if the stored objects allow it:\n"
                    + changes.map { "  - \($0.description)" }.joined(separator: "\n")
            case .refused(let reasons):
                return "refused:\n" + reasons.map { "  - \($0)" }.joined(separator: "\n")
            case .notChecked(let reason):
                return "not checked: \(reason)"
            }
        }
    }

    /// One pair of consecutive versions.
    public struct Step: Sendable {
        public var from: String
        public var to: String
        public var verdict: Verdict
        /// Every change between the two versions; empty when one does not load.
        public var changes: [ModelChange]
    }

    /// The versions, oldest first.
    public var versions: [Version]
    /// The pairs of consecutive versions, oldest first.
    public var steps: [Step]

    /// Whether some version does not load or some pair refuses to migrate.
    public var hasRefusals: Bool { versions.contains { !$0.loads } || steps.contains { $0.verdict.isRefusal } }

    /// Checks the bundle (or single `.xcdatamodel` package) at `url`, loading each version on its own so
    /// that one that fails still lets the others be checked.
    /// - Parameters:
    ///   - url: The `.xcdatamodeld` bundle or `.xcdatamodel` package.
    ///   - options: The migration options an app would pass: `mappingModels`, `migrationPolicies`,
    ///     `acknowledgedRemovals`, `allowsUnannouncedRenames` and `steps` are taken into account.
    ///   - classes: As for `XcodeModelBundle(contentsOf:classes:)`.
    /// - Throws: `XcodeModelError` only when the versions cannot be listed (no bundle there, no current
    ///   version); a version's own problems are reported in `versions`.
    public init(contentsOf url: URL, options: MigrationOptions = MigrationOptions(),
                classes: [String: ManagedObject.Type] = [:]) throws(XcodeModelError) {
        let listing = try XcodeModelBundle.listing(of: url)
        var versions: [Version] = []
        for (index, package) in listing.packages.enumerated() {
            var version = Version(name: package.name, isCurrent: index == listing.current, model: nil, problems: [], warnings: [])
            do {
                let single = try XcodeModelBundle(contentsOf: package.url, classes: classes)
                version.model = single.versions.first
                version.warnings = single.warnings
            } catch {
                version.problems = error.problems
            }
            versions.append(version)
        }
        self.init(versions: versions, options: options)
    }

    /// Checks the versions of a bundle that loaded.
    public init(bundle: XcodeModelBundle, options: MigrationOptions = MigrationOptions()) {
        self.init(versions: bundle.versions.indices.map { index in
            Version(name: bundle.versionNames[index], isCurrent: index == bundle.currentVersionIndex, model: bundle.versions[index],
                    problems: [], warnings: bundle.warnings(forVersion: bundle.versionNames[index]))
        }, options: options)
    }

    private init(versions: [Version], options: MigrationOptions) {
        self.versions = versions
        steps = zip(versions, versions.dropFirst()).map { older, newer in
            guard let source = older.model, let destination = newer.model else {
                let failed = [older, newer].filter { !$0.loads }.map(\.name)
                return Step(from: older.name, to: newer.name, verdict: .notChecked(reason: "\(failed.joined(separator: " and ")) does not load"),
                            changes: [])
            }
            return Self.step(from: source, to: destination, names: (older.name, newer.name), options: options)
        }
    }

    private static func step(from source: ManagedObjectModel, to destination: ManagedObjectModel, names: (String, String),
                             options: MigrationOptions) -> Step {
        if source.versionHash == destination.versionHash {
            return Step(from: names.0, to: names.1, verdict: .noMigrationNeeded, changes: [])
        }
        let custom = options.steps.first { $0.source.versionHash == source.versionHash && $0.destination.versionHash == destination.versionHash }
        let mappingModel = options.mappingModels.first { $0.covers(from: source, to: destination) }
        let mapping = InferredMapping(from: source, to: destination, step: custom, options: options, mappingModel: mappingModel)
        var reasons = mapping.problems.map(\.description)
        if custom == nil && mappingModel == nil && !options.shouldInferMappingModelAutomatically {
            reasons.insert("mapping inference is off and no migration step or mapping model covers this pair of versions", at: 0)
        }
        let verdict: Verdict
        if !reasons.isEmpty {
            verdict = .refused(reasons)
        } else if let mappingModel = mapping.mappingModel {
            verdict = .migratesByMappingModel(path: mappingModel.path)
        } else if !mapping.dataRequirements.isEmpty {
            verdict = .needsDataCheck(mapping.dataRequirements)
        } else {
            verdict = .migratesByInference
        }
        return Step(from: names.0, to: names.1, verdict: verdict, changes: mapping.changes)
    }
}
