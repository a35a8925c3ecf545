import Foundation
import GranaryStorage

/// The running state of one aggregate over one group's stored values, and its value at the end.
///
/// The numeric rules are the derived attributes' (`@sum`, `@avg`, `@min`, `@max`): a sum of integers is
/// an `Int64` that wraps on overflow, of doubles a `Double`, of decimals a `Decimal`; an average is a
/// `Double` (a `Decimal` for decimals); a minimum or maximum compares numbers, dates or strings (by
/// Unicode scalars, the order sorts use) and keeps the attribute's type; a sum of nothing is 0, and an
/// average, minimum or maximum of nothing is no value. Nulls take no part, as in SQL, and neither do NaNs
/// in a minimum or maximum (SQLite stores a NaN as NULL).
struct AggregateAccumulator {
    /// What to do with each value, chosen once per fetch from the function and the attribute's kind, so
    /// that adding a value is one switch.
    enum Operation: Hashable {
        case countObjects, countValues
        case sumIntegers, sumDoubles, sumDecimals
        case averageIntegers, averageDoubles, averageDecimals
        case minimum(decimal: Bool), maximum(decimal: Bool)
    }

    private var count = 0
    private var integer: Int64 = 0
    private var double: Double = 0
    private var decimal = Decimal(0)
    private var best = Value.null

    /// Takes one object's value into the aggregate (for `countObjects`, whatever it is).
    mutating func add(_ value: Value, _ operation: Operation) {
        switch operation {
        case .countObjects:
            count += 1
        case .countValues:
            if !value.isNull { count += 1 }
        case .sumIntegers, .averageIntegers:
            // An integer attribute's column holds `.int` or null (see `FieldKind`).
            guard case .int(let i) = value else { return }
            integer &+= i
            count += 1
        case .sumDoubles, .averageDoubles:
            switch value {
            case .double(let d): double += d
            case .int(let i): double += Double(i)
            default: return
            }
            count += 1
        case .sumDecimals, .averageDecimals:
            guard !value.isNull, let d = ValueOrder.decimal(value), !d.isNaN else { return }
            decimal += d
            count += 1
        case .minimum(let asDecimals), .maximum(let asDecimals):
            switch value {
            case .null: return
            case .double(let d) where d.isNaN: return
            case .date(let d) where d.timeIntervalSinceReferenceDate.isNaN: return
            default: break
            }
            if best.isNull {
                best = value
                return
            }
            let wanted: ComparisonResult
            if case .minimum = operation { wanted = .orderedAscending } else { wanted = .orderedDescending }
            // Integers, the common case, without the general comparison's dispatch.
            if case .int(let a) = value, case .int(let b) = best {
                if wanted == .orderedAscending ? a < b : a > b { best = value }
            } else if ValueOrder.compare(value, best, asDecimals: asDecimals) == wanted {
                best = value
            }
        }
    }

    /// Takes one object's value still encoded: counts, and sums of integers and doubles, read it in
    /// place; the rest decode it first.
    mutating func add(encoded value: EncodedValue, _ operation: Operation) {
        switch operation {
        case .countObjects:
            count += 1
        case .countValues:
            if !value.isNull { count += 1 }
        case .sumIntegers, .averageIntegers:
            guard let i = value.integer else { return }
            integer &+= i
            count += 1
        case .sumDoubles, .averageDoubles:
            if let d = value.double {
                double += d
                count += 1
            } else if let i = value.integer {
                double += Double(i)
                count += 1
            }
        default:
            add(value.value, operation)
        }
    }

    /// Counts `n` objects at once (a count of objects answered without a scan).
    mutating func addObjects(_ n: Int) {
        count += n
    }

    /// The aggregate's value, as stored values are (a decimal as its string): what
    /// `AggregateAccumulator.converted(_:from:to:)` then turns into the type asked for.
    func result(_ operation: Operation) -> Value {
        switch operation {
        case .countObjects, .countValues: return .int(Int64(count))
        case .sumIntegers: return .int(integer)
        case .sumDoubles: return .double(double)
        case .sumDecimals: return Self.stored(decimal)
        case .averageIntegers: return count == 0 ? .null : .double(Double(integer) / Double(count))
        case .averageDoubles: return count == 0 ? .null : .double(double / Double(count))
        case .averageDecimals: return count == 0 ? .null : Self.stored(decimal / Decimal(count))
        case .minimum, .maximum: return best
        }
    }

    /// A decimal as a decimal attribute stores it.
    static func stored(_ decimal: Decimal) -> Value {
        (try? AttributeType.decimal.storageValue(for: decimal)) ?? .null
    }

    /// A number converted from `natural` to the number type `type` (`expressionResultType`): to an
    /// integer type truncated toward zero and clamped to its range, to a double or float as the nearest
    /// double, to a decimal exactly (a double by its shortest description, as a decimal attribute stores
    /// one). Anything else, and a number already of its type, is returned as it is.
    static func converted(_ value: Value, from natural: AttributeType, to type: AttributeType) -> Value {
        guard natural != type, natural.isNumeric, type.isNumeric, !value.isNull else { return value }
        let asDouble: Double
        switch value {
        case .int(let i):
            switch type {
            case .integer16: return .int(Int64(Int16(clamping: i)))
            case .integer32: return .int(Int64(Int32(clamping: i)))
            case .integer64: return value
            case .decimal: return stored(Decimal(i))
            default: return .double(Double(i))
            }
        case .double(let d): asDouble = d
        case .string:
            guard let d = ValueOrder.decimal(value) else { return .null }
            if type == .decimal { return value }
            asDouble = NSDecimalNumber(decimal: d).doubleValue
        default: return value
        }
        switch type {
        case .integer16, .integer32, .integer64:
            guard !asDouble.isNaN else { return .null }
            let truncated = asDouble.rounded(.towardZero)
            let wide: Int64 = truncated >= 9.2e18 ? .max : truncated <= -9.2e18 ? .min : Int64(truncated)
            switch type {
            case .integer16: return .int(Int64(Int16(clamping: wide)))
            case .integer32: return .int(Int64(Int32(clamping: wide)))
            default: return .int(wide)
            }
        case .decimal:
            return (try? AttributeType.decimal.storageValue(for: asDouble)) ?? .null
        default:
            return .double(asDouble)
        }
    }
}
