/// Field names of Swift key paths, read from the key paths' descriptions.
///
/// Swift prints `\Employee.name` as `\Employee.name` and optional chains with `?` or `!` after each
/// optional step (`\Employee.manager?.name` prints `\Employee.manager?.name?`); computed properties the
/// runtime cannot name print as `<computed 0x… (Type)>`. Use `components(of:)` as the default
/// `keyPathName` when lowering `#Predicate`s or converting `SortDescriptor`s over classes whose stored
/// properties are named like the model's fields.
public enum KeyPathNames {
    /// The property names along a key path (`["manager", "name"]`), or `nil` when a component is a
    /// subscript, a tuple element or a computed property without a name.
    public static func components(of keyPath: AnyKeyPath) -> [String]? {
        components(fromDescription: String(describing: keyPath),
                   rootTypeName: String(describing: type(of: keyPath).rootType))
    }

    /// The property names along a key path rooted at `entity`'s class, found by reading the key path
    /// on a probe object: unlike `components(of:)`, this names `@Managed` properties, whose key paths
    /// Swift describes without their names. For code that turns key paths into keys itself (Core Data's
    /// `NSSortDescriptor(keyPath:ascending:)` in GranaryCoreData).
    public static func components(of keyPath: AnyKeyPath, entity: EntityDescription, model: ManagedObjectModel) -> [String]? {
        KeyPathProbe.components(of: keyPath, entity: entity, model: model)
    }

    /// The property names along a key path rooted at a `ManagedObject` class, probed on the entity the
    /// class is bound to in the newest live model (as `entity()` finds it); `nil` when the class is bound
    /// in no live model or the key path goes through no `@Managed` property. For defaults computed without
    /// a context at hand (GranaryRecords' `Parsable.jsonKey`).
    public static func components(of keyPath: AnyKeyPath, rootedAt type: ManagedObject.Type) -> [String]? {
        guard let bound = ModelClassRegistry.entities(for: type).first else { return nil }
        return KeyPathProbe.components(of: keyPath, entity: bound.entity, model: bound.model)
    }

    /// The property names in a key path description such as `\Employee.manager?.name?`.
    ///
    /// - Parameters:
    ///   - description: A key path as Swift prints it (`String(describing: keyPath)`).
    ///   - rootTypeName: the root type as the description spells it; when `nil`, the root is
    ///     everything up to the first `.` outside angle brackets, which misreads nested type names.
    public static func components(fromDescription description: String, rootTypeName: String? = nil) -> [String]? {
        guard description.hasPrefix("\\") else { return nil }
        var rest = Substring(description.dropFirst())
        if let root = rootTypeName, rest.hasPrefix(root + ".") {
            rest = rest.dropFirst(root.count + 1)
        } else {
            var depth = 0
            guard let dot = rest.firstIndex(where: { ch in
                if ch == "<" { depth += 1 } else if ch == ">" { depth -= 1 }
                return ch == "." && depth == 0
            }) else { return nil }
            rest = rest[rest.index(after: dot)...]
        }
        var names: [String] = []
        for raw in rest.split(separator: ".", omittingEmptySubsequences: false) {
            var name = raw
            while let last = name.last, last == "?" || last == "!" { name = name.dropLast() }
            guard let first = name.first, first.isLetter || first == "_",
                  name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else { return nil }
            names.append(String(name))
        }
        return names.isEmpty ? nil : names
    }
}
