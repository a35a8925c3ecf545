import Foundation

/// How one event travels as files: its stored payload (the canonical JSON of the `Event`) cut into
/// slices of at most `partPayloadLimit` bytes, each framed as an `EventFile` of kind `.eventPart` under
/// the part's name, and joined back in part order by the reader.
///
/// Cutting the bytes rather than the changes keeps the files a pure function of the stored payload
/// (I1): a re-export after a crash produces the same names with the same bytes. Each part has its own
/// checksum, so a damaged part is found without reading the others.
enum EventFileParts {
    /// The files of the event `id` at `globalCount` whose payload is `payload`, in part order.
    static func files(id: EventID, globalCount: Int64, payload: Data,
                      partPayloadLimit: Int = SyncConstants.maximumPartPayload) -> [(name: CloudFileName, bytes: Data)] {
        let limit = max(1, partPayloadLimit)
        let count = max(1, (payload.count + limit - 1) / limit)
        return (0..<count).map { index in
            let start = payload.startIndex + index * limit
            let slice = payload[start..<min(payload.endIndex, start + limit)]
            let part = count == 1 ? nil : CloudFileName.Part(index: index + 1, count: count)
            let name = CloudFileName.event(globalCount: globalCount, store: id.store, revision: id.revision, part: part)
            return (name, EventFile(kind: .eventPart, payload: Data(slice)).encoded())
        }
    }

    /// The event in the files `parts` (name and bytes, any order), every part checked.
    /// - Throws: `EventFileError` for a part that fails its framing or checksum, is not an event part,
    ///   is missing, or whose joined payload does not decode to the event its names promise (a file
    ///   whose content contradicts its name is as damaged as one with a bad checksum).
    static func event(from parts: [(name: CloudFileName, bytes: Data)]) throws(EventFileError) -> Event {
        try eventAndPayload(from: parts).event
    }

    /// The event in the files `parts`, as `event(from:)` reads it, with its joined payload: what the
    /// event store keeps for it, so that it need not be encoded again.
    /// - Throws: what `event(from:)` throws.
    static func eventAndPayload(from parts: [(name: CloudFileName, bytes: Data)]) throws(EventFileError) -> (event: Event, payload: Data) {
        guard let first = parts.first, case let .event(count, store, revision, firstPart) = first.name else {
            throw .invalidFileName(parts.first?.name.fileName ?? "", reason: "not an event file name")
        }
        let expected = firstPart?.count ?? 1
        var slices = [Data?](repeating: nil, count: expected)
        for (name, bytes) in parts {
            guard case let .event(c, s, r, part) = name, c == count, s == store, r == revision,
                  (part?.count ?? 1) == expected else {
                throw .invalidFileName(name.fileName, reason: "not a part of event \(first.name.fileName)")
            }
            let file = try EventFile(decoding: bytes, name: name.fileName)
            guard file.kind == .eventPart else {
                throw .corrupt(name: name.fileName, offset: 6, reason: "a file of kind \(file.kind) where an event part was expected")
            }
            slices[(part?.index ?? 1) - 1] = file.payload
        }
        var payload = Data()
        for (index, slice) in slices.enumerated() {
            guard let slice else {
                throw .corrupt(name: first.name.fileName, offset: 0, reason: "part \(index + 1) of \(expected) is missing")
            }
            payload.append(slice)
        }
        let event = try EventPayloadCoding.decode(Event.self, from: payload, name: first.name.fileName)
        guard event.id == EventID(store: store, revision: revision), event.meta.globalCount == count else {
            throw .malformedPayload(name: first.name.fileName, path: ".meta",
                                    reason: "holds event \(event.id) at count \(event.meta.globalCount), not the one its name gives")
        }
        return (event, payload)
    }
}
