import Granary

extension LedgerSchema {
    /// The synced shape of `model` under `configuration`: excluded entities and `"Entity.property"`
    /// names are left out (M27), and so is every relationship to an excluded entity, whose objects have
    /// no global IDs to name.
    init(model: ManagedObjectModel, configuration: EnsembleConfiguration) {
        let full = LedgerSchema(model: model)
        let excludedEntities = configuration.excludedEntities
        let excludedProperties = configuration.excludedProperties
        func isExcluded(_ entity: String, _ property: String) -> Bool {
            // A property excluded on a superentity is excluded on its subentities, which inherit it.
            var next: String? = entity
            var seen: Set<String> = []
            while let name = next, seen.insert(name).inserted {
                if excludedProperties.contains("\(name).\(property)") { return true }
                next = full.entities[name]?.superentity
            }
            return false
        }
        var entities: [String: Entity] = [:]
        for (name, shape) in full.entities where !excludedEntities.contains(name) {
            var kept = shape
            kept.attributes = shape.attributes.filter { !isExcluded(name, $0) }
            kept.toOnes = shape.toOnes.filter { !isExcluded(name, $0.key) && !excludedEntities.contains($0.value.destination) }
            kept.toManys = shape.toManys.filter { !isExcluded(name, $0.key) && !excludedEntities.contains($0.value.destination) }
            entities[name] = kept
        }
        self.init(entities: entities)
    }
}
