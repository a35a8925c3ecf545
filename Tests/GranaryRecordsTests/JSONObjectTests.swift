import Foundation
import Testing

@testable import GranaryRecords

/// `JSONObject` finds keys by scanning small objects and through an index in large ones; both must
/// answer as a dictionary built from the same members in order would (the last of a repeated key wins).
@Suite struct JSONObjectTests {
    static func members(_ count: Int, repeating: Bool) -> [(key: String, value: JSONNode)] {
        var list = (0..<count).map { (key: "key\($0)", value: JSONNode.int(Int64($0))) }
        if repeating { list += (0..<count).filter { $0 % 3 == 0 }.map { (key: "key\($0)", value: JSONNode.int(Int64(-$0))) } }
        return list
    }

    @Test(arguments: [0, 1, 5, JSONObject.scanLimit, JSONObject.scanLimit + 1, 200])
    func lookupsAndIterationAgreeWithADictionary(count: Int) {
        for repeating in [false, true] {
            let list = Self.members(count, repeating: repeating)
            let object = JSONObject(list)
            var reference: [String: Int64] = [:]
            for (key, value) in list { if case .int(let i) = value { reference[key] = i } }
            for key in reference.keys + ["absent", ""] {
                let found: Int64? = object[key].flatMap { if case .int(let i) = $0 { i } else { nil } }
                #expect(found == reference[key], "\(count) members, repeating \(repeating): \(key)")
            }
            var seen: [String: Int64] = [:]
            for (key, value) in object {
                #expect(seen[key] == nil, "each key once: \(key)")
                if case .int(let i) = value { seen[key] = i }
            }
            #expect(seen == reference, "\(count) members, repeating \(repeating)")
            #expect(Set(object.keys) == Set(reference.keys))
        }
    }
}
