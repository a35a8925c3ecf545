/// One live object of a projection: every synced attribute and both sides of every relationship.
///
/// Unordered to-manys are sorted by key and ordered ones by their order (M19), so equal graphs are equal
/// values.
struct ProjectedObject: Hashable, Sendable, CustomStringConvertible {
    var attributes: [String: SyncValue?] = [:]
    var toOnes: [String: ObjectKey?] = [:]
    var toManys: [String: [ObjectKey]] = [:]

    var description: String {
        let parts = attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.map(\.description) ?? "nil")" }
            + toOnes.sorted { $0.key < $1.key }.map { "\($0.key)->\($0.value.map(\.description) ?? "nil")" }
            + toManys.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return "{" + parts.joined(separator: ", ") + "}"
    }
}
