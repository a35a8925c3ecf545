import Foundation
import Testing
@testable import Granary

/// An offset without a limit skips exactly that many objects (the store skipped them, then the context
/// skipped as many again when it sorted in memory).
@Suite struct FetchOffsetWithoutLimitTests {
    @Test(arguments: [PersistentStore.StoreType.inMemory, .durable], [0, 1, 2, 3, 4])
    func anOffsetAloneSkipsThatManyObjects(store: PersistentStore.StoreType, offset: Int) throws {
        let (_, context) = try makeStack(store)
        try context.performAndWait {
            _ = try FetchingDictionaryTests.populate(context)
            var request = FetchRequest<Employee>()
            request.sortKeys = [SortKey("salary")]
            request.fetchOffset = offset
            #expect(try context.fetch(request).map(\.name) == Array(["Cy", "Bob", "Ada"].dropFirst(offset)))
            request.filter = (FetchPredicate.key("salary") >= 2).node
            #expect(try context.fetch(request).map(\.name) == Array(["Bob", "Ada"].dropFirst(offset)))
        }
    }
}
