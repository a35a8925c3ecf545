import Foundation

/// The identity of one store in an ensemble: a random UUID made at each leech, written in every file
/// name and event the store produces.
///
/// Its text is always the uppercase canonical form, and the 36 bytes of that text order store IDs: the
/// tie-break of two events with one global count (M1) must be the same on every device, so it cannot
/// depend on how a platform happens to compare UUIDs.
struct StoreID: Hashable, Comparable, Sendable, CustomStringConvertible, Codable {
    let uuid: UUID

    init(_ uuid: UUID) { self.uuid = uuid }

    /// A new random store ID.
    static func random() -> StoreID { StoreID(UUID()) }

    /// The store ID written as `text`, which must be the canonical uppercase form (a lowercase or braced
    /// spelling is refused: a name must have exactly one spelling, or two devices could write one file
    /// under two names).
    init?(canonical text: some StringProtocol) {
        guard text.utf8.count == 36, let uuid = UUID(uuidString: String(text)), uuid.uuidString == text else { return nil }
        self.uuid = uuid
    }

    /// The canonical uppercase text.
    var description: String { uuid.uuidString }

    static func < (lhs: StoreID, rhs: StoreID) -> Bool {
        lhs.description.utf8.lexicographicallyPrecedes(rhs.description.utf8)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let id = StoreID(canonical: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(text.prefix(64))' is not a store ID (an uppercase UUID)")
        }
        self = id
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
