/// The declared type of a column; values of any other type are rejected on write.
public enum ColumnType: String, Sendable, Hashable, Codable, CaseIterable {
    case bool, int, double, string, bytes, date, uuid, reference, references
    /// Accepts every type: for dynamic data and for columns whose type a higher layer checks itself.
    case any
}
