import Foundation

extension ManagedObjectModel {
    /// A model read from an Xcode model file: an `.xcdatamodel` package, or the current version of an
    /// `.xcdatamodeld` bundle.
    ///
    /// Use it to run an app's existing Core Data model unchanged, as Core Data's
    /// `NSManagedObjectModel(contentsOf:)` does with the compiled form (Linux has no model compiler, so the
    /// source files are read). Entities, attributes (types, optional, transient, indexed, defaults,
    /// minimum/maximum, regular expression), relationships, uniqueness constraints, fetch and compound
    /// indexes, configurations and renaming identifiers (`renamingIdentifier`, else `elementID`) are read;
    /// transient attributes of Xcode's Undefined type load as `AttributeType.undefined`; Xcode's
    /// required-unless-`optional="YES"` holds for every property. Transformable attributes with Core Data's
    /// default transformer and no custom class (or a property-list one) are
    /// `AttributeType.secureUnarchiveFromData`; an app's transformer, or any other custom class (without a
    /// leading `.`), names the type, and values need a transformer registered under that name when they
    /// are stored or read, not when the model loads
    /// (`AttributeType.registerTransformer(named:valueType:transform:reverseTransform:)`).
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
    ///   bundle whose current version cannot be told; `.xcode3Format` for a package in Xcode 3's binary
    ///   format; `.malformedXML`; otherwise every problem of the file
    ///   at once — `.unknownElement`, `.unknownAttribute`, `.missingAttribute`, `.invalidValue`,
    ///   or `.unsupported` for each element that cannot be mapped, `.unknownClass` for
    ///   each key of `classes` that binds no entity — as `.problems` when there are several (read
    ///   `XcodeModelError.problems` for the list); when the file itself has none, `.invalidModel` wrapping
    ///   the `ModelError` that `init(entities:configurations:versionIdentifier:)` throws, located at the
    ///   element it is about. Warnings are not reported here: load the file with `XcodeModelBundle` to
    ///   read them.
    public convenience init(contentsOf url: URL, classes: [String: ManagedObject.Type] = [:]) throws(XcodeModelError) {
        let listing = try XcodeModelBundle.listing(of: url)
        let package = listing.packages[listing.current]
        let binding = XcodeClassBinding(classes)
        let decoded = package.decode(classes: binding)
        var problems = decoded.problems
        for unbound in binding.keys.subtracting(decoded.boundClassKeys).sorted() {
            problems.append(.unknownClass(XcodeModelError.Location(path: package.contentsURL.path), className: unbound))
        }
        if !problems.isEmpty { throw .combining(problems) }
        try self.init(decoded: decoded, versionIdentifier: package.name)
    }
}
