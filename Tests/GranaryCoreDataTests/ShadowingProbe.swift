import GranaryCoreData
import Testing

@Test func probe() {
    let p = NSPredicate(format: "name == %@", "x")
    let s = NSSortDescriptor(key: "name", ascending: true)
    let n: String = "abc"
    let p2 = NSPredicate(format: "name == %@ AND age > %d", n, 3)
    #expect(p.predicateFormat.contains("name"))
    #expect(s.key == "name")
    #expect(p2.predicateFormat.contains("age"))
}
@Test func probeType() {
    let d = NSPersistentStoreDescription()
    d.type = NSInMemoryStoreType
    #expect(d.type == NSInMemoryStoreType)
    let t = d.type
    #expect(t == "InMemory")
}
