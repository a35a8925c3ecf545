/// Why a cloud file, its payload or its name was refused; each case names the file and, for framing,
/// the byte offset where reading stopped.
///
/// A refused file is treated as not yet arrived (it may still be uploading, or be a damaged copy its
/// writer will replace), never integrated and never a crash.
enum EventFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file ends at `length` bytes, before the `needed` bytes its header promises (or the header
    /// itself) — a partial copy.
    case truncated(name: String, length: Int, needed: Int)
    /// The first four bytes are not `GSYN`: not a GranarySync file at all.
    case notASyncFile(name: String)
    /// Written by a newer library: format `found`, while this one reads up to `supported`.
    case unsupportedFormatVersion(name: String, found: UInt16, supported: UInt16)
    /// The checksum at `offset` does not match the bytes before it.
    case checksumMismatch(name: String, offset: Int, stored: UInt32, computed: UInt32)
    /// A field of the framing is impossible (unknown kind, flag bits, sizes, compressed data).
    case corrupt(name: String, offset: Int, reason: String)
    /// The payload is well framed but is not the JSON it should be; `path` is the coding path.
    case malformedPayload(name: String, path: String, reason: String)
    /// A value could not be encoded (a non-finite number where JSON has none, a name too long…).
    case unencodable(reason: String)
    /// A name in a cloud directory that no GranarySync device writes.
    case invalidFileName(String, reason: String)

    var description: String {
        switch self {
        case let .truncated(name, length, needed):
            "cloud file \(name) is truncated: \(length) bytes, \(needed) needed"
        case let .notASyncFile(name):
            "cloud file \(name) is not a GranarySync file (no GSYN magic at offset 0)"
        case let .unsupportedFormatVersion(name, found, supported):
            "cloud file \(name) has format version \(found); this library reads up to version \(supported) — update it"
        case let .checksumMismatch(name, offset, stored, computed):
            "cloud file \(name) fails its checksum at offset \(offset): stored \(hex(stored)), computed \(hex(computed))"
        case let .corrupt(name, offset, reason):
            "cloud file \(name) is damaged at offset \(offset): \(reason)"
        case let .malformedPayload(name, path, reason):
            "cloud file \(name) has a malformed payload at \(path.isEmpty ? "its top level" : path): \(reason)"
        case let .unencodable(reason):
            "cannot encode a cloud file: \(reason)"
        case let .invalidFileName(name, reason):
            "'\(name.debugDescription.dropFirst().dropLast().prefix(200))' is not a GranarySync file name: \(reason)"
        }
    }
}

private func hex(_ value: UInt32) -> String {
    let digits = String(value, radix: 16)
    return "0x" + String(repeating: "0", count: 8 - digits.count) + digits
}
