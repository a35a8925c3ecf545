import Foundation
import GranaryStorage
import PropertyBased
import Testing
@testable import GranarySync

@Suite struct LedgerBinaryCodingTests {
    static func meta(_ g: inout SplitMix, stores: [StoreID]) -> EventMeta {
        var vector = RevisionVector()
        for store in stores where Bool.random(using: &g) { vector[store] = Int64.random(in: 1...1_000_000, using: &g) }
        return EventMeta(id: EventID(store: stores.randomElement(using: &g)!, revision: Int64.random(in: 1...Int64.max, using: &g)),
                         globalCount: Int64.random(in: 0...Int64.max, using: &g), vector: vector)
    }

    static func key(_ g: inout SplitMix) -> ObjectKey {
        ObjectKey(["Item", "Folder", "Ünïcode 👩🏽‍🚀", ""].randomElement(using: &g)!, UUID().uuidString + String(Int.random(in: 0...9, using: &g)))
    }

    /// A ledger object with every part filled at random, values drawn from `SyncValueTests.edges`.
    static func object(_ g: inout SplitMix) -> LedgerObject {
        let stores = (0..<Int.random(in: 1...4, using: &g)).map { _ in g.storeID() }
        var object = LedgerObject(key: key(&g))
        for _ in 0..<Int.random(in: 0...3, using: &g) {
            object.incarnations.append(Incarnation(insert: meta(&g, stores: stores), isKilled: Bool.random(using: &g)))
        }
        for _ in 0..<Int.random(in: 0...2, using: &g) { object.addFuse(.init(other: key(&g), op: meta(&g, stores: stores))) }
        for name in ["name", "count", "blob", "é"] where Bool.random(using: &g) {
            var register = Register<SyncValue?>()
            for _ in 0..<Int.random(in: 1...3, using: &g) {
                let value = Int.random(in: 0...9, using: &g) == 0 ? nil : SyncValueTests.edges.randomElement(using: &g)!
                register.record(value, by: meta(&g, stores: stores))
            }
            object.attributes[name] = register
        }
        if Bool.random(using: &g) {
            var register = Register<ObjectKey?>()
            register.record(Bool.random(using: &g) ? key(&g) : nil, by: meta(&g, stores: stores))
            object.toOnes["folder"] = register
        }
        for relationship in ["items", "tags"] where Bool.random(using: &g) {
            for _ in 0..<Int.random(in: 1...4, using: &g) {
                var membership = Membership()
                let orderKey: Double? = Bool.random(using: &g) ? [0.5, -0.0, 1e300, -3].randomElement(using: &g)! : nil
                membership.add(.init(op: meta(&g, stores: stores), orderKey: orderKey))
                object.members[relationship, default: [:]][key(&g)] = membership
            }
        }
        return object
    }

    /// Equality that tells NaNs' payloads and −0 apart in order keys too (`Membership`'s own `==`
    /// compares doubles by value).
    static func same(_ a: [LedgerObject], _ b: [LedgerObject]) -> Bool {
        guard a == b else { return false }
        for (x, y) in zip(a, b) {
            for (relationship, members) in x.members {
                for (member, membership) in members
                where membership.adds.map(\.orderKey?.bitPattern) != y.members[relationship]?[member]?.adds.map(\.orderKey?.bitPattern) {
                    return false
                }
            }
        }
        return true
    }

    @Test func everyValueOfEveryTypeComesBackWithItsBits() throws {
        var g = SplitMix(seed: 7)
        let stores = [g.storeID(), g.storeID()]
        for value in SyncValueTests.edges + [nil] {
            var register = Register<SyncValue?>()
            register.record(value, by: Self.meta(&g, stores: stores))
            let back = try LedgerBinaryCoding.valueRegister(LedgerBinaryCoding.encode(register))
            #expect(back == register, "\(value.map(String.init(describing:)) ?? "nil") came back as \(back)")
        }
    }

    @Test func randomLedgerObjectsComeBackEqual() async {
        await propertyCheck(count: 200, input: Gen.int(in: 0...Int.max)) { seed in
            var g = SplitMix(seed: seed)
            let objects = (0..<Int.random(in: 0...5, using: &g)).map { _ in Self.object(&g) }
            let bytes = LedgerBinaryCoding.encode(objects)
            let back = try? LedgerBinaryCoding.objects(bytes)
            #expect(back.map { Self.same($0, objects) } == true, "seed \(seed)")
            // One object's parts through the row encodings, as `LedgerRows` writes them.
            for object in objects {
                #expect((try? LedgerBinaryCoding.incarnations(LedgerBinaryCoding.encode(object.incarnations))) == object.incarnations)
                #expect((try? LedgerBinaryCoding.fuses(LedgerBinaryCoding.encode(object.fuses))) == object.fuses)
                for register in object.toOnes.values { #expect((try? LedgerBinaryCoding.keyRegister(LedgerBinaryCoding.encode(register))) == register) }
                for membership in object.members.values.flatMap(\.values) {
                    #expect((try? LedgerBinaryCoding.membership(LedgerBinaryCoding.encode(membership))) == membership)
                }
            }
        }
    }

    @Test func encodingIsDeterministicWhateverTheDictionaryOrder() {
        var g = SplitMix(seed: 11)
        let object = Self.object(&g)
        var copy = LedgerObject(key: object.key)
        copy.incarnations = object.incarnations
        copy.fuses = object.fuses
        for (name, register) in object.attributes.reversed() { copy.attributes[name] = register }
        for (name, register) in object.toOnes.reversed() { copy.toOnes[name] = register }
        for (name, members) in object.members.reversed() { copy.members[name] = Dictionary(uniqueKeysWithValues: members.reversed().map { ($0.key, $0.value) }) }
        #expect(LedgerBinaryCoding.encode([object]) == LedgerBinaryCoding.encode([copy]))
    }

    @Test func everyCutShortBufferIsRefusedNotTrapped() {
        var g = SplitMix(seed: 3)
        let bytes = LedgerBinaryCoding.encode([Self.object(&g), Self.object(&g)])
        for length in 0..<bytes.count {
            #expect(throws: LedgerBinaryCoding.Failure.self, "cut at \(length) of \(bytes.count)") {
                _ = try LedgerBinaryCoding.objects(bytes.prefix(length))
            }
        }
        #expect(throws: LedgerBinaryCoding.Failure.self) { _ = try LedgerBinaryCoding.objects(bytes + [0]) }
    }

    @Test func damagedBytesThrowOrDecodeButNeverTrap() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int.max)) { seed in
            var g = SplitMix(seed: seed)
            var bytes = LedgerBinaryCoding.encode([Self.object(&g)])
            for _ in 0..<Int.random(in: 1...4, using: &g) {
                bytes[Int.random(in: 1..<bytes.count, using: &g)] = UInt8.random(in: 0...255, using: &g)
            }
            let decoded = try? LedgerBinaryCoding.objects(bytes)
            #expect(decoded == nil || decoded?.count == 1)
        }
    }

    @Test func rowsWrittenInJSONByEarlierVersionsStillRead() throws {
        var g = SplitMix(seed: 5)
        let object = Self.object(&g)
        guard let register = object.attributes.values.first ?? Optional(Register<SyncValue?>()) else { return }
        let json = try EventPayloadCoding.encode(register)
        let reader = EventStoreRowReader(row: Row([.bytes(Array(json))]), table: "register", key: 1, path: "/tmp/x")
        #expect(try reader.ledgerValue(Register<SyncValue?>.self, 0, "candidates", binary: LedgerBinaryCoding.valueRegister) == register)
        let binary = EventStoreRowReader(row: Row([.bytes(LedgerBinaryCoding.encode(register))]), table: "register", key: 1, path: "/tmp/x")
        #expect(try binary.ledgerValue(Register<SyncValue?>.self, 0, "candidates", binary: LedgerBinaryCoding.valueRegister) == register)
        let damaged = EventStoreRowReader(row: Row([.bytes([LedgerBinaryCoding.marker, 9])]), table: "register", key: 4, path: "/tmp/x")
        #expect {
            _ = try damaged.ledgerValue(Register<SyncValue?>.self, 0, "candidates", binary: LedgerBinaryCoding.valueRegister)
        } throws: { error in
            guard case let EventStoreError.damaged(_, table, key, reason) = error else { return false }
            return table == "register" && key == 4 && reason.contains("candidates")
        }
    }

    @Test func pendingMergesKeepTheirObjectsInBinaryAndReadOldRecords() throws {
        var g = SplitMix(seed: 9)
        var pending = PendingMerge(mergeID: "m1")
        pending.ledgerObjects = [Self.object(&g), Self.object(&g)]
        let json = try EventPayloadCoding.encode(pending)
        let back = try EventPayloadCoding.decode(PendingMerge.self, from: json, name: "pending")
        #expect(Self.same(back.ledgerObjects, pending.ledgerObjects))
        // The field is a base64 string, not an array of objects.
        let text = String(decoding: json, as: UTF8.self)
        #expect(text.contains("\"ledgerObjects\":\""))
        // A record written before the binary form held the objects as a JSON array.
        let field = try #require(text.range(of: #""ledgerObjects":"[^"]*""#, options: .regularExpression))
        let array = String(decoding: try EventPayloadCoding.encode(pending.ledgerObjects), as: UTF8.self)
        let old = text.replacingCharacters(in: field, with: "\"ledgerObjects\":" + array)
        let oldBack = try EventPayloadCoding.decode(PendingMerge.self, from: Data(old.utf8), name: "old")
        #expect(Self.same(oldBack.ledgerObjects, pending.ledgerObjects))
    }
}
