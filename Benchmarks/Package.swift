// swift-tools-version: 6.0
import PackageDescription

// The benchmark is its own package so that the library never depends on its peer (GRDB): only this
// package does, and `swift build` at the root never builds SQLite bindings.
let package = Package(
    name: "GranaryBenchmarks",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "granary-bench", targets: ["granary-bench"]),
        .executable(name: "records-probe", targets: ["records-probe"]),
    ],
    dependencies: [
        // The identity of a path dependency is its folder name, which differs between clones and worktrees;
        // naming it keeps `package: "Granary"` valid everywhere.
        .package(name: "Granary", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        // The records bench's Granary classes and model, shared by the bench and the probe.
        .target(
            name: "RecordsFeed",
            dependencies: [
                .product(name: "Granary", package: "Granary"),
                .product(name: "GranaryRecords", package: "Granary"),
            ]
        ),
        .executableTarget(
            name: "granary-bench",
            dependencies: [
                "RecordsFeed",
                .product(name: "GranaryStorage", package: "Granary"),
                .product(name: "Granary", package: "Granary"),
                .product(name: "GranaryStack", package: "Granary"),
                .product(name: "GranaryRecords", package: "Granary"),
                .product(name: "GranarySync", package: "Granary"),
                .product(name: "GranaryConnect", package: "Granary"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // J3 of the records bench alone and small, for profiling (see its main.swift).
        .executableTarget(
            name: "records-probe",
            dependencies: [
                "RecordsFeed",
                .product(name: "Granary", package: "Granary"),
                .product(name: "GranaryRecords", package: "Granary"),
            ]
        ),
        .testTarget(
            name: "GranaryBenchTests",
            dependencies: ["granary-bench"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
