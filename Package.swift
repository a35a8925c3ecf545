// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "Granary",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "GranaryStorage", targets: ["GranaryStorage"]),
        .library(name: "Granary", targets: ["Granary"]),
        .library(name: "GranaryStack", targets: ["GranaryStack"]),
        .library(name: "GranaryCoreData", targets: ["GranaryCoreData"]),
        .library(name: "GranaryRecords", targets: ["GranaryRecords"]),
        .library(name: "GranarySync", targets: ["GranarySync"]),
        .library(name: "GranaryConnect", targets: ["GranaryConnect"]),
        .executable(name: "granary", targets: ["granary"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        // The server-side Swift logging API, for GranaryRecords' messages: small (no dependencies of its own),
        // and the logger apps on Linux already configure.
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // `swift package generate-documentation` for `make docs`; a plugin only, nothing it brings is linked.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CLZ4",
            pkgConfig: "liblz4",
            providers: [.apt(["liblz4-dev"]), .brew(["lz4"])]
        ),
        .target(name: "GranaryStorage", dependencies: ["CLZ4"]),
        .target(name: "Granary", dependencies: ["GranaryStorage"]),
        // Ready-made stacks (containers, context strategies, attachable stores) on top of Granary; Granary
        // knows nothing of it.
        .target(name: "GranaryStack", dependencies: ["Granary"]),
        // Core Data's exact spellings (`NSManagedObjectContext`, `NSFetchRequest`, `NSPredicate(format:)`…)
        // over Granary's own names, so that Core Data code compiles with its import changed: the porting
        // path, opt-in; nothing in Granary depends on it.
        .target(name: "GranaryCoreData", dependencies: ["Granary", "GranaryStack"]),
        // Everyday services over a stack (CorePersistence's feature set): objects keyed by a unique ID, JSON
        // import, key-path queries, observed results, one serial background writer.
        .target(
            name: "GranaryRecords",
            dependencies: ["Granary", "GranaryStack", .product(name: "Logging", package: "swift-log")]
        ),
        // Sync between stores through any cloud file system (Ensembles' feature set): events exchanged as
        // immutable files, framed with GranaryStorage's checksum and compressor.
        .target(name: "GranarySync", dependencies: ["Granary", "GranaryStorage", .product(name: "Logging", package: "swift-log")]),
        // Managed actions over a stack (Coherence's Connect): generic and entity actions run in lanes and
        // watched through proxies, feeds merged by unique key, a durable outbox of local edits.
        .target(
            name: "GranaryConnect",
            dependencies: ["Granary", "GranaryStack", "GranaryRecords", .product(name: "Logging", package: "swift-log")]
        ),
        .executableTarget(
            name: "granary",
            dependencies: [
                "GranaryStorage",
                "Granary",
                "GranaryRecords",
                "GranarySync",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Child processes for the crash tests: commits and reports acknowledgements, migrates, or uploads
        // into a shared folder, until killed.
        .executableTarget(name: "granary-crashtest", dependencies: ["GranaryStorage", "Granary", "GranarySync", "GranaryConnect"]),
        .testTarget(
            name: "GranaryStorageTests",
            dependencies: [
                "GranaryStorage",
                "granary-crashtest",
                "granary",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "GranaryTests",
            dependencies: [
                "Granary",
                "granary",
                "granary-crashtest",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            // Xcode model files, copied as they are: Linux has no model compiler, and the loader reads sources.
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "GranaryStackTests",
            dependencies: ["GranaryStack", "Granary"]
        ),
        .testTarget(
            name: "GranaryRecordsTests",
            dependencies: [
                "GranaryRecords", "GranaryStack", "Granary",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "GranarySyncTests",
            dependencies: [
                "GranarySync", "Granary", "GranaryStorage",
                "granary-crashtest",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "GranaryConnectTests",
            dependencies: [
                "GranaryConnect", "GranaryRecords", "GranaryStack", "Granary", "granary-crashtest",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            // The tests' web service, run from its source by python3 (see TestWebServer.swift).
            exclude: ["Server"]
        ),
        // Apple's Core Data samples and an app-shaped persistence layer, ported with `import GranaryCoreData`.
        .testTarget(
            name: "GranaryCoreDataTests",
            dependencies: ["GranaryCoreData"]
        ),
        // The code shown in the documentation catalogs and the README, compiled and run; a test checks that
        // every Swift block there is a region of these files, word for word (see README, "Layout").
        .testTarget(
            name: "DocumentationTests",
            dependencies: ["GranaryStorage", "Granary", "GranaryStack", "GranaryCoreData", "GranaryRecords", "GranarySync"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// Fuzz targets (Fuzz/, see FuzzDriver): libFuzzer targets when `make fuzz` builds them with
// -sanitize=fuzzer and -DGRANARY_FUZZ; otherwise programs that run the inputs named on their command line,
// so that the normal build keeps them compiling. fuzz-seeds writes their seed corpora.
let fuzzTargets: [(name: String, folder: String, module: Target.Dependency)] = [
    ("fuzz-predicate", "Predicate", "Granary"), ("fuzz-xml", "XML", "Granary"), ("fuzz-model", "Model", "Granary"),
    ("fuzz-row", "Row", "GranaryStorage"), ("fuzz-log", "Log", "GranaryStorage"),
    ("fuzz-snapshot", "Snapshot", "GranaryStorage"), ("fuzz-store", "Store", "GranaryStorage"),
]
package.targets += [
    .target(name: "CFuzzer", path: "Fuzz/CFuzzer"),
    .target(name: "FuzzSupport", dependencies: ["CFuzzer"], path: "Fuzz/Support"),
    .executableTarget(name: "fuzz-seeds", dependencies: ["GranaryStorage"], path: "Fuzz/Seeds"),
] + fuzzTargets.map { .executableTarget(name: $0.name, dependencies: [$0.module, "FuzzSupport"], path: "Fuzz/\($0.folder)") }
