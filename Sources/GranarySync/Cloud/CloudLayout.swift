import Foundation

/// Every remote path of one ensemble, in one place (documented in <doc:CloudLayoutAndFormat>):
///
/// ```
/// <ensembleIdentifier>/
///   format.json        {"format":"granary-sync","version":1}, written once at the first leech
///   stores/            <storeID>.gsstore: one registration per leeched store
///   events/            <count>_<storeID>_<rev>.gsevent (multipart: …_<k>of<n>.gsevent)
///   baselines/         <count>_<baselineID>_<storeID>.gsbase (multipart as events)
///   data/              <sha256>_<storeID>.gsdata: large values
/// ```
struct CloudLayout: Sendable, Hashable {
    /// The app's name for the ensemble: the top directory.
    let ensembleIdentifier: String

    /// The layout of the ensemble `ensembleIdentifier`, which must be 1 to 64 of `A-Z a-z 0-9 . _ -`,
    /// not starting with `.` (one path component, never hidden).
    /// - Throws: `CloudFileSystemError.invalidPath` naming what is wrong.
    init(ensembleIdentifier: String) throws(CloudFileSystemError) {
        guard Self.isValidIdentifier(ensembleIdentifier) else {
            throw .invalidPath(ensembleIdentifier, reason: "an ensemble identifier is 1 to 64 of A-Z a-z 0-9 . _ - and does not start with '.'")
        }
        self.ensembleIdentifier = ensembleIdentifier
    }

    static func isValidIdentifier(_ identifier: String) -> Bool {
        (1...64).contains(identifier.utf8.count) && !identifier.hasPrefix(".")
            && identifier.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
                || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }
    }

    var root: String { ensembleIdentifier }
    var formatFile: String { root + "/format.json" }
    var storesDirectory: String { root + "/stores" }
    var eventsDirectory: String { root + "/events" }
    var baselinesDirectory: String { root + "/baselines" }
    var dataDirectory: String { root + "/data" }

    /// The directories a leech creates, parents first.
    var directories: [String] { [root, storesDirectory, eventsDirectory, baselinesDirectory, dataDirectory] }

    /// The directory files named like `name` go into.
    func directory(for name: CloudFileName) -> String {
        switch name {
        case .event: eventsDirectory
        case .baseline: baselinesDirectory
        case .data: dataDirectory
        case .registration: storesDirectory
        }
    }

    /// The remote path of the file `name`.
    func path(for name: CloudFileName) -> String {
        directory(for: name) + "/" + name.fileName
    }

    /// The contents of `format.json`: which format the ensemble's files are in.
    struct FormatMarker: Codable, Sendable, Hashable {
        var format: String
        var version: Int

        static let current = FormatMarker(format: "granary-sync", version: Int(SyncConstants.formatVersion))

        /// The bytes written to `format.json` (sorted keys, no whitespace).
        func encoded() throws(EventFileError) -> Data {
            try EventPayloadCoding.encode(self)
        }

        /// The marker in `data`, checked to be one this library reads.
        /// - Throws: `EventFileError.malformedPayload` for anything but a GranarySync marker,
        ///   `.unsupportedFormatVersion` for a newer one.
        static func decode(_ data: Data, name: String = "format.json") throws(EventFileError) -> FormatMarker {
            let marker = try EventPayloadCoding.decode(FormatMarker.self, from: data, name: name)
            guard marker.format == current.format else {
                throw .malformedPayload(name: name, path: ".format", reason: "'\(marker.format.prefix(40))' is not granary-sync")
            }
            guard marker.version >= 1 else { throw .malformedPayload(name: name, path: ".version", reason: "version \(marker.version)") }
            guard marker.version <= current.version else {
                throw .unsupportedFormatVersion(name: name, found: UInt16(clamping: marker.version), supported: SyncConstants.formatVersion)
            }
            return marker
        }
    }
}
