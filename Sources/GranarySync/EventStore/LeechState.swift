/// How far this store has come in joining its ensemble (§12.5); kept in `state.leechState`.
enum LeechState: Int64, Hashable, Sendable {
    case notLeeched = 0
    /// Created, downloading; discarded at open if the leech did not finish.
    case seeding = 1
    case leeched = 2
    /// Leeched and its registration written to the cloud.
    case registered = 3
}
