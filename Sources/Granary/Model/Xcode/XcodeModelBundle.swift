import Foundation

/// Every version of a versioned Xcode model (an `.xcdatamodeld` bundle), oldest first, and which one is
/// current.
///
/// Use it where all versions matter, as migrating a store step by step through them does; to use only
/// the current version, `ManagedObjectModel(contentsOf:classes:)` is enough. Versions are ordered by name
/// as Xcode numbers them ("Model", "Model 2", …, "Model 10"), comparing runs of digits as numbers; each
/// model's `versionIdentifier` is its version name. The current version is the one `.xccurrentversion`
/// names, usually but not necessarily the last.
public struct XcodeModelBundle: Sendable {
    /// The bundle directory (or the package, for a model that has a single, unversioned package).
    public let url: URL
    /// The version names, oldest first: "Model", "Model 2", …
    public let versionNames: [String]
    /// The models, in the order of `versionNames`.
    public let versions: [ManagedObjectModel]
    /// The position of the current version in `versions`.
    public let currentVersionIndex: Int

    /// The name of the version new stores use, as `.xccurrentversion` gives it, without extension.
    public var currentVersionName: String { versionNames[currentVersionIndex] }

    /// The model new stores use.
    public var currentVersion: ManagedObjectModel { versions[currentVersionIndex] }

    /// The versions from the oldest through the current one: the path a store of any older version takes
    /// to the current version.
    public var versionsThroughCurrent: [ManagedObjectModel] { Array(versions[...currentVersionIndex]) }

    /// What Core Data would load with a warning, in every version (oldest first) and in the bundle itself
    /// (such as a current version chosen by name); each says where.
    ///
    /// Loading never fails for a warning; read them to tell a model's author what was ignored.
    public var warnings: [XcodeModelWarning] { bundleWarnings + versionWarnings.flatMap { $0 } }

    private let bundleWarnings: [XcodeModelWarning]
    private let versionWarnings: [[XcodeModelWarning]]

    /// The warnings of one version ("Model 2"); empty for a version the bundle does not hold.
    public func warnings(forVersion name: String) -> [XcodeModelWarning] {
        versionNames.firstIndex(of: name).map { versionWarnings[$0] } ?? []
    }

    /// Loads every version of an `.xcdatamodeld` bundle (or the single version of an `.xcdatamodel`
    /// package).
    ///
    /// Use it to get the ordered list of model versions a migration walks through, or the warnings of a
    /// model file (a single package loads as a bundle of one version). Every version is read even after
    /// one fails, and every problem of every version is thrown at once.
    /// - Parameters:
    ///   - url: The `.xcdatamodeld` directory, or an `.xcdatamodel` package.
    ///   - classes: Managed object classes by the class name the file's entities give in
    ///     `representedClassName`; see `ManagedObjectModel(contentsOf:classes:)`. A key must bind an
    ///     entity in at least one version.
    /// - Throws: `XcodeModelError.noCurrentVersion` when the bundle holds no versions, holds several and no
    ///   `.xccurrentversion`, or names a current version it does not hold; otherwise every problem of every
    ///   version (each error `ManagedObjectModel(contentsOf:classes:)` can throw) and `.unknownClass` for a
    ///   key of `classes` no entity of any version represents, as one error when there is one and as
    ///   `.problems` when there are several.
    public init(contentsOf url: URL, classes: [String: ManagedObject.Type] = [:]) throws(XcodeModelError) {
        let binding = XcodeClassBinding(classes)
        let listing = try Self.listing(of: url)
        var problems: [XcodeModelError] = []
        var models: [ManagedObjectModel] = []
        var bound: Set<String> = []
        var warnings: [[XcodeModelWarning]] = []
        for package in listing.packages {
            let decoded = package.decode(classes: binding)
            bound.formUnion(decoded.boundClassKeys)
            do {
                models.append(try ManagedObjectModel(decoded: decoded, versionIdentifier: package.name))
            } catch {
                problems.append(contentsOf: error.problems)
            }
            warnings.append(decoded.warnings)
        }
        for unbound in binding.keys.subtracting(bound).sorted() {
            problems.append(.unknownClass(XcodeModelError.Location(path: url.path), className: unbound))
        }
        if !problems.isEmpty { throw .combining(problems) }
        self.url = url
        self.versionNames = listing.packages.map(\.name)
        self.versions = models
        self.currentVersionIndex = listing.current
        self.bundleWarnings = listing.warnings
        self.versionWarnings = warnings
    }

    /// The version with this name ("Model 2"), if the bundle holds one.
    public func version(named name: String) -> ManagedObjectModel? {
        versionNames.firstIndex(of: name).map { versions[$0] }
    }

    // MARK: Listing versions

    private static let currentVersionFile = ".xccurrentversion"
    private static let currentVersionKey = "_XCCurrentVersionName"

    /// The version packages a URL holds, oldest first, the position of the current one, and warnings
    /// about how it was chosen.
    struct Listing {
        var packages: [XcodeModelPackage]
        var current: Int
        var warnings: [XcodeModelWarning] = []
    }

    /// The versions of a bundle, or the one version of a package.
    /// - Throws: the errors of `XcodeModelPackage.source(of:)` and `versions(of:)`.
    static func listing(of url: URL) throws(XcodeModelError) -> Listing {
        switch try XcodeModelPackage.source(of: url) {
        case .package(let package):
            return Listing(packages: [package], current: 0)
        case .bundle(let bundle):
            return try versions(of: bundle)
        }
    }

    /// The version packages of a bundle, oldest first, and the position of the current one.
    /// - Throws: `XcodeModelError.unreadable` when the directory cannot be listed, `.noCurrentVersion`
    ///   when it has no versions or the current one cannot be told.
    static func versions(of bundle: URL) throws(XcodeModelError) -> Listing {
        let location = XcodeModelError.Location(path: bundle.path)
        let entries: [String]
        do {
            entries = try FileManager.default.contentsOfDirectory(atPath: bundle.path)
        } catch {
            throw .unreadable(location, reason: error.localizedDescription)
        }
        let packages = entries.filter { $0.hasSuffix(".xcdatamodel") }
            .map { XcodeModelPackage(url: bundle.appendingPathComponent($0, isDirectory: true)) }
            .sorted { naturalOrder($0.name, $1.name) }
        let names = packages.map(\.name)
        guard !packages.isEmpty else { throw .noCurrentVersion(location, reason: "the bundle holds no .xcdatamodel version") }

        let marker = bundle.appendingPathComponent(currentVersionFile)
        guard FileManager.default.fileExists(atPath: marker.path) else {
            if packages.count == 1 { return Listing(packages: packages, current: 0) }
            throw .noCurrentVersion(
                location,
                reason: "it holds \(packages.count) versions (\(names.joined(separator: ", "))) and no "
                    + "\(currentVersionFile) file to say which is current")
        }
        guard let data = try? Data(contentsOf: marker),
            let plist = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any]
        else {
            throw .noCurrentVersion(
                XcodeModelError.Location(path: marker.path),
                reason: "expected a property list with a string under \(currentVersionKey)")
        }
        guard let currentName = plist[currentVersionKey] as? String else {
            guard plist[currentVersionKey] == nil else {
                throw .noCurrentVersion(
                    XcodeModelError.Location(path: marker.path), reason: "\(currentVersionKey) is not a string")
            }
            // An empty dictionary (Xcode writes one when the current version was never chosen): Xcode then
            // uses the version named like the bundle, and so does Granary; failing that, the newest.
            let bundleName = bundle.deletingPathExtension().lastPathComponent
            let current = names.firstIndex(of: bundleName) ?? names.count - 1
            let reason = names[current] == bundleName
                ? "\(currentVersionFile) names no version, and this one is named like the bundle, as Xcode chooses"
                : "\(currentVersionFile) names no version and none is named like the bundle, so the newest was taken"
            return Listing(
                packages: packages, current: current,
                warnings: [.currentVersionChosen(XcodeModelError.Location(path: marker.path), version: names[current], reason: reason)])
        }
        let name = currentName.hasSuffix(".xcdatamodel") ? String(currentName.dropLast(".xcdatamodel".count)) : currentName
        guard let current = names.firstIndex(of: name) else {
            throw .noCurrentVersion(
                XcodeModelError.Location(path: marker.path),
                reason: "it names \(currentName), which the bundle does not hold; it holds \(names.joined(separator: ", "))")
        }
        return Listing(packages: packages, current: current)
    }

    /// Whether `a` comes before `b` when runs of digits compare as numbers, so that "Model 2" comes before
    /// "Model 10" and "Model" (Xcode's first version has no number) before both.
    static func naturalOrder(_ a: String, _ b: String) -> Bool {
        let left = runs(a)
        let right = runs(b)
        for (x, y) in zip(left, right) where x != y {
            if let m = x.number, let n = y.number {
                // Compared by length, then digits, so that long runs cannot overflow an integer.
                if m.count != n.count { return m.count < n.count }
                if m != n { return m < n }
                // Equal numbers written with different leading zeros: fall through to the text.
            }
            return x.text < y.text
        }
        return left.count != right.count ? left.count < right.count : a < b
    }

    /// A run of digits (with its value's significant digits in `number`) or a run of anything else.
    private struct Run: Equatable {
        let text: String
        let number: String?
    }

    /// A name split into runs of digits and runs of anything else.
    private static func runs(_ name: String) -> [Run] {
        var result: [Run] = []
        var current = ""
        var isDigits = false
        func flush() {
            guard !current.isEmpty else { return }
            let significant = current.drop { $0 == "0" }
            result.append(Run(text: current, number: isDigits ? (significant.isEmpty ? "0" : String(significant)) : nil))
            current = ""
        }
        for character in name {
            let digit = character.isASCII && character.isNumber
            if digit != isDigits { flush() }
            current.append(character)
            isDigits = digit
        }
        flush()
        return result
    }
}
