import CLZ4

/// liblz4's block API: fast compression of snapshot blocks whose framing and checksums are our own.
/// `package`, not internal: GranarySync compresses the payloads of its cloud files with it.
package enum LZ4 {
    /// The largest input liblz4 accepts (`LZ4_MAX_INPUT_SIZE`).
    package static let maxInputSize = 0x7E00_0000

    /// Compresses `src` into a new array (which may be larger than `src` for incompressible data).
    package static func compress(_ src: UnsafeRawBufferPointer) -> [UInt8] {
        precondition(src.count <= maxInputSize, "LZ4 input of \(src.count) bytes is too large")
        let bound = Int(LZ4_compressBound(Int32(src.count)))
        return [UInt8](unsafeUninitializedCapacity: bound) { dst, count in
            guard let source = src.baseAddress, src.count > 0 else {
                // liblz4 encodes empty input as one token byte; keep that rather than special-case it.
                count = Int(LZ4_compress_default("", UnsafeMutableRawPointer(dst.baseAddress!)
                    .assumingMemoryBound(to: CChar.self), 0, Int32(bound)))
                return
            }
            let written = LZ4_compress_default(
                source.assumingMemoryBound(to: CChar.self),
                UnsafeMutableRawPointer(dst.baseAddress!).assumingMemoryBound(to: CChar.self),
                Int32(src.count), Int32(bound))
            precondition(written > 0, "LZ4_compress_default failed with a bound-sized buffer")
            count = Int(written)
        }
    }

    /// Compresses `src`; see `compress(_: UnsafeRawBufferPointer)`.
    package static func compress(_ src: [UInt8]) -> [UInt8] {
        src.withUnsafeBytes { compress($0) }
    }

    /// Decompresses `src`, which must expand to exactly `rawSize` bytes.
    /// - Parameters:
    ///   - context: the file name for error messages.
    ///   - offset: where `src` starts in that file, for error messages.
    /// - Throws: `StorageError.corruption` when the data is malformed or expands to another size.
    package static func decompress(_ src: UnsafeRawBufferPointer, rawSize: Int, context: String, offset: Int64) throws -> [UInt8] {
        guard rawSize >= 0, rawSize <= maxInputSize, src.count <= maxInputSize else {
            throw StorageError.corruption(file: context, offset: offset, reason: "LZ4 block sizes out of range (\(src.count) → \(rawSize))")
        }
        var result: Int32 = -1
        let output = [UInt8](unsafeUninitializedCapacity: max(rawSize, 1)) { dst, count in
            result = LZ4_decompress_safe(
                src.baseAddress.map { $0.assumingMemoryBound(to: CChar.self) } ?? nil,
                UnsafeMutableRawPointer(dst.baseAddress!).assumingMemoryBound(to: CChar.self),
                Int32(src.count), Int32(rawSize))
            count = result >= 0 ? Int(result) : 0
        }
        guard result >= 0 else {
            throw StorageError.corruption(file: context, offset: offset, reason: "LZ4 data is malformed (error \(result))")
        }
        guard Int(result) == rawSize else {
            throw StorageError.corruption(file: context, offset: offset, reason: "LZ4 block expands to \(result) bytes, not \(rawSize)")
        }
        return output
    }
}
