/// Where an event stands in this store's life cycle, as kept in `event.status`.
///
/// Local events are integrated when they are recorded (capture folds them into the ledger in the same
/// commit), so they only move from unexported to exported; downloaded events move to integrated when a
/// merge step takes them in.
enum EventStatus: Int64, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    case localUnexported = 0
    case exported = 1
    case downloaded = 2
    case integrated = 3
    /// Covered by a baseline this store wrote and removed (or about to be removed) from the cloud: never
    /// uploaded again.
    case covered = 4

    var description: String {
        switch self {
        case .localUnexported: "local, not exported"
        case .exported: "exported"
        case .downloaded: "downloaded"
        case .integrated: "integrated"
        case .covered: "covered by a baseline"
        }
    }
}
