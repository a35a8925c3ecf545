/// The canonical text behind `ManagedObjectModel.versionHash` and `entityVersionHashes`.
///
/// It covers what decides how objects are stored: entity names, abstractness and superentity; attribute
/// names, types, optionality, transient and indexed flags; relationship destinations, to-many and ordered
/// flags, inverses and optionality; uniqueness constraints and indexes. It leaves out what can change
/// without touching stored data: default values, validation rules, delete rules, relationship counts,
/// renaming identifiers, classes, configurations and the version identifier. Declaration order does not
/// count either, since storage orders columns by name. Every string is written with its UTF-8 length in
/// front, so no name can forge the separators.
enum VersionHash {
    /// Bumped if the canonical text ever changes shape, so old and new hashes cannot collide by accident.
    private static let format = "granary-model-hash-1"

    static func entityHash(_ entity: EntityDeclaration) -> String {
        SHA256.hexDigest(canonicalText(entity))
    }

    static func modelHash(_ entityHashes: [String: String]) -> String {
        var lines = [format]
        for name in entityHashes.keys.sorted() {
            lines.append("\(field(name)) \(entityHashes[name]!)")
        }
        return SHA256.hexDigest(lines.joined(separator: "\n"))
    }

    static func canonicalText(_ entity: EntityDeclaration) -> String {
        var lines = [
            format,
            "entity \(field(entity.name))",
            "abstract \(flag(entity.isAbstract))",
            "superentity \(entity.superentityName.map(field) ?? "-")",
        ]
        // Hidden inverses follow from the one-sided relationships, which are hashed (with no inverse) on
        // their own entity; leaving them out keeps the hashes of the entities a one-sided relationship
        // points at as Core Data's would be, while the model hash still changes with it.
        for property in entity.properties.filter({ !$0.isHiddenInverse }).sorted(by: { $0.name < $1.name }) {
            switch property {
            case .attribute(let a):
                lines.append(
                    "attribute \(field(a.name)) \(field(a.type.description)) optional=\(flag(a.isOptional)) "
                        + "transient=\(flag(a.isTransient)) indexed=\(flag(a.isIndexed))")
            case .relationship(let r):
                // `-` cannot be a field (fields start with their length), and the transient flag is written
                // only when set, so the hashes of models without these features are unchanged.
                lines.append(
                    "relationship \(field(r.name)) \(field(r.destinationEntityName)) inverse=\(r.inverseName.map(field) ?? "-") "
                        + "toMany=\(flag(r.isToMany)) ordered=\(flag(r.isOrdered)) optional=\(flag(r.isOptional))"
                        + (r.isTransient ? " transient=1" : ""))
            }
        }
        // Order within a constraint or index is kept (it orders the index's columns); the order between
        // them is not.
        let constraints = entity.uniquenessConstraints.map { "unique " + $0.map(field).joined(separator: ",") }
        lines += constraints.sorted()
        let indexes = entity.indexes.map { index in
            "index \(field(index.name)) "
                + index.elements.map { "\(field($0.propertyName)):\($0.isAscending ? "asc" : "desc")" }.joined(separator: ",")
        }
        lines += indexes.sorted()
        return lines.joined(separator: "\n")
    }

    private static func field(_ text: String) -> String { "\(text.utf8.count):\(text)" }
    private static func flag(_ value: Bool) -> String { value ? "1" : "0" }
}
