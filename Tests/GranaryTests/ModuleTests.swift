import Testing
@testable import Granary

@Test func theCoreDataLayerReExportsTheEngine() throws {
    let engine = try Engine.open(.inMemory)
    #expect(engine.read().tableNames.isEmpty)
}
