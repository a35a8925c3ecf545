/// Something in an Xcode model file that Core Data loads anyway, and so does Granary, but that the
/// author may not have meant: the loader says what it did about it.
///
/// Read them from `XcodeModelBundle.warnings` (all versions) or `XcodeModelBundle.warnings(forVersion:)`;
/// a single `.xcdatamodel` package loads as a bundle of one version for this purpose. Warnings never stop
/// a model from loading.
public enum XcodeModelWarning: Sendable, Hashable, CustomStringConvertible {
    /// An attribute that has no meaning where it is written, and that Core Data ignores there too, such as
    /// `ordered="YES"` on a to-one relationship or `indexed="YES"` on a to-many one.
    case ignoredAttribute(XcodeModelError.Location, attribute: String, reason: String)
    /// The bundle's `.xccurrentversion` names no version (an empty dictionary), so the version named like
    /// the bundle was taken as current, as Xcode does, or the newest when no version has the bundle's name.
    case currentVersionChosen(XcodeModelError.Location, version: String, reason: String)
    /// A transformable attribute whose values an app's transformer codes (`valueTransformerName`), or whose
    /// custom class Granary does not archive (a platform type such as `UIColor` or `CKRecordID`): the
    /// attribute loads, and storing or reading a value needs a transformer registered under `typeName`
    /// (`AttributeType.registerTransformer(named:valueType:transform:reverseTransform:)` or
    /// `ValueTransformer.setValueTransformer(_:forName:)`), before or after the model is loaded.
    case transformerNeeded(XcodeModelError.Location, attribute: String, typeName: String)
    /// A relationship with no inverse (Xcode warns about it too): it loads as a one-sided relationship,
    /// and a deleted destination still leaves no reference to itself behind (see "Relationships without an
    /// inverse" in <doc:DefiningAModel>).
    case relationshipWithoutInverse(XcodeModelError.Location, entity: String, relationship: String)
    /// A relationship whose inverse does not point back at it (the inverse names another relationship or
    /// none, is missing, is an attribute, or differs in being transient): it loads as one-sided, as Core
    /// Data effectively treats it, and the relationship it named keeps its own inverse if that one agrees.
    case inverseNotPointingBack(
        XcodeModelError.Location, entity: String, relationship: String, inverse: String, reason: String)

    /// Where the warning applies.
    public var location: XcodeModelError.Location {
        switch self {
        case .ignoredAttribute(let location, _, _), .currentVersionChosen(let location, _, _),
            .transformerNeeded(let location, _, _),
            .relationshipWithoutInverse(let location, _, _), .inverseNotPointingBack(let location, _, _, _, _):
            return location
        }
    }

    /// The line of the element involved, when there is one: shorthand for `location.line`.
    public var line: Int? { location.line }

    public var description: String {
        let prefix = location.description + ": warning: "
        switch self {
        case .ignoredAttribute(_, let attribute, let reason):
            return prefix + "\(attribute) ignored: \(reason)"
        case .currentVersionChosen(_, let version, let reason):
            return prefix + "current version taken to be '\(version)': \(reason)"
        case .transformerNeeded(_, let attribute, let typeName):
            return prefix + "transformable attribute '\(attribute)' loads, but its values are stored and read only "
                + "through a transformer the app registers under '\(typeName)'"
        case .relationshipWithoutInverse(_, let entity, let relationship):
            return prefix + "relationship '\(entity).\(relationship)' has no inverse; loaded as one-sided"
        case .inverseNotPointingBack(_, let entity, let relationship, let inverse, let reason):
            return prefix + "relationship '\(entity).\(relationship)' names '\(inverse)' as its inverse, but \(reason); "
                + "loaded as one-sided"
        }
    }
}
