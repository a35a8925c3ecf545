import Foundation

/// The value of one attribute as it travels between devices, exact for every attribute type (M15).
///
/// Numbers and dates keep their bit patterns (a NaN's payload, −0 and the infinities included), integers
/// their full 64 bits, decimals their digits; transformable values travel as the bytes the store holds,
/// never decoded, so a device without the value's type still passes them on unchanged. A missing value
/// is `nil` of `SyncValue?`, written as JSON `null`.
///
/// In JSON each value is a two-element array, a one-letter tag and a string (§5.3 of the plan):
/// strings for numbers so that no decoder rounds them through a `Double`.
enum SyncValue: Sendable, Hashable, Codable, CustomStringConvertible {
    /// integer16, integer32 and integer64 attributes.
    case integer(Int64)
    case double(Double)
    case float(Float)
    case decimal(Decimal)
    case boolean(Bool)
    case string(String)
    case date(Date)
    /// binaryData and transformable attributes up to `SyncConstants.inlineDataLimit` bytes.
    case data(Data)
    /// A larger binaryData or transformable value, stored as a data file of this name (a
    /// `CloudFileName.data`).
    case dataFile(CloudFileName)
    case uuid(UUID)
    case uri(URL)

    // Equality and hashing by representation: 0.0 and −0.0 differ, a NaN equals itself (with its
    // payload), so that "the same value" means "the same bytes on every device".
    static func == (lhs: SyncValue, rhs: SyncValue) -> Bool {
        switch (lhs, rhs) {
        case let (.integer(a), .integer(b)): a == b
        case let (.double(a), .double(b)): a.bitPattern == b.bitPattern
        case let (.float(a), .float(b)): a.bitPattern == b.bitPattern
        case let (.decimal(a), .decimal(b)): a.description == b.description
        case let (.boolean(a), .boolean(b)): a == b
        case let (.string(a), .string(b)): a.unicodeScalars.elementsEqual(b.unicodeScalars)
        case let (.date(a), .date(b)): a.timeIntervalSinceReferenceDate.bitPattern == b.timeIntervalSinceReferenceDate.bitPattern
        case let (.data(a), .data(b)): a == b
        case let (.dataFile(a), .dataFile(b)): a == b
        case let (.uuid(a), .uuid(b)): a == b
        case let (.uri(a), .uri(b)): a.absoluteString == b.absoluteString
        default: false
        }
    }

    func hash(into hasher: inout Hasher) {
        let (tag, text) = encoded
        hasher.combine(tag)
        hasher.combine(text.map { Array($0.unicodeScalars) })
        if case let .boolean(value) = self { hasher.combine(value) }
    }

    var description: String {
        switch self {
        case let .boolean(value): "b:\(value)"
        case let .data(bytes): "x:\(bytes.count) bytes"
        default: "\(encoded.tag):\(encoded.text ?? "")"
        }
    }

    /// The tag and text written for this value (`text` is nil for booleans, written as JSON `true` or
    /// `false`).
    private var encoded: (tag: String, text: String?) {
        switch self {
        case let .integer(value): ("i", String(value))
        case let .double(value): ("d", Self.hex(value.bitPattern, digits: 16))
        case let .float(value): ("f", Self.hex(UInt64(value.bitPattern), digits: 8))
        case let .decimal(value): ("m", value.isNaN ? "NaN" : value.description)
        case .boolean: ("b", nil)
        case let .string(value): ("s", value)
        case let .date(value): ("t", Self.hex(value.timeIntervalSinceReferenceDate.bitPattern, digits: 16))
        case let .data(value): ("x", value.base64EncodedString())
        case let .dataFile(name): ("F", name.fileName)
        case let .uuid(value): ("u", value.uuidString)
        case let .uri(value): ("r", value.absoluteString)
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        let (tag, text) = encoded
        try container.encode(tag)
        if case let .boolean(value) = self { try container.encode(value) } else { try container.encode(text!) }
    }

    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        let tag = try container.decode(String.self)
        func refuse(_ reason: String) -> DecodingError {
            DecodingError.dataCorruptedError(in: container, debugDescription: reason)
        }
        if tag == "b" {
            self = .boolean(try container.decode(Bool.self))
        } else {
            let text = try container.decode(String.self)
            let shown = text.prefix(80)
            switch tag {
            case "i":
                // Only the canonical spelling: "+5", "05" and "-0" would be second spellings of one value.
                guard let value = Int64(text), String(value) == text else { throw refuse("'\(shown)' is not a 64-bit integer") }
                self = .integer(value)
            case "d":
                guard let bits = Self.bits(text, digits: 16) else { throw refuse("'\(shown)' is not 16 hex digits of a double") }
                self = .double(Double(bitPattern: bits))
            case "f":
                guard let bits = Self.bits(text, digits: 8) else { throw refuse("'\(shown)' is not 8 hex digits of a float") }
                self = .float(Float(bitPattern: UInt32(bits)))
            case "m":
                if text == "NaN" {
                    self = .decimal(.nan)
                } else {
                    guard let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")), !value.isNaN,
                          value.description == text else { throw refuse("'\(shown)' is not a decimal") }
                    self = .decimal(value)
                }
            case "s":
                self = .string(text)
            case "t":
                guard let bits = Self.bits(text, digits: 16) else { throw refuse("'\(shown)' is not 16 hex digits of a date") }
                self = .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: bits)))
            case "x":
                guard let data = Data(base64Encoded: text), data.base64EncodedString() == text else {
                    throw refuse("the data is not canonical base64")
                }
                self = .data(data)
            case "F":
                guard let name = try? CloudFileName.parse(text), case .data = name else {
                    throw refuse("'\(shown)' is not the name of a data file")
                }
                self = .dataFile(name)
            case "u":
                guard let uuid = UUID(uuidString: text), uuid.uuidString == text else { throw refuse("'\(shown)' is not an uppercase UUID") }
                self = .uuid(uuid)
            case "r":
                guard let url = URL(string: text), url.absoluteString == text else { throw refuse("'\(shown)' is not an absolute URL") }
                self = .uri(url)
            default:
                throw refuse("'\(tag.prefix(8))' is not a value type")
            }
        }
        guard container.isAtEnd else { throw refuse("a value has two elements") }
    }

    private static func hex(_ bits: UInt64, digits: Int) -> String {
        let text = String(bits, radix: 16)
        return String(repeating: "0", count: digits - text.count) + text
    }

    /// The bits of exactly `digits` lowercase hex digits; nil for any other text.
    private static func bits(_ text: String, digits: Int) -> UInt64? {
        guard text.utf8.count == digits, text.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            return nil
        }
        return UInt64(text, radix: 16)
    }
}
