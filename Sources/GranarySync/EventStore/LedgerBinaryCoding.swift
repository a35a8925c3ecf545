import Foundation

/// The compact binary form of the ledger's values in the event store's rows and pending merges.
///
/// The ledger is rewritten on every merge and capture — a register per attribute, a membership per
/// member — and JSON made that the most expensive part of a merge (encoding a register cost more than
/// writing its row). This form is only ever read by the device that wrote it, so it needs no canonical
/// spelling across versions of the library, only to be exact and to refuse damage: every value keeps its
/// bits (as `SyncValue`'s JSON does), and a truncated or malformed buffer throws instead of trapping.
///
/// A buffer starts with `marker`, a byte no JSON text starts with, so that rows written in JSON by an
/// older version still read (`LedgerRows` falls back to the JSON decoder).
enum LedgerBinaryCoding {
    static let marker: UInt8 = 0xB1

    /// Whether `bytes` are in this form rather than JSON.
    static func isBinary(_ bytes: some Collection<UInt8>) -> Bool { bytes.first == marker }

    static func encode(_ register: Register<SyncValue?>) -> [UInt8] {
        var writer = Writer()
        writer.register(register) { $0.optionalValue($1) }
        return writer.bytes
    }

    static func encode(_ register: Register<ObjectKey?>) -> [UInt8] {
        var writer = Writer()
        writer.register(register) { $0.optionalKey($1) }
        return writer.bytes
    }

    static func encode(_ membership: Membership) -> [UInt8] {
        var writer = Writer()
        writer.membership(membership)
        return writer.bytes
    }

    static func encode(_ incarnations: [Incarnation]) -> [UInt8] {
        var writer = Writer()
        writer.incarnations(incarnations)
        return writer.bytes
    }

    static func encode(_ fuses: [LedgerObject.Fuse]) -> [UInt8] {
        var writer = Writer()
        writer.fuses(fuses)
        return writer.bytes
    }

    static func encode(_ meta: EventMeta) -> [UInt8] {
        var writer = Writer()
        writer.meta(meta)
        return writer.bytes
    }

    static func meta(_ bytes: some Collection<UInt8>) throws(Failure) -> EventMeta {
        try read(bytes) { reader throws(Failure) in try reader.meta() }
    }

    /// Whole ledger objects, as a pending merge keeps them.
    static func encode(_ objects: [LedgerObject]) -> [UInt8] {
        var writer = Writer()
        writer.count(objects.count)
        for object in objects { writer.object(object) }
        return writer.bytes
    }

    static func valueRegister(_ bytes: some Collection<UInt8>) throws(Failure) -> Register<SyncValue?> {
        try read(bytes) { reader throws(Failure) in try reader.register { reader throws(Failure) in try reader.optionalValue() } }
    }

    static func keyRegister(_ bytes: some Collection<UInt8>) throws(Failure) -> Register<ObjectKey?> {
        try read(bytes) { reader throws(Failure) in try reader.register { reader throws(Failure) in try reader.optionalKey() } }
    }

    static func membership(_ bytes: some Collection<UInt8>) throws(Failure) -> Membership {
        try read(bytes) { reader throws(Failure) in try reader.membership() }
    }

    static func incarnations(_ bytes: some Collection<UInt8>) throws(Failure) -> [Incarnation] {
        try read(bytes) { reader throws(Failure) in try reader.incarnations() }
    }

    static func fuses(_ bytes: some Collection<UInt8>) throws(Failure) -> [LedgerObject.Fuse] {
        try read(bytes) { reader throws(Failure) in try reader.fuses() }
    }

    static func objects(_ bytes: some Collection<UInt8>) throws(Failure) -> [LedgerObject] {
        try read(bytes) { reader throws(Failure) in
            var objects: [LedgerObject] = []
            for _ in 0..<(try reader.count()) { objects.append(try reader.object()) }
            return objects
        }
    }

    /// What was wrong with a buffer and where.
    struct Failure: Error, CustomStringConvertible {
        var offset: Int
        var reason: String
        var description: String { "at byte \(offset): \(reason)" }
    }

    private static func read<T>(_ bytes: some Collection<UInt8>, _ body: (inout Reader) throws(Failure) -> T) throws(Failure) -> T {
        var reader = Reader(Array(bytes))
        guard try reader.byte() == marker else { throw Failure(offset: 0, reason: "not the ledger's binary form") }
        let value = try body(&reader)
        guard reader.isAtEnd else { throw reader.failure("\(reader.remaining) bytes after the value") }
        return value
    }

    // Value tags. Booleans are two tags so that they take one byte.
    private enum Tag: UInt8 {
        case none = 0, integer, double, float, decimal, isFalse, isTrue, string, date, data, dataFile, uuid, uri
    }

    struct Writer {
        var bytes: [UInt8] = [LedgerBinaryCoding.marker]

        mutating func byte(_ value: UInt8) { bytes.append(value) }

        mutating func unsigned(_ value: UInt64) {
            var value = value
            while value >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
                value >>= 7
            }
            bytes.append(UInt8(value))
        }

        mutating func signed(_ value: Int64) { unsigned(UInt64(bitPattern: (value << 1) ^ (value >> 63))) }

        mutating func count(_ value: Int) { unsigned(UInt64(value)) }

        mutating func fixed(_ value: UInt64, width: Int) {
            for shift in stride(from: 0, to: width * 8, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
        }

        mutating func string(_ value: String) {
            var value = value
            value.withUTF8 { utf8 in
                count(utf8.count)
                bytes.append(contentsOf: utf8)
            }
        }

        mutating func uuid(_ value: UUID) {
            withUnsafeBytes(of: value.uuid) { bytes.append(contentsOf: $0) }
        }

        mutating func key(_ key: ObjectKey) {
            string(key.entity)
            string(key.globalID)
        }

        mutating func optionalKey(_ key: ObjectKey?) {
            guard let key else { return byte(Tag.none.rawValue) }
            byte(1)
            self.key(key)
        }

        mutating func meta(_ meta: EventMeta) {
            uuid(meta.id.store.uuid)
            signed(meta.id.revision)
            signed(meta.globalCount)
            if meta.vector.revisions.count == 1, let (store, revision) = meta.vector.revisions.first {
                count(1)
                uuid(store.uuid)
                return signed(revision)
            }
            // By the UUID's bytes, which is as deterministic as the store ID's text and needs no string.
            let entries = meta.vector.revisions.map { (bytes: withUnsafeBytes(of: $0.key.uuid.uuid) { Array($0) }, revision: $0.value) }
                .sorted { $0.bytes.lexicographicallyPrecedes($1.bytes) }
            count(entries.count)
            for entry in entries {
                bytes.append(contentsOf: entry.bytes)
                signed(entry.revision)
            }
        }

        mutating func optionalValue(_ value: SyncValue?) {
            guard let value else { return byte(Tag.none.rawValue) }
            switch value {
            case let .integer(number): byte(Tag.integer.rawValue); signed(number)
            case let .double(number): byte(Tag.double.rawValue); fixed(number.bitPattern, width: 8)
            case let .float(number): byte(Tag.float.rawValue); fixed(UInt64(number.bitPattern), width: 4)
            case let .decimal(number): byte(Tag.decimal.rawValue); string(number.isNaN ? "NaN" : number.description)
            case let .boolean(flag): byte(flag ? Tag.isTrue.rawValue : Tag.isFalse.rawValue)
            case let .string(text): byte(Tag.string.rawValue); string(text)
            case let .date(date): byte(Tag.date.rawValue); fixed(date.timeIntervalSinceReferenceDate.bitPattern, width: 8)
            case let .data(data): byte(Tag.data.rawValue); count(data.count); bytes.append(contentsOf: data)
            case let .dataFile(name): byte(Tag.dataFile.rawValue); string(name.fileName)
            case let .uuid(uuid): byte(Tag.uuid.rawValue); self.uuid(uuid)
            case let .uri(url): byte(Tag.uri.rawValue); string(url.absoluteString)
            }
        }

        mutating func register<V>(_ register: Register<V>, _ value: (inout Writer, V) -> Void) {
            count(register.candidates.count)
            for write in register.candidates {
                value(&self, write.value)
                meta(write.op)
            }
        }

        mutating func membership(_ membership: Membership) {
            count(membership.adds.count)
            for add in membership.adds {
                meta(add.op)
                if let orderKey = add.orderKey {
                    byte(1)
                    fixed(orderKey.bitPattern, width: 8)
                } else {
                    byte(0)
                }
            }
        }

        mutating func incarnations(_ incarnations: [Incarnation]) {
            count(incarnations.count)
            for incarnation in incarnations {
                meta(incarnation.insert)
                byte(incarnation.isKilled ? 1 : 0)
            }
        }

        mutating func fuses(_ fuses: [LedgerObject.Fuse]) {
            count(fuses.count)
            for fuse in fuses {
                key(fuse.other)
                meta(fuse.op)
            }
        }

        mutating func object(_ object: LedgerObject) {
            key(object.key)
            incarnations(object.incarnations)
            fuses(object.fuses)
            count(object.attributes.count)
            for (name, register) in object.attributes.sorted(by: { $0.key < $1.key }) {
                string(name)
                self.register(register) { $0.optionalValue($1) }
            }
            count(object.toOnes.count)
            for (name, register) in object.toOnes.sorted(by: { $0.key < $1.key }) {
                string(name)
                self.register(register) { $0.optionalKey($1) }
            }
            count(object.members.count)
            for (relationship, members) in object.members.sorted(by: { $0.key < $1.key }) {
                string(relationship)
                count(members.count)
                for (member, membership) in members.sorted(by: { $0.key < $1.key }) {
                    key(member)
                    self.membership(membership)
                }
            }
        }
    }

    struct Reader {
        private let bytes: [UInt8]
        private var offset = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var isAtEnd: Bool { offset == bytes.count }
        var remaining: Int { bytes.count - offset }

        func failure(_ reason: String) -> Failure { Failure(offset: offset, reason: reason) }

        mutating func byte() throws(Failure) -> UInt8 {
            guard offset < bytes.count else { throw failure("the value is cut short") }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func take(_ count: Int) throws(Failure) -> ArraySlice<UInt8> {
            guard count >= 0, count <= remaining else { throw failure("\(count) bytes announced, \(remaining) left") }
            defer { offset += count }
            return bytes[offset..<offset + count]
        }

        mutating func unsigned() throws(Failure) -> UInt64 {
            var value: UInt64 = 0
            for shift in stride(from: UInt64(0), to: 64, by: 7) {
                let next = try byte()
                value |= UInt64(next & 0x7F) << shift
                if next < 0x80 { return value }
            }
            throw failure("a number longer than 64 bits")
        }

        mutating func signed() throws(Failure) -> Int64 {
            let raw = try unsigned()
            return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
        }

        mutating func count() throws(Failure) -> Int {
            let value = try unsigned()
            // No count can exceed the bytes left: each counted item takes at least one.
            guard value <= UInt64(remaining) else { throw failure("a count of \(value) with \(remaining) bytes left") }
            return Int(value)
        }

        mutating func fixed(width: Int) throws(Failure) -> UInt64 {
            var value: UInt64 = 0
            for (index, byte) in try take(width).enumerated() { value |= UInt64(byte) << UInt64(index * 8) }
            return value
        }

        mutating func string() throws(Failure) -> String {
            let utf8 = try take(try count())
            guard let text = String(validating: utf8, as: UTF8.self) else { throw failure("text that is not UTF-8") }
            return text
        }

        mutating func uuid() throws(Failure) -> UUID {
            let raw = try take(16)
            // A zero tuple to fill: `UUID()` would read the system's random source for nothing.
            var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &uuid) { $0.copyBytes(from: raw) }
            return UUID(uuid: uuid)
        }

        mutating func key() throws(Failure) -> ObjectKey {
            ObjectKey(try string(), try string())
        }

        mutating func optionalKey() throws(Failure) -> ObjectKey? {
            switch try byte() {
            case Tag.none.rawValue: return nil
            case 1: return try key()
            case let other: throw failure("\(other) is not a to-one's tag")
            }
        }

        mutating func meta() throws(Failure) -> EventMeta {
            let store = StoreID(try uuid())
            let revision = try signed()
            let globalCount = try signed()
            var vector = RevisionVector()
            for _ in 0..<(try count()) {
                let other = StoreID(try uuid())
                vector[other] = try signed()
            }
            return EventMeta(id: EventID(store: store, revision: revision), globalCount: globalCount, vector: vector)
        }

        mutating func optionalValue() throws(Failure) -> SyncValue? {
            let tagByte = try byte()
            guard let tag = Tag(rawValue: tagByte) else { throw failure("\(tagByte) is not a value's tag") }
            switch tag {
            case .none: return nil
            case .integer: return .integer(try signed())
            case .double: return .double(Double(bitPattern: try fixed(width: 8)))
            case .float: return .float(Float(bitPattern: UInt32(try fixed(width: 4))))
            case .decimal:
                let text = try string()
                if text == "NaN" { return .decimal(.nan) }
                guard let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")), !value.isNaN else {
                    throw failure("'\(text.prefix(80))' is not a decimal")
                }
                return .decimal(value)
            case .isFalse: return .boolean(false)
            case .isTrue: return .boolean(true)
            case .string: return .string(try string())
            case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try fixed(width: 8))))
            case .data: return .data(Data(try take(try count())))
            case .dataFile:
                let text = try string()
                guard let name = try? CloudFileName.parse(text), case .data = name else {
                    throw failure("'\(text.prefix(80))' is not the name of a data file")
                }
                return .dataFile(name)
            case .uuid: return .uuid(try uuid())
            case .uri:
                let text = try string()
                guard let url = URL(string: text) else { throw failure("'\(text.prefix(80))' is not a URL") }
                return .uri(url)
            }
        }

        mutating func register<V>(_ value: (inout Reader) throws(Failure) -> V) throws(Failure) -> Register<V> {
            var writes: [Register<V>.Write] = []
            for _ in 0..<(try count()) {
                let written = try value(&self)
                writes.append(Register.Write(value: written, op: try meta()))
            }
            return Register(candidates: writes)
        }

        mutating func membership() throws(Failure) -> Membership {
            var adds: [Membership.Add] = []
            for _ in 0..<(try count()) {
                let op = try meta()
                let orderKey: Double?
                switch try byte() {
                case 0: orderKey = nil
                case 1: orderKey = Double(bitPattern: try fixed(width: 8))
                case let other: throw failure("\(other) is not an order key's tag")
                }
                adds.append(Membership.Add(op: op, orderKey: orderKey))
            }
            return Membership(adds: adds)
        }

        mutating func incarnations() throws(Failure) -> [Incarnation] {
            var incarnations: [Incarnation] = []
            for _ in 0..<(try count()) {
                let insert = try meta()
                switch try byte() {
                case 0: incarnations.append(Incarnation(insert: insert, isKilled: false))
                case 1: incarnations.append(Incarnation(insert: insert, isKilled: true))
                case let other: throw failure("\(other) is not an incarnation's state")
                }
            }
            return incarnations
        }

        mutating func fuses() throws(Failure) -> [LedgerObject.Fuse] {
            var fuses: [LedgerObject.Fuse] = []
            for _ in 0..<(try count()) {
                let other = try key()
                fuses.append(LedgerObject.Fuse(other: other, op: try meta()))
            }
            return fuses
        }

        mutating func object() throws(Failure) -> LedgerObject {
            var object = LedgerObject(key: try key())
            object.incarnations = try incarnations()
            object.fuses = try fuses()
            for _ in 0..<(try count()) {
                let name = try string()
                object.attributes[name] = try register { reader throws(Failure) in try reader.optionalValue() }
            }
            for _ in 0..<(try count()) {
                let name = try string()
                object.toOnes[name] = try register { reader throws(Failure) in try reader.optionalKey() }
            }
            for _ in 0..<(try count()) {
                let relationship = try string()
                var members: [ObjectKey: Membership] = [:]
                for _ in 0..<(try count()) {
                    let member = try key()
                    members[member] = try membership()
                }
                object.members[relationship] = members
            }
            return object
        }
    }
}
