/// The classes an application binds to a model file's entities, looked up by the `representedClassName`
/// the file gives each entity.
///
/// Xcode writes the class name as the developer typed it, prefixed with a module for "Current Product
/// Module" (`.Employee` or `MyApp.Employee`), so a key matches exactly first, and otherwise by the name
/// after the last `.` on both sides: `"Employee"` binds all three spellings.
struct XcodeClassBinding {
    private let exact: [String: ManagedObject.Type]
    private let unqualified: [String: (key: String, type: ManagedObject.Type)]

    init(_ classes: [String: ManagedObject.Type]) {
        exact = classes
        var unqualified: [String: (key: String, type: ManagedObject.Type)] = [:]
        // Sorted, so that which key wins a clash of unqualified names does not depend on hashing.
        for key in classes.keys.sorted() {
            if let type = classes[key], unqualified[Self.unqualifiedName(key)] == nil {
                unqualified[Self.unqualifiedName(key)] = (key, type)
            }
        }
        self.unqualified = unqualified
    }

    /// Every key given, to check afterwards that each one bound an entity.
    var keys: Set<String> { Set(exact.keys) }

    /// The class bound to an entity whose file says `representedClassName`, and the key that bound it.
    func lookup(_ representedClassName: String) -> (key: String, type: ManagedObject.Type)? {
        if let type = exact[representedClassName] { return (representedClassName, type) }
        return unqualified[Self.unqualifiedName(representedClassName)]
    }

    private static func unqualifiedName(_ name: String) -> String {
        guard let dot = name.lastIndex(of: ".") else { return name }
        return String(name[name.index(after: dot)...])
    }
}
