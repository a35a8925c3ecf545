import Foundation
import Testing
@testable import Granary

@Suite struct ModelStorageMappingTests {
    private func columns(_ schema: TableSchema) -> [String] { schema.columns.map(\.name) }

    @Test func oneTablePerHierarchyNamedAfterTheRoot() throws {
        let mapping = StorageMapping(model: try ModelFixtures.company())
        #expect(mapping.tableSchemas.map(\.name) == ["Person", "Project"])
        #expect(mapping["Employee"]?.tableName == "Person")
        #expect(mapping["Person"]?.tableName == "Person")
        #expect(mapping["Project"]?.tableName == "Project")
        #expect(mapping["Employee"]?.tableSchema == mapping["Person"]?.tableSchema)
        #expect(mapping["Person"]?.isRoot == true && mapping["Employee"]?.isRoot == false)
        #expect(mapping.entity(named: "Nobody") == nil)
    }

    @Test func columnsOfAHierarchy() throws {
        let schema = try #require(StorageMapping(model: ModelFixtures.company()).table(named: "Person")?.schema)
        #expect(schema.columns == [
            Column("_entity", .int, nullable: false),
            Column("_version", .int, nullable: false),
            Column("born", .date, nullable: true),
            Column("name", .string, nullable: false),
            Column("Employee.email", .string, nullable: true),
            Column("Employee.salary", .string, nullable: true),
            Column("Employee.manager", .reference, nullable: true),
            Column("Employee.projects", .references, nullable: true),
            Column("Employee.reports", .references, nullable: true),
        ])
        let project = try #require(StorageMapping(model: ModelFixtures.company()).table(named: "Project")?.schema)
        #expect(project.columns == [
            Column("_entity", .int, nullable: false),
            Column("_version", .int, nullable: false),
            Column("title", .string, nullable: false),
            Column("members", .references, nullable: true),
        ])
    }

    @Test func subEntityAttributesAreNullableEvenWhenRequired() throws {
        let model = try ManagedObjectModel {
            Entity("Base") { Attribute("id", .uuid) }
            Entity("Derived", parent: "Base") { Attribute("code", .string) }
        }
        let schema = StorageMapping(model: model).tableSchemas[0]
        #expect(schema.columns.first { $0.name == "id" }?.isNullable == false)
        #expect(schema.columns.first { $0.name == "Derived.code" }?.isNullable == true)
    }

    @Test func indexesOfAHierarchy() throws {
        let mapping = StorageMapping(model: try ModelFixtures.company())
        let person = try #require(mapping.table(named: "Person")?.schema)
        #expect(person.indexes == [
            IndexDefinition(name: "Employee_byNameAndBorn", columns: [IndexColumn("name"), IndexColumn("born", descending: true)]),
            IndexDefinition(name: "Employee_bySalary", columns: [IndexColumn("Employee.salary")]),
            IndexDefinition(name: "Employee_unique_email", columns: [IndexColumn("Employee.email")], unique: true),
            IndexDefinition(name: "Person__entity", columns: [IndexColumn("_entity")]),
        ])
        // A hierarchy of one entity needs no index on _entity.
        #expect(mapping.table(named: "Project")?.schema.indexes == [])
        #expect(mapping["Employee"]?.indexNames == ["Employee_unique_email", "Employee_bySalary", "Employee_byNameAndBorn"])
        #expect(mapping["Person"]?.indexNames == [])
    }

    @Test func indexedAttributesAndToOneConstraintsGetIndexes() throws {
        let model = try ManagedObjectModel {
            Entity("Passport") {
                Attribute("number", .string, indexed: true)
                Attribute("note", .string, optional: true, transient: true)
                Relationship("holder", to: "Person", inverse: "passport")
                Unique("holder")
            }
            Entity("Person") { Relationship("passport", to: "Passport", inverse: "holder") }
        }
        let schema = try #require(StorageMapping(model: model).table(named: "Passport")?.schema)
        #expect(columns(schema) == ["_entity", "_version", "number", "holder"])  // no column for the transient note
        #expect(schema.indexes == [
            IndexDefinition(name: "Passport_number", columns: [IndexColumn("number")]),
            IndexDefinition(name: "Passport_unique_holder", columns: [IndexColumn("holder")], unique: true),
        ])
    }

    @Test func entityCodesFollowTheHierarchyDepthFirstByName() throws {
        let model = try ManagedObjectModel {
            Entity("Manager", parent: "Employee") { Attribute("level", .integer16) }
            Entity("Person", abstract: true) { Attribute("name", .string) }
            Entity("Employee", parent: "Person") { Attribute("salary", .double) }
            Entity("Customer", parent: "Person") { Attribute("since", .date) }
            Entity("Intern", parent: "Employee")
        }
        let mapping = StorageMapping(model: model)
        let table = try #require(mapping.table(named: "Person"))
        #expect(table.entityNames == ["Person", "Customer", "Employee", "Intern", "Manager"])
        #expect(mapping["Person"]?.entityCode == 0)
        #expect(mapping["Manager"]?.entityCode == 4)
        #expect(mapping["Person"]?.entityCodes(includingSubentities: true) == [0, 1, 2, 3, 4])
        #expect(mapping["Employee"]?.entityCodes(includingSubentities: true) == [2, 3, 4])
        #expect(mapping["Employee"]?.entityCodes(includingSubentities: false) == [2])
        #expect(mapping["Employee"]?.entityCodeRange == 2...4)
        #expect(mapping["Customer"]?.entityCodes(includingSubentities: true) == [1])
        #expect(table.entityName(forCode: 3) == "Intern")
        #expect(table.entityName(forCode: 5) == nil && table.entityName(forCode: -1) == nil)
        #expect(columns(table.schema) == ["_entity", "_version", "name", "Customer.since", "Employee.salary", "Manager.level"])
    }

    @Test func propertiesAndColumnsMapBothWays() throws {
        let mapping = StorageMapping(model: try ModelFixtures.company())
        let employee = try #require(mapping["Employee"])
        let person = try #require(mapping["Person"])
        let schema = employee.tableSchema
        #expect(employee.column(forProperty: "name") == schema.columnIndex("name"))
        #expect(employee.column(forProperty: "salary") == schema.columnIndex("Employee.salary"))
        #expect(employee.column(forProperty: "projects") == schema.columnIndex("Employee.projects"))
        #expect(employee.column(forProperty: "nonexistent") == nil)
        #expect(person.column(forProperty: "salary") == nil)
        for name in ["name", "born", "salary", "email", "manager", "reports", "projects"] {
            let column = try #require(employee.column(forProperty: name))
            #expect(employee.property(atColumn: column)?.name == name)
        }
        #expect(employee.property(atColumn: StorageMapping.entityColumn) == nil)
        #expect(employee.property(atColumn: StorageMapping.versionColumn) == nil)
        #expect(employee.property(atColumn: 99) == nil)
        #expect(person.property(atColumn: schema.columnIndex("Employee.email")!) == nil)
        #expect(employee.propertyColumns == Array(2..<9))
        #expect(person.propertyColumns == [2, 3])
        #expect(schema.columns[StorageMapping.entityColumn].name == StorageMapping.entityColumnName)
        #expect(schema.columns[StorageMapping.versionColumn].name == StorageMapping.versionColumnName)
    }

    @Test func siblingsMayReuseAPropertyName() throws {
        let model = try ManagedObjectModel {
            Entity("Person")
            Entity("Employee", parent: "Person") { Attribute("title", .string) }
            Entity("Customer", parent: "Person") { Attribute("title", .integer32, optional: true) }
        }
        let mapping = StorageMapping(model: model)
        #expect(columns(mapping.tableSchemas[0]) == ["_entity", "_version", "Customer.title", "Employee.title"])
        #expect(mapping["Employee"]?.column(forProperty: "title") == 3)
        #expect(mapping["Customer"]?.column(forProperty: "title") == 2)
    }

    @Test func theSameModelAlwaysGivesTheSameSchema() throws {
        #expect(StorageMapping(model: try ModelFixtures.company()).tableSchemas == StorageMapping(model: try ModelFixtures.company()).tableSchemas)
        // Declaration order does not matter, as it does not for the version hash.
        let forward = try ManagedObjectModel {
            Entity("A") { Attribute("b", .string); Attribute("a", .string); Index("y", "a"); Index("x", "b") }
            Entity("B", parent: "A") { Attribute("d", .date) }
            Entity("C", parent: "A") { Attribute("c", .date) }
        }
        let backward = try ManagedObjectModel {
            Entity("C", parent: "A") { Attribute("c", .date) }
            Entity("B", parent: "A") { Attribute("d", .date) }
            Entity("A") { Index("x", "b"); Index("y", "a"); Attribute("a", .string); Attribute("b", .string) }
        }
        #expect(forward.versionHash == backward.versionHash)
        #expect(StorageMapping(model: forward).tableSchemas == StorageMapping(model: backward).tableSchemas)
        #expect(StorageMapping(model: forward)["C"]?.entityCode == StorageMapping(model: backward)["C"]?.entityCode)
    }

    @Test func configurationsSelectTables() throws {
        let mapping = StorageMapping(model: try ModelFixtures.company())
        #expect(mapping.tableSchemas(forConfiguration: "Cloud").map(\.name) == ["Person"])
        #expect(mapping.tableSchemas(forConfiguration: nil).map(\.name) == ["Person", "Project"])
        #expect(mapping.tableSchemas(forConfiguration: "Unknown").isEmpty)
    }

    /// The schemas work in the engine: tables and indexes are created, and the unique index binds
    /// employees while leaving rows without an email (including plain persons) alone.
    @Test func schemasCreateWorkingEngineTables() throws {
        let model = try ManagedObjectModel {
            Entity("Person") { Attribute("name", .string) }
            Entity("Employee", parent: "Person") { Attribute("email", .string, optional: true); Unique("email") }
        }
        let mapping = StorageMapping(model: model)
        let engine = try Engine.open(.inMemory)
        try engine.write { tx in
            for schema in mapping.tableSchemas { try tx.createTable(schema) }
        }
        let person = try #require(mapping["Person"])
        let employee = try #require(mapping["Employee"])
        func row(_ entity: EntityMapping, _ values: [String: Value]) -> Row {
            var row = Row(Array(repeating: .null, count: entity.tableSchema.columns.count))
            row[StorageMapping.entityColumn] = .int(entity.entityCode)
            row[StorageMapping.versionColumn] = .int(1)
            for (name, value) in values { row[entity.column(forProperty: name)!] = value }
            return row
        }
        try engine.write { tx in
            try tx.insert(row(person, ["name": "Ada"]), into: person.tableName)
            try tx.insert(row(person, ["name": "Bob"]), into: person.tableName)
            try tx.insert(row(employee, ["name": "Cy", "email": "cy@x"]), into: employee.tableName)
        }
        #expect(throws: StorageError.self) {
            try engine.write { tx in
                try tx.insert(row(employee, ["name": "Di", "email": "cy@x"]), into: employee.tableName)
            }
        }
        #expect(throws: StorageError.self) {
            try engine.write { tx in try tx.insert(row(person, [:]), into: person.tableName) }  // name is required
        }
        #expect(try engine.read().count(in: "Person") == 3)
        #expect(try engine.read().schema(of: "Person") == employee.tableSchema)
    }
}
