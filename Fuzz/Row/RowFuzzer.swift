import FuzzSupport
@_spi(Fuzzing) import GranaryStorage

/// Fuzzes the row codec: the bytes of every stored row go through it on every read.
///
/// Property: any bytes decode or throw, never trap; the three decoders (whole row, value by value,
/// into a reused row) agree on what they accept and what they read; a decoded row encodes to bytes that
/// decode to a row encoding to the same bytes. (Not that those bytes are the input: varints may be
/// padded, and strings are repaired rather than validated, by design, so invalid UTF-8 grows.)
@main enum RowFuzzer {
    static func main() { FuzzDriver.run("fuzz-row", test) }

    static func test(_ bytes: [UInt8]) {
        var reused = Row([.string("left over"), .int(1)])
        let whole = try? StorageFuzzing.decodeRow(bytes)
        let lazy = try? StorageFuzzing.decodeRowLazily(bytes, reusing: &reused)
        guard let row = whole else {
            if lazy != nil { FuzzDriver.fail("value-by-value decoding accepts a row that decode() rejects", bytes) }
            return
        }
        guard let lazy else { FuzzDriver.fail("value-by-value decoding rejects a row that decode() accepts", bytes) }
        let encoded = StorageFuzzing.encodeRow(row)
        guard StorageFuzzing.encodeRow(Row(lazy)) == encoded, StorageFuzzing.encodeRow(reused) == encoded else {
            FuzzDriver.fail("the three decoders read different rows", bytes)
        }
        let again: Row
        do { again = try StorageFuzzing.decodeRow(encoded) } catch {
            FuzzDriver.fail("a re-encoded row does not decode: \(error)", bytes)
        }
        guard StorageFuzzing.encodeRow(again) == encoded else { FuzzDriver.fail("decode(encode(row)) is another row", bytes) }
    }
}
