/// Why a mapping model (`.xcmappingmodel`) cannot be read or used.
public enum MappingModelError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file is missing or unreadable.
    case unreadable(path: String, reason: String)
    /// The file is not XML, or not the XML store Xcode writes.
    case malformed(path: String, line: Int?, reason: String)
    /// An element or attribute Granary does not carry out, named with its object (`type` and `id`): an
    /// archived expression, a source filter, a custom fetch.
    case unsupported(path: String, element: String, reason: String)
    /// A value expression that cannot be read; names the property mapping.
    case badExpression(path: String, mapping: String, property: String, reason: String)
    /// The mapping does not fit the model versions it maps between (an entity or property that the
    /// version lacks, a relationship mapping that names no entity mapping).
    case mismatch(mapping: String, reason: String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason):
            return "cannot read the mapping model \(path): \(reason)"
        case .malformed(let path, let line, let reason):
            return "the mapping model \(path)\(line.map { " line \($0)" } ?? "") is not one Xcode writes: \(reason)"
        case .unsupported(let path, let element, let reason):
            return "the mapping model \(path) uses \(element), which Granary does not support: \(reason)"
        case .badExpression(let path, let mapping, let property, let reason):
            return "the mapping model \(path), entity mapping \(mapping), property \(property): \(reason)"
        case .mismatch(let mapping, let reason):
            return "the entity mapping \(mapping) does not fit its model versions: \(reason)"
        }
    }
}
