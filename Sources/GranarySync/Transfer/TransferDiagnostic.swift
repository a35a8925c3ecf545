/// Something the transfer noticed that is not an error of the merge: a file left for a later merge, or
/// a name that is not GranarySync's. Reported to the caller (and from there to the app's status), never
/// thrown.
enum TransferDiagnostic: Hashable, Sendable, CustomStringConvertible {
    /// A file failed its framing, checksum or payload check: treated as not yet arrived (a sync service
    /// still copying it, or a damaged copy its writer replaces), downloaded again next merge.
    case damagedFile(name: String, reason: String)
    /// Some parts of a multipart event are not listed yet.
    case incompleteEvent(name: String, partsListed: Int, parts: Int)
    /// A listed file was gone when it was downloaded (removed by its writer's rebase in between).
    case vanishedFile(name: String)
    /// A name in an ensemble directory that no GranarySync device writes (a conflicted copy, a stray file).
    case foreignFile(path: String)

    var description: String {
        switch self {
        case let .damagedFile(name, reason): "cloud file \(name) is damaged or incomplete, left for a later merge: \(reason)"
        case let .incompleteEvent(name, listed, parts): "event \(name): \(listed) of \(parts) parts listed so far"
        case let .vanishedFile(name): "cloud file \(name) was removed before it could be downloaded"
        case let .foreignFile(path): "'\(path.prefix(200))' is not a GranarySync file; ignored"
        }
    }
}
