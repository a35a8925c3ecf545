import Testing
@testable import Granary

@Suite struct ModelConfigurationTests {
    @Test func configurationsListTheirEntitiesInDeclaredOrder() throws {
        let model = try ModelFixtures.company()
        #expect(model.configurations == ["Cloud": ["Person", "Employee"]])
        #expect(model.configurationNames == ["Cloud"])
        #expect(model.entities(forConfiguration: "Cloud")?.map(\.name) == ["Person", "Employee"])
    }

    @Test func noConfigurationMeansEveryEntity() throws {
        let model = try ModelFixtures.company()
        #expect(model.entities(forConfiguration: nil)?.map(\.name) == ["Person", "Employee", "Project"])
    }

    @Test func unknownConfigurationsHaveNoEntityList() throws {
        #expect(try ModelFixtures.company().entities(forConfiguration: "Local") == nil)
    }

    @Test func configurationsListOnlyTheEntitiesTheyName() throws {
        let model = try ManagedObjectModel {
            Entity("A"); Entity("B"); Entity("C")
            Configuration("First", entities: "C", "A")
            Configuration("Empty", entities: [])
        }
        #expect(model.configurationNames == ["Empty", "First"])
        #expect(model.entities(forConfiguration: "First")?.map(\.name) == ["A", "C"])
        #expect(model.entities(forConfiguration: "Empty")?.isEmpty == true)
    }

    @Test func programmaticConfigurationsMatchDeclaredOnes() throws {
        let model = try ManagedObjectModel(
            entities: [EntityDescription(name: "A"), EntityDescription(name: "B")], configurations: ["Only": ["B"]])
        #expect(model.entities(forConfiguration: "Only")?.map(\.name) == ["B"])
        #expect(model.versionIdentifier == nil)
    }
}
