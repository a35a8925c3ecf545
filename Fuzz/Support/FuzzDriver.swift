import Foundation

#if GRANARY_FUZZ
import CFuzzer
#endif

/// The main of every fuzz target: libFuzzer's loop when built by `make fuzz`, otherwise the inputs named
/// on the command line, run through the same test function.
///
/// The second mode is why the targets are ordinary executables in the package: the normal build compiles
/// them, so an API change that breaks one fails there and not first in a fuzzing run, and a crash file
/// replays under the debugger of a normal build (`swift run fuzz-row crash-…`).
public enum FuzzDriver {
    // libFuzzer calls back through a C function pointer, which cannot capture the test; it runs on one
    // thread, and this is written once before the loop starts.
    nonisolated(unsafe) private static var test: ([UInt8]) -> Void = { _ in }

    /// Runs `test` on every input and exits.
    ///
    /// A test reports a broken property with `FuzzDriver.fail`, which traps so that libFuzzer saves the input.
    public static func run(_ name: String, _ test: @escaping ([UInt8]) -> Void) -> Never {
        #if GRANARY_FUZZ
        Self.test = test
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in
            FuzzDriver.test(size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size)))
            return 0
        })
        #else
        let paths = CommandLine.arguments.dropFirst().filter { !$0.hasPrefix("-") }
        if paths.isEmpty {
            print("usage: \(name) FILE|DIRECTORY...  (runs each input once; `make fuzz` builds the fuzzing version)")
            exit(0)
        }
        var count = 0
        for path in paths {
            for file in files(at: path) {
                guard let data = FileManager.default.contents(atPath: file) else {
                    print("\(name): cannot read \(file)")
                    exit(1)
                }
                test(Array(data))
                count += 1
            }
        }
        print("\(name): \(count) inputs ran without a failure")
        exit(0)
        #endif
    }

    /// Reports a broken property of the target and stops, so that the fuzzer keeps the input.
    public static func fail(_ message: String, _ input: [UInt8]) -> Never {
        let shown = input.count <= 256 ? "\(input)" : "\(input.count) bytes"
        fatalError("\(message)\ninput: \(shown)")
    }

    /// The regular files at `path`, sorted: the file itself, or a directory's files (a corpus).
    private static func files(at path: String) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else { return [path] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.sorted().map { path + "/" + $0 }.filter {
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: $0, isDirectory: &isDirectory) && !isDirectory.boolValue
        }
    }
}

extension FuzzDriver {
    /// A directory of the process's own for the files a target writes: in memory (/dev/shm) where there is
    /// one, since a target that writes files writes them on every run, and the engine syncs them.
    public static func scratchDirectory(_ name: String) -> URL {
        let base = FileManager.default.fileExists(atPath: "/dev/shm") ? URL(fileURLWithPath: "/dev/shm") : FileManager.default.temporaryDirectory
        let url = base.appendingPathComponent("granary-\(name)-\(getpid())")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
