/// One insert of an object (M8, M11): alive until a delete that saw it is integrated (M9).
struct Incarnation: Hashable, Sendable, Codable {
    var insert: EventMeta
    var isKilled = false
}
