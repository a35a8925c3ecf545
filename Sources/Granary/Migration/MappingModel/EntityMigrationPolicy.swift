/// What an app registers for a migration policy class named in a mapping model: the Swift stand-in for
/// a subclass of Core Data's `NSEntityMigrationPolicy`.
///
/// A mapping model's value expressions call a policy as `FUNCTION($entityPolicy, "selector:", …)`;
/// the call runs the closure registered under that selector, with the arguments evaluated (attribute
/// values in their Swift form, a source object as a `MigrationObject`). Register policies by the class
/// name Xcode shows in the entity mapping's "Custom Policy" field, module prefix and all:
///
/// ```swift
/// var options = MigrationOptions(mappingModels: [try MappingModel(contentsOf: url)])
/// options.migrationPolicies["MyApp.PersonPolicy"] = EntityMigrationPolicy(functions: [
///     "fullName:last:": { args in "\(args[0] ?? "") \(args[1] ?? "")" },
/// ])
/// ```
public struct EntityMigrationPolicy: Sendable {
    /// A policy function: the evaluated arguments in, the value out (nil for none).
    public typealias Function = @Sendable (_ arguments: [(any Sendable)?]) throws -> (any Sendable)?

    /// The functions by selector, as the expressions spell them (`"fullName:last:"`).
    public var functions: [String: Function]
    /// Runs for each destination object the entity mapping makes, after its property mappings filled it
    /// (what an override of `createDestinationInstances(forSource:in:manager:)` that calls `super`
    /// then adjusts does): it reads the source object, adjusts the new one's attributes, or calls
    /// `discard()` to make none for this source object.
    public var transform: EntityMigration.Transform?

    public init(functions: [String: Function] = [:], transform: EntityMigration.Transform? = nil) {
        self.functions = functions
        self.transform = transform
    }
}
