import Foundation

extension ManagedObjectModel {
    /// A model read from an Xcode model file: an `.xcdatamodel` package, or the current version of an
    /// `.xcdatamodeld` bundle.
    ///
    /// Use it to run an app's existing Core Data model unchanged, as Core Data's
    /// `NSManagedObjectModel(contentsOf:)` does with the compiled form (Linux has no model compiler, so the
    /// source files are read). Entities, attributes (types, optional, transient, indexed, defaults,
    /// minimum/maximum, regular expression), relationships, uniqueness constraints, fetch and compound
    /// indexes, configurations and renaming identifiers are read; Xcode's required-unless-`optional="YES"`
    /// holds for every property. Transformable attributes take their value type's name from Xcode's
    /// "Custom Class" field (without a leading `.`): register a codec under that name first, as with
    /// `AttributeType.transformable(Point.self, name: "Point")`.
    ///
    /// `versionIdentifier` is the version's package name without extension ("Model 2"), which Xcode keeps
    /// unique within a bundle; the file's optional `userDefinedModelVersionIdentifier` is not used.
    ///
    /// ```swift
    /// let model = try ManagedObjectModel(
    ///     contentsOf: URL(fileURLWithPath: "Resources/Library.xcdatamodeld"),
    ///     classes: ["Author": Author.self, "Book": Book.self])
    /// ```
    /// - Parameters:
    ///   - url: An `.xcdatamodel` package, an `.xcdatamodeld` bundle, or a package's `contents` file.
    ///   - classes: Managed object classes by the class name the file's entities give in
    ///     `representedClassName`, with or without the module prefix Xcode may write (`.Author`,
    ///     `MyApp.Author`). Entities whose class is not given use `ManagedObject` itself.
    /// - Throws: `XcodeModelError`: `.unreadable` or `.notAModel` for the URL; `.noCurrentVersion` for a
    ///   bundle whose current version cannot be told; `.malformedXML`; `.unknownElement`,
    ///   `.unknownAttribute`, `.missingAttribute`, `.invalidValue`, `.unsupported` or `.missingInverse`
    ///   for the first element that cannot be mapped; `.unknownClass` for a key of `classes` that binds no
    ///   entity; `.invalidModel` wrapping the `ModelError` that `init(entities:configurations:versionIdentifier:)`
    ///   throws, located at the element it is about.
    public convenience init(contentsOf url: URL, classes: [String: ManagedObject.Type] = [:]) throws(XcodeModelError) {
        let package: XcodeModelPackage
        switch try XcodeModelPackage.source(of: url) {
        case .package(let single):
            package = single
        case .bundle(let bundle):
            let (packages, current) = try XcodeModelBundle.versions(of: bundle)
            package = packages[current]
        }
        let binding = XcodeClassBinding(classes)
        let decoded = try package.decode(classes: binding)
        if let unbound = binding.keys.subtracting(decoded.boundClassKeys).sorted().first {
            throw .unknownClass(XcodeModelError.Location(path: package.contentsURL.path), className: unbound)
        }
        try self.init(decoded: decoded, versionIdentifier: package.name)
    }
}
