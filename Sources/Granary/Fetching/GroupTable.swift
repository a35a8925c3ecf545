import GranaryStorage

/// The groups of a grouped fetch: each distinct combination of grouped values, numbered in the order
/// its first row was read, found by hashing the values.
///
/// Grouping by one key path (the usual case) looks the value itself up, so a row costs one hash and no
/// allocation; grouping by several builds the array of their values.
struct GroupTable {
    /// How many values tell a group apart.
    let width: Int
    private var byValue: [Value: Int] = [:]
    private var byValues: [[Value]: Int] = [:]
    /// Each group's values, by group number.
    private(set) var keys: [[Value]] = []

    /// A table of groups told apart by `width` values; with none, the one group every row falls in
    /// exists from the start, so that an aggregate over no rows still has its result.
    init(width: Int) {
        self.width = width
        if width == 0 { keys = [[]] }
    }

    var count: Int { keys.count }

    /// The number of the group of one grouped value (`width` 1), made if it is new.
    mutating func group(of value: Value) -> Int {
        if let found = byValue[value] { return found }
        let number = keys.count
        byValue[value] = number
        keys.append([value])
        return number
    }

    /// The number of the group of several grouped values, made if it is new.
    mutating func group(of values: [Value]) -> Int {
        if let found = byValues[values] { return found }
        let number = keys.count
        byValues[values] = number
        keys.append(values)
        return number
    }
}
