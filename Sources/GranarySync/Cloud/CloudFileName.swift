import Foundation

/// The name of a file GranarySync writes to the cloud, parsed; formatting and parsing are exact
/// inverses.
///
/// Every name carries the writer's store ID, so no other device can produce it, and every field has
/// one spelling only (decimal without leading zeros, uppercase UUIDs, lowercase hex): a name that parses
/// formats back to itself, so two devices can never write one file under two names, nor two files under
/// one. Anything else in a cloud directory (a conflicted copy, a temp file, a hostile name) is refused by
/// `parse(_:)` with `EventFileError.invalidFileName`.
enum CloudFileName: Hashable, Sendable, CustomStringConvertible {
    /// `<count>_<store>_<revision>.gsevent`, or `…_<k>of<n>.gsevent` for part k of a multipart event.
    case event(globalCount: Int64, store: StoreID, revision: Int64, part: Part?)
    /// `<count>_<baselineID>_<store>.gsbase`, multipart as events.
    case baseline(globalCount: Int64, id: UUID, store: StoreID, part: Part?)
    /// `<sha256>_<store>.gsdata`: a large value, named by its content and writer.
    case data(sha256: String, store: StoreID)
    /// `<store>.gsstore`: a store's registration.
    case registration(store: StoreID)

    /// Part `index` of `count` (1-based, `count` ≥ 2: an event of one part has no suffix).
    struct Part: Hashable, Sendable {
        var index: Int
        var count: Int
    }

    static let eventExtension = "gsevent"
    static let baselineExtension = "gsbase"
    static let dataExtension = "gsdata"
    static let registrationExtension = "gsstore"

    /// The name as written in the cloud.
    var fileName: String {
        switch self {
        case let .event(count, store, revision, part):
            "\(count)_\(store)_\(revision)\(Self.suffix(part)).\(Self.eventExtension)"
        case let .baseline(count, id, store, part):
            "\(count)_\(id.uuidString)_\(store)\(Self.suffix(part)).\(Self.baselineExtension)"
        case let .data(sha256, store):
            "\(sha256)_\(store).\(Self.dataExtension)"
        case let .registration(store):
            "\(store).\(Self.registrationExtension)"
        }
    }

    var description: String { fileName }

    /// The store that wrote the file: the only device that may write or replace it.
    var writer: StoreID {
        switch self {
        case let .event(_, store, _, _), let .baseline(_, _, store, _), let .data(_, store), let .registration(store): store
        }
    }

    /// Whether every field is in range, so that `fileName` parses back to this value.
    var isValid: Bool {
        switch self {
        case let .event(count, _, revision, part): count >= 0 && revision >= 1 && Self.isValid(part)
        case let .baseline(count, _, _, part): count >= 0 && Self.isValid(part)
        case let .data(sha256, _): Self.isSHA256(sha256)
        case .registration: true
        }
    }

    /// The name `text` read as one of ours.
    /// - Throws: `EventFileError.invalidFileName` naming what is wrong, for any name no GranarySync
    ///   device writes.
    static func parse(_ text: String) throws(EventFileError) -> CloudFileName {
        func refuse(_ reason: String) -> EventFileError { .invalidFileName(text, reason: reason) }
        // Everything we write is short ASCII; checking that first keeps the rest simple and bounded.
        guard !text.isEmpty, text.utf8.count <= 200 else { throw refuse("empty or longer than 200 bytes") }
        guard text.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
            || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }) else {
            throw refuse("contains a character other than letters, digits, '_', '-' and '.'")
        }
        let pieces = text.split(separator: ".", omittingEmptySubsequences: false)
        guard pieces.count == 2 else { throw refuse("has no single extension") }
        let stem = pieces[0], ext = pieces[1]
        let fields = stem.split(separator: "_", omittingEmptySubsequences: false)
        switch ext {
        case Substring(eventExtension):
            guard fields.count == 3 || fields.count == 4 else { throw refuse("an event name has 3 or 4 fields separated by '_'") }
            guard let count = decimal(fields[0]) else { throw refuse("the global count is not a canonical decimal") }
            guard let store = StoreID(canonical: fields[1]) else { throw refuse("the store ID is not an uppercase UUID") }
            guard let revision = decimal(fields[2]), revision >= 1 else { throw refuse("the revision is not a canonical decimal ≥ 1") }
            let part = try fields.count == 4 ? self.part(fields[3], in: text) : nil
            return .event(globalCount: count, store: store, revision: revision, part: part)
        case Substring(baselineExtension):
            guard fields.count == 3 || fields.count == 4 else { throw refuse("a baseline name has 3 or 4 fields separated by '_'") }
            guard let count = decimal(fields[0]) else { throw refuse("the global count is not a canonical decimal") }
            guard let id = StoreID(canonical: fields[1])?.uuid else { throw refuse("the baseline ID is not an uppercase UUID") }
            guard let store = StoreID(canonical: fields[2]) else { throw refuse("the store ID is not an uppercase UUID") }
            let part = try fields.count == 4 ? self.part(fields[3], in: text) : nil
            return .baseline(globalCount: count, id: id, store: store, part: part)
        case Substring(dataExtension):
            guard fields.count == 2 else { throw refuse("a data file name has 2 fields separated by '_'") }
            guard isSHA256(fields[0]) else { throw refuse("the content hash is not 64 lowercase hex digits") }
            guard let store = StoreID(canonical: fields[1]) else { throw refuse("the store ID is not an uppercase UUID") }
            return .data(sha256: String(fields[0]), store: store)
        case Substring(registrationExtension):
            guard let store = StoreID(canonical: stem) else { throw refuse("a registration is named by an uppercase store ID") }
            return .registration(store: store)
        default:
            throw refuse("the extension is not one of .gsevent, .gsbase, .gsdata, .gsstore")
        }
    }

    private static func suffix(_ part: Part?) -> String {
        part.map { "_\($0.index)of\($0.count)" } ?? ""
    }

    private static func isValid(_ part: Part?) -> Bool {
        guard let part else { return true }
        return part.count >= 2 && (1...part.count).contains(part.index)
    }

    private static func part(_ field: Substring, in text: String) throws(EventFileError) -> Part {
        let numbers = field.split(separator: "of", maxSplits: 1, omittingEmptySubsequences: false)
        guard numbers.count == 2, let index = decimal(numbers[0]), let count = decimal(numbers[1]),
              count <= Int64(Int32.max), Self.isValid(Part(index: Int(index), count: Int(count))) else {
            throw .invalidFileName(text, reason: "the part is not '<k>of<n>' with 1 ≤ k ≤ n and n ≥ 2")
        }
        return Part(index: Int(index), count: Int(count))
    }

    /// A non-negative decimal in its one spelling: ASCII digits, no sign, no leading zero, fits Int64.
    private static func decimal(_ field: Substring) -> Int64? {
        guard !field.isEmpty, field.utf8.count <= 19, field.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              field == "0" || field.first != "0" else { return nil }
        return Int64(field)
    }

    private static func isSHA256(_ text: some StringProtocol) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
