/// One figure in the table, with the unit that says how to print it and which direction is better.
enum Measurement: Sendable {
    /// How long one whole operation took (lower is better).
    case time(Duration)
    /// Operations per second, with the operation's name for the unit: "ops/s", "queries/s", "tx/s"
    /// (higher is better). Printed with the time per operation as well.
    case rate(Double, unit: String)
    /// Bytes on disk (lower is better).
    case bytes(Int)
    /// Bytes per row (lower is better).
    case bytesPerRow(Double)
    /// Bytes per object held in memory (lower is better).
    case bytesPerObject(Double)

    /// A rate from `count` operations that took `duration` in all.
    static func rate(count: Int, in duration: Duration, unit: String) -> Measurement {
        .rate(Double(count) / duration.seconds, unit: unit)
    }

    /// A rate from the median time of one operation.
    static func rate(perOperation duration: Duration, unit: String) -> Measurement {
        .rate(1 / duration.seconds, unit: unit)
    }

    var text: String {
        switch self {
        case .time(let duration):
            let ms = duration.seconds * 1000
            return ms >= 100 ? "\(Format.grouped(ms)) ms" : "\(Format.decimal(ms, digits: ms >= 10 ? 1 : 2)) ms"
        case .rate(let perSecond, let unit):
            let microseconds = 1e6 / perSecond
            let perOp = microseconds >= 10 ? Format.grouped(microseconds) : Format.decimal(microseconds, digits: 2)
            return "\(Format.grouped(perSecond)) \(unit) (\(perOp) µs)"
        case .bytes(let bytes):
            return "\(Format.decimal(Double(bytes) / 1_000_000, digits: 1)) MB"
        case .bytesPerRow(let bytes):
            return "\(Format.decimal(bytes, digits: 1)) B/row"
        case .bytesPerObject(let bytes):
            return "\(Format.grouped(bytes)) B/object"
        }
    }

    /// How many times better `self` is than `peer`: `peer`'s time (or size) ÷ `self`'s, or `self`'s rate ÷
    /// `peer`'s, so that a ratio above 1 always means `self` wins. `nil` when the units differ.
    func advantage(over peer: Measurement) -> Double? {
        switch (self, peer) {
        case (.time(let mine), .time(let theirs)): return theirs.seconds / mine.seconds
        case (.rate(let mine, _), .rate(let theirs, _)): return mine / theirs
        case (.bytes(let mine), .bytes(let theirs)): return Double(theirs) / Double(mine)
        case (.bytesPerRow(let mine), .bytesPerRow(let theirs)): return theirs / mine
        case (.bytesPerObject(let mine), .bytesPerObject(let theirs)): return theirs / mine
        default: return nil
        }
    }

    /// Whether `self` is at least as good as `other`, for choosing the best configuration of a peer.
    func isAtLeastAsGood(as other: Measurement) -> Bool {
        (advantage(over: other) ?? 0) >= 1
    }
}

/// Number formatting that does not depend on the locale, so that README tables do not change with it.
enum Format {
    /// A whole number with comma grouping: 1234567.8 → "1,234,568".
    static func grouped(_ value: Double) -> String {
        let whole = Int(value.rounded())
        let digits = String(whole.magnitude)
        var out = ""
        for (i, character) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(character)
        }
        return whole < 0 ? "-" + out : out
    }

    /// A number with a fixed count of digits after the point.
    static func decimal(_ value: Double, digits: Int) -> String {
        var scale = 1
        for _ in 0..<digits { scale *= 10 }
        let scaled = Int((value * Double(scale)).rounded())
        let sign = scaled < 0 ? "-" : ""
        let magnitude = abs(scaled)
        guard digits > 0 else { return "\(sign)\(magnitude)" }
        let fraction = String(magnitude % scale)
        return "\(sign)\(magnitude / scale).\(String(repeating: "0", count: digits - fraction.count))\(fraction)"
    }

    /// A ratio with two significant-ish digits: "0.42×", "3.1×", "18×".
    static func ratio(_ value: Double) -> String {
        value >= 10 ? "\(Int(value.rounded()))×" : value >= 1 ? "\(decimal(value, digits: 1))×" : "\(decimal(value, digits: 2))×"
    }
}
