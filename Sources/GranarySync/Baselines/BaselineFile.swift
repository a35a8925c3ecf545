import Foundation

/// The cloud form of a baseline: one or more files of kind `.baselinePart`, each with at most
/// `SyncConstants.maximumPartPayload` bytes of payload, named `<count>_<id>_<store>[_<k>of<n>].gsbase`.
///
/// Each part's payload is `{"header":{…},"objects":[…]}`: the header (format, identity, count, vector,
/// part index) repeated in every part, so a part from another baseline or another upload is recognised,
/// and a whole number of ledger objects, so a part never has to be read together with its neighbours to
/// be parsed. The number of parts is only in the names: the writer streams parts out before it knows it.
enum BaselineFile {
    /// The payload format this library writes and reads.
    static let payloadVersion = 1

    struct Header: Hashable, Sendable, Codable {
        var v: Int
        var id: UUID
        var store: StoreID
        var count: Int64
        var vector: RevisionVector
        var part: Int

        init(_ summary: BaselineSummary, part: Int) {
            v = BaselineFile.payloadVersion
            id = summary.id
            store = summary.writer
            count = summary.globalCount
            vector = summary.vector
            self.part = part
        }

        var summary: BaselineSummary { BaselineSummary(id: id, writer: store, globalCount: count, vector: vector) }
    }

    private struct HeaderOnly: Decodable { var header: Header }
    private struct Part: Decodable {
        var header: Header
        var objects: [Object]
    }

    /// One ledger object as a baseline holds it: every collection keyed by strings or sorted, so that an
    /// object's bytes depend only on the object (a dictionary keyed by `ObjectKey` would be written in
    /// hash order), and empty collections left out.
    struct Object: Codable, Hashable, Sendable {
        struct Member: Codable, Hashable, Sendable {
            var member: ObjectKey
            var adds: [Membership.Add]
        }

        var key: ObjectKey
        var incarnations: [Incarnation]
        var attributes: [String: Register<SyncValue?>]?
        var toOnes: [String: Register<ObjectKey?>]?
        var members: [String: [Member]]?
        var fuses: [LedgerObject.Fuse]?

        init(_ object: LedgerObject) {
            key = object.key
            incarnations = object.incarnations
            attributes = object.attributes.isEmpty ? nil : object.attributes
            toOnes = object.toOnes.isEmpty ? nil : object.toOnes
            members = object.members.isEmpty ? nil : object.members.mapValues { members in
                members.sorted { $0.key < $1.key }.map { Member(member: $0.key, adds: $0.value.adds) }
            }
            fuses = object.fuses.isEmpty ? nil : object.fuses
        }

        var ledgerObject: LedgerObject {
            var object = LedgerObject(key: key)
            object.incarnations = incarnations
            object.attributes = attributes ?? [:]
            object.toOnes = toOnes ?? [:]
            for (name, list) in members ?? [:] {
                for entry in list {
                    var membership = Membership()
                    for add in entry.adds { membership.add(add) }
                    if !membership.isEmpty { object.members[name, default: [:]][entry.member] = membership }
                }
            }
            for fuse in fuses ?? [] { object.addFuse(fuse) }
            return object
        }
    }

    /// The summary in one part's bytes, checked against the part's `name`: what a device reads from
    /// the first part to decide whether the baseline is worth downloading whole.
    /// - Throws: `EventFileError` for a damaged, truncated or foreign part, or one whose header does not
    ///   match its name.
    static func summary(ofPart bytes: Data, name: CloudFileName) throws(EventFileError) -> BaselineSummary {
        let file = try framedPayload(bytes, name: name)
        let header = try EventPayloadCoding.decode(HeaderOnly.self, from: file, name: name.fileName).header
        try check(header, against: name)
        return header.summary
    }

    /// The baseline in `parts` (every part of one baseline, any order).
    /// - Throws: `EventFileError` when a part is damaged or truncated, parts are missing, repeated or of
    ///   different baselines, a header does not match its name, or a key appears twice.
    static func decode(parts: [(name: CloudFileName, bytes: Data)]) throws(EventFileError) -> Baseline {
        guard let first = parts.first else {
            throw .malformedPayload(name: "(no baseline part)", path: "", reason: "a baseline has at least one part")
        }
        guard case let .baseline(_, _, _, firstPart) = first.name else {
            throw .invalidFileName(first.name.fileName, reason: "not a baseline name")
        }
        let partCount = firstPart?.count ?? 1
        guard parts.count == partCount else {
            throw .malformedPayload(name: first.name.fileName, path: "",
                                    reason: "\(parts.count) parts given of a baseline of \(partCount)")
        }
        var summary: BaselineSummary?
        var seenParts: Set<Int> = []
        var ledger = Ledger()
        for (name, bytes) in parts {
            let payload = try framedPayload(bytes, name: name)
            let part = try EventPayloadCoding.decode(Part.self, from: payload, name: name.fileName)
            try check(part.header, against: name)
            guard case let .baseline(_, _, _, namePart) = name, (namePart?.count ?? 1) == partCount else {
                throw .malformedPayload(name: name.fileName, path: "", reason: "a part of another number of parts")
            }
            if let summary, summary != part.header.summary {
                throw .malformedPayload(name: name.fileName, path: ".header", reason: "the header differs from the first part's")
            }
            summary = part.header.summary
            guard seenParts.insert(part.header.part).inserted else {
                throw .malformedPayload(name: name.fileName, path: ".header.part", reason: "part \(part.header.part) given twice")
            }
            for entry in part.objects {
                guard ledger.object(entry.key) == nil else {
                    throw .malformedPayload(name: name.fileName, path: ".objects", reason: "\(entry.key) appears twice")
                }
                let object = entry.ledgerObject
                ledger.update(entry.key) { $0 = object }
            }
        }
        guard let summary else { throw .malformedPayload(name: first.name.fileName, path: "", reason: "no parts") }
        return Baseline(id: summary.id, writer: summary.writer, globalCount: summary.globalCount,
                        vector: summary.vector, ledger: ledger)
    }

    private static func framedPayload(_ bytes: Data, name: CloudFileName) throws(EventFileError) -> Data {
        let file = try EventFile(decoding: bytes, name: name.fileName)
        guard file.kind == .baselinePart else {
            throw .corrupt(name: name.fileName, offset: 6, reason: "a file of kind \(file.kind) where a baseline part was expected")
        }
        return file.payload
    }

    private static func check(_ header: Header, against name: CloudFileName) throws(EventFileError) {
        let file = name.fileName
        guard header.v <= payloadVersion else {
            throw .unsupportedFormatVersion(name: file, found: UInt16(clamping: header.v), supported: UInt16(payloadVersion))
        }
        guard header.v >= 1 else { throw .malformedPayload(name: file, path: ".header.v", reason: "version \(header.v)") }
        guard case let .baseline(count, id, store, part) = name else {
            throw .invalidFileName(file, reason: "not a baseline name")
        }
        guard header.count == count, header.id == id, header.store == store, header.part == (part?.index ?? 1) else {
            throw .malformedPayload(name: file, path: ".header",
                                    reason: "count \(header.count), id \(header.id), store \(header.store), part \(header.part) do not match the name")
        }
    }
}

/// Writes a baseline's parts to local files as the ledger objects come, holding at most one part's
/// payload in memory (§13 "Streaming"): the objects can come from a table scan, not only a `Ledger`.
struct BaselineWriter {
    /// One written part: where it is locally and the name to upload it under.
    struct PartFile: Hashable, Sendable {
        var name: CloudFileName
        var url: URL
        var size: Int
    }

    let summary: BaselineSummary
    let directory: URL
    let maximumPayload: Int
    private var written: [(url: URL, size: Int)] = []
    private var body = Data()
    private var objectsInPart = 0
    private var currentPrefix: Data?

    /// A writer of `summary`'s parts into `directory` (which must exist), each payload at most
    /// `maximumPayload` bytes.
    init(summary: BaselineSummary, directory: URL, maximumPayload: Int = SyncConstants.maximumPartPayload) {
        self.summary = summary
        self.directory = directory
        self.maximumPayload = maximumPayload
    }

    /// Adds one ledger object; objects must come once each.
    /// - Throws: `SyncError.dataCorruption` for an object that cannot be encoded or that alone is larger
    ///   than a part; `SyncError.eventStore` naming the file when a part cannot be written.
    mutating func append(_ object: LedgerObject) throws(SyncError) {
        let json: Data
        do { json = try EventPayloadCoding.encode(BaselineFile.Object(object)) } catch {
            throw .dataCorruption("baseline \(summary.stem): \(error)")
        }
        if objectsInPart > 0, try payloadSize(adding: json) > maximumPayload {
            try flush()
            body = Data()
            objectsInPart = 0
            currentPrefix = nil
        }
        guard try payloadSize(adding: json) <= maximumPayload else {
            throw .dataCorruption("baseline \(summary.stem): \(object.key) takes \(json.count) bytes, more than a part holds")
        }
        if objectsInPart > 0 { body.append(UInt8(ascii: ",")) }
        body.append(json)
        objectsInPart += 1
    }

    /// Writes the last part and returns every part, named now that their number is known.
    /// - Throws: `SyncError.eventStore` when a local file cannot be written or renamed.
    mutating func finish() throws(SyncError) -> [PartFile] {
        if objectsInPart > 0 || written.isEmpty { try flush() }
        let names = summary.fileNames(parts: written.count)
        return zip(names, written).map { PartFile(name: $0, url: $1.url, size: $1.size) }
    }

    /// The payload size of the current part with `json` added.
    private mutating func payloadSize(adding json: Data) throws(SyncError) -> Int {
        try prefix().count + body.count + (objectsInPart > 0 ? 1 : 0) + json.count + Self.suffix.count
    }

    private static let suffix = Data("]}".utf8)

    /// The current part's payload up to its first object, made once per part (the header holds the part
    /// number, and encoding it for every object would cost more than the objects).
    private mutating func prefix() throws(SyncError) -> Data {
        if let currentPrefix { return currentPrefix }
        let header: Data
        do { header = try EventPayloadCoding.encode(BaselineFile.Header(summary, part: written.count + 1)) } catch {
            throw .dataCorruption("baseline \(summary.stem): \(error)")
        }
        let prefix = Data("{\"header\":".utf8) + header + Data(",\"objects\":[".utf8)
        currentPrefix = prefix
        return prefix
    }

    private mutating func flush() throws(SyncError) {
        let part = written.count + 1
        let payload = try prefix() + body + Self.suffix
        let bytes = EventFile(kind: .baselinePart, payload: payload).encoded()
        let url = directory.appendingPathComponent("\(summary.stem).part\(part)")
        do {
            try bytes.write(to: url, options: .atomic)
        } catch {
            throw .eventStore("cannot write baseline part \(url.path): \(error.localizedDescription)")
        }
        written.append((url, bytes.count))
    }
}
