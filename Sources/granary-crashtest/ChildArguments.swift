import Foundation

/// What an object-level crash child is started with: the store directory and a seed for the random
/// edits it makes, so that a failing run can be repeated. Usage errors exit with status 2.
struct ChildArguments {
    let storePath: String
    private var state: UInt64

    init(_ args: [String], mode: String) {
        guard let path = args.first else {
            FileHandle.standardError.write(Data("usage: granary-crashtest \(mode) <store> [seed]\n".utf8))
            exit(2)
        }
        storePath = path
        state = UInt64(args.count > 1 ? Int(args[1]) ?? 1 : 1) | 1
    }

    /// A number below `bound` (xorshift: the same seed gives the same run).
    mutating func next(_ bound: Int) -> Int {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return Int(state % UInt64(bound))
    }
}
