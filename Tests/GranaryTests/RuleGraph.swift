import Foundation
@testable import Granary

/// Core Data's delete rules on a plain graph of names, the reference model of the delete-rule tests.
///
/// As a context's view (a batch of unsaved edits), it follows Core Data: setting one end of a
/// relationship sets the other (an object linked through a to-one leaves its previous owner), and
/// deleting an object applies its rules at once, to its relationships as they are at that moment:
/// nullify takes it out of the other ends, cascade does that and deletes them too (recursively), deny and
/// no action leave the other ends pointing at it. A deleted object stays in the graph, flagged, until
/// the save, and inverse maintenance still edits it (moving a member out of a deleted owner's set).
///
/// A save (`denials`, `committed()`) fails if a deleted object still has members in a deny
/// relationship; otherwise deleted objects go, and every reference to them goes with them. For no action
/// that is Granary's documented behaviour, not Core Data's (Core Data leaves the reference dangling): a
/// store never holds a reference to a row that is gone. A one-sided relationship (no inverse) changes
/// only its own end; deleting its destination takes the destination out of it at once, in every object
/// the view has (deleted ones too), which is Granary's rule (Core Data leaves the reference dangling).
/// Objects inserted and deleted before a save are
/// treated as any deleted object: their deny rules count, and references left to them are dropped.
struct RuleGraph: Equatable {
    typealias Spec = DeleteRuleModel.Spec

    struct Node: Equatable {
        let entity: String
        var toOne: [String: String] = [:]
        var toMany: [String: [String]] = [:]
        var isDeleted = false
        var isInserted = false
    }

    var nodes: [String: Node] = [:]

    static func relationships(of entity: String) -> [Spec] { DeleteRuleModel.relationships[entity]! }

    /// A context can still reach the object: anything but an object inserted and deleted before a save.
    func isPresent(_ name: String) -> Bool {
        guard let node = nodes[name] else { return false }
        return !(node.isDeleted && node.isInserted)
    }

    /// Objects of `entity` that are neither deleted nor gone, sorted (seeds must replay).
    func alive(_ entity: String) -> [String] {
        nodes.filter { $0.value.entity == entity && !$0.value.isDeleted }.map(\.key).sorted()
    }

    func members(_ name: String, _ spec: Spec) -> [String] {
        guard let node = nodes[name] else { return [] }
        if spec.isToMany { return node.toMany[spec.name] ?? [] }
        return node.toOne[spec.name].map { [$0] } ?? []
    }

    // MARK: Edits, as a context makes them

    mutating func insert(_ name: String, entity: String) {
        nodes[name] = Node(entity: entity, isInserted: true)
    }

    mutating func setToOne(_ name: String, _ spec: Spec, _ target: String?) {
        let old = nodes[name]!.toOne[spec.name]
        if old == target { return }
        nodes[name]!.toOne[spec.name] = target
        if let old { inverseRemove(old, source: name, spec) }
        if let target { inverseAdd(target, source: name, spec) }
    }

    mutating func setToMany(_ name: String, _ spec: Spec, _ list: [String]) {
        var seen = Set<String>()
        let new = list.filter { seen.insert($0).inserted }
        let old = nodes[name]!.toMany[spec.name] ?? []
        if old == new { return }
        nodes[name]!.toMany[spec.name] = new
        for member in old where !seen.contains(member) { inverseRemove(member, source: name, spec) }
        let before = Set(old)
        for member in new where !before.contains(member) { inverseAdd(member, source: name, spec) }
    }

    /// `target` was linked to `source` through `spec`: it links back, leaving its previous owner when
    /// the way back is a to-one.
    private mutating func inverseAdd(_ target: String, source: String, _ spec: Spec) {
        guard let inverseName = spec.inverse else { return }
        let inverse = DeleteRuleModel.spec(spec.destination, inverseName)
        if inverse.isToMany {
            if !(nodes[target]!.toMany[inverse.name] ?? []).contains(source) { nodes[target]!.toMany[inverse.name, default: []].append(source) }
            return
        }
        let previous = nodes[target]!.toOne[inverse.name]
        if previous == source { return }
        nodes[target]!.toOne[inverse.name] = source
        guard let previous else { return }
        if spec.isToMany {
            nodes[previous]!.toMany[spec.name]?.removeAll { $0 == target }
        } else if nodes[previous]!.toOne[spec.name] == target {
            nodes[previous]!.toOne[spec.name] = nil
        }
    }

    private mutating func inverseRemove(_ target: String, source: String, _ spec: Spec) {
        guard let inverseName = spec.inverse else { return }
        let inverse = DeleteRuleModel.spec(spec.destination, inverseName)
        if inverse.isToMany {
            nodes[target]!.toMany[inverse.name]?.removeAll { $0 == source }
        } else if nodes[target]!.toOne[inverse.name] == source {
            nodes[target]!.toOne[inverse.name] = nil
        }
    }

    mutating func delete(_ name: String) {
        guard !nodes[name]!.isDeleted else { return }
        nodes[name]!.isDeleted = true
        for spec in Self.relationships(of: nodes[name]!.entity) {
            let targets = members(name, spec)
            switch spec.rule {
            case .nullify:
                for target in targets { inverseRemove(target, source: name, spec) }
            case .cascade:
                for target in targets {
                    inverseRemove(target, source: name, spec)
                    delete(target)
                }
            case .deny, .noAction:
                break
            }
        }
        // The referrers through one-sided relationships forget it (its hidden inverse's nullify rule).
        let entity = nodes[name]!.entity
        for referrer in nodes.keys.sorted() {
            for spec in Self.relationships(of: nodes[referrer]!.entity) where spec.inverse == nil && spec.destination == entity {
                if spec.isToMany {
                    nodes[referrer]!.toMany[spec.name]?.removeAll { $0 == name }
                } else if nodes[referrer]!.toOne[spec.name] == name {
                    nodes[referrer]!.toOne[spec.name] = nil
                }
            }
        }
    }

    // MARK: Saving

    /// The deny rules a save of this view breaks: deleted objects with members left in a deny
    /// relationship, as "Entity.relationship of name".
    func denials() -> [String] {
        nodes.keys.sorted().flatMap { name -> [String] in
            let node = nodes[name]!
            guard node.isDeleted else { return [] }
            return Self.relationships(of: node.entity).filter { $0.rule == .deny && !members(name, $0).isEmpty }
                .map { "\(node.entity).\($0.name) of \(name)" }
        }
    }

    /// What the store holds after a successful save of this view.
    func committed() -> RuleGraph {
        var graph = RuleGraph()
        for (name, node) in nodes where !node.isDeleted {
            var kept = Node(entity: node.entity)
            for (relationship, target) in node.toOne where nodes[target].map({ !$0.isDeleted }) ?? false {
                kept.toOne[relationship] = target
            }
            for (relationship, list) in node.toMany {
                let alive = list.filter { nodes[$0].map { !$0.isDeleted } ?? false }
                if !alive.isEmpty { kept.toMany[relationship] = alive }
            }
            graph.nodes[name] = kept
        }
        return graph
    }

    /// What a batch delete of `names` leaves (nil: a deny rule fails it): the objects matched and, through
    /// cascades, everything they take with them go, as they are in the store; a deny relationship may
    /// only hold objects that go too.
    func batchDeleted(_ names: [String]) -> RuleGraph? {
        var doomed = Set<String>()
        var pending = names
        while let name = pending.popLast() {
            guard doomed.insert(name).inserted else { continue }
            for spec in Self.relationships(of: nodes[name]!.entity) where spec.rule == .cascade { pending += members(name, spec) }
        }
        for name in doomed {
            for spec in Self.relationships(of: nodes[name]!.entity) where spec.rule == .deny {
                if members(name, spec).contains(where: { !doomed.contains($0) }) { return nil }
            }
        }
        var graph = self
        for name in doomed { graph.nodes[name]!.isDeleted = true }
        return graph.committed()
    }

    // MARK: Comparing

    /// The same graph with unordered relationships sorted, as two graphs are compared.
    func normalized() -> RuleGraph {
        var graph = self
        for (name, node) in nodes {
            for spec in Self.relationships(of: node.entity) where spec.isToMany && !spec.isOrdered {
                if let list = node.toMany[spec.name] { graph.nodes[name]!.toMany[spec.name] = list.sorted() }
            }
            for (relationship, list) in node.toMany where list.isEmpty { graph.nodes[name]!.toMany[relationship] = nil }
        }
        return graph
    }

    /// Links of a committed graph that the other end does not return, or that lead nowhere: none, if the
    /// model itself is right.
    func oneSidedLinks() -> [String] {
        var problems: [String] = []
        for name in nodes.keys.sorted() {
            let node = nodes[name]!
            for spec in Self.relationships(of: node.entity) {
                for target in members(name, spec) {
                    guard nodes[target] != nil else {
                        problems.append("\(name).\(spec.name) → \(target), which is gone")
                        continue
                    }
                    guard let inverseName = spec.inverse else { continue }
                    let inverse = DeleteRuleModel.spec(spec.destination, inverseName)
                    if !members(target, inverse).contains(name) { problems.append("\(name).\(spec.name) → \(target), but not back") }
                }
            }
        }
        return problems
    }

    /// One object as the tests print it.
    func describe(_ name: String) -> String {
        guard let node = nodes[name] else { return "\(name): gone" }
        var parts: [String] = []
        for spec in Self.relationships(of: node.entity) {
            let list = members(name, spec)
            if !list.isEmpty { parts.append("\(spec.name)=\(spec.isToMany ? "[\(list.joined(separator: ","))]" : list[0])") }
        }
        let state = node.isDeleted ? " (deleted)" : ""
        return "\(name)\(state): \(parts.joined(separator: " "))"
    }
}
