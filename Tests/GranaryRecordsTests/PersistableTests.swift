import Granary
import GranaryRecords
import Testing

@Test func aPersistableNamesItsIDProperty() {
    final class Tag: ManagedObject, Persistable {
        @Managed var slug: String
        static var idKeyPath: ReferenceWritableKeyPath<Tag, String> { \.slug }
    }
    #expect(Tag.idKeyPath == \Tag.slug)
}
