import Foundation

/// The ISO 8601 date-times web services send (`2026-01-02T03:04:05Z`, with fractional seconds, with a
/// `±hh:mm` offset), read without a formatter: Foundation's ISO 8601 parsing costs microseconds a date,
/// more than the rest of an imported object. Any other form returns nil and is left to Foundation.
///
/// It reads a subset of what Foundation's `Date.ISO8601FormatStyle` reads, to the same instant: the
/// conversion falls back to Foundation, so a form read here that Foundation refuses (a lowercase `t`, a
/// decimal comma, more than nine fraction digits, an offset beyond ±18:00) would quietly widen what
/// imports accept. Years before 1583 are left to Foundation too: its calendar is Julian before the
/// Gregorian reform (1582-10-15), and services' "zero" dates (`0001-01-01T00:00:00Z`) must read as before.
enum ISO8601Text {
    static func date(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { parse($0) }
    }

    private static func parse(_ s: UnsafeBufferPointer<UInt8>) -> Date? {
        // yyyy-MM-ddTHH:mm:ss is 19 bytes; then fraction and zone.
        guard s.count >= 20 else { return nil }
        func digits(_ at: Int, _ count: Int) -> Int? {
            var value = 0
            for i in at..<at + count {
                let d = Int(s[i]) - 48
                guard d >= 0 && d <= 9 else { return nil }
                value = value * 10 + d
            }
            return value
        }
        guard s[4] == UInt8(ascii: "-"), s[7] == UInt8(ascii: "-"), s[10] == UInt8(ascii: "T"),
              s[13] == UInt8(ascii: ":"), s[16] == UInt8(ascii: ":"),
              let year = digits(0, 4), let month = digits(5, 2), let day = digits(8, 2),
              let hour = digits(11, 2), let minute = digits(14, 2), let second = digits(17, 2),
              year > 1582, (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
              hour <= 23, minute <= 59, second <= 59
        else { return nil }
        var index = 19
        var fraction = 0.0
        if s[index] == UInt8(ascii: ".") {
            index += 1
            var numerator = 0
            var denominator = 1
            let first = index
            while index < s.count, s[index] >= 48, s[index] <= 57 {
                numerator = numerator * 10 + Int(s[index]) - 48
                denominator *= 10
                index += 1
                // Foundation refuses more than nanoseconds.
                guard index - first <= 9 else { return nil }
            }
            guard index > first else { return nil }
            fraction = Double(numerator) / Double(denominator)
        }
        guard index < s.count else { return nil }
        var offset = 0
        switch s[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            index += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign = s[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard index + 2 <= s.count, let hours = digits(index, 2), hours <= 23 else { return nil }
            index += 2
            var minutes = 0
            if index < s.count {
                if s[index] == UInt8(ascii: ":") { index += 1 }
                guard index + 2 <= s.count, let m = digits(index, 2), m <= 59 else { return nil }
                minutes = m
                index += 2
            }
            // Foundation's limit (TimeZone's).
            guard hours * 60 + minutes <= 18 * 60 else { return nil }
            offset = sign * (hours * 3_600 + minutes * 60)
        default:
            return nil
        }
        guard index == s.count else { return nil }
        let seconds = daysFromCivil(year: year, month: month, day: day) * 86_400 + hour * 3_600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
