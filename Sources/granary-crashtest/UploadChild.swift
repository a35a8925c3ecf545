import Foundation
@_spi(CrashTesting) import GranarySync

/// The shared-folder upload crash child: uploads one local file into a `LocalDirectoryFileSystem` again
/// and again under new names (`events/copy-<n>`), printing `uploading <n>` before and `uploaded <n>`
/// after each, until the parent kills it with SIGKILL. The parent then checks that every name a listing
/// shows holds the whole file: a killed upload leaves only its hidden temp file.
///
/// `granary-crashtest upload <shared-folder> <local-file>`
func runUploadChild(_ args: [String]) -> Never {
    guard args.count == 2 else {
        FileHandle.standardError.write(Data("usage: granary-crashtest upload <shared-folder> <local-file>\n".utf8))
        exit(2)
    }
    let fileSystem = LocalDirectoryFileSystem(rootDirectory: URL(fileURLWithPath: args[0]))
    let source = URL(fileURLWithPath: args[1])
    CrashChildProcess.run("upload child") {
        try await fileSystem.connect()
        try await fileSystem.createDirectory(atPath: "events")
        var n = 0
        while true {
            n += 1
            say("uploading \(n)")
            try await fileSystem.uploadLocalFile(at: source, toPath: "events/copy-\(n)")
            say("uploaded \(n)")
        }
    }
}
