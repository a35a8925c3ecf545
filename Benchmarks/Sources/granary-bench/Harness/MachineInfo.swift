import Foundation

/// The facts about this machine that a reader needs to compare two runs: CPU, cores, memory, kernel and
/// the filesystem the stores were written to.
struct MachineInfo {
    var cpuModel: String
    var cores: Int
    var memoryGiB: Double
    var kernel: String
    /// Filesystem type, device and mount point of the scratch folder, from /proc/mounts.
    var filesystem: String

    /// Reads the facts from /proc; a fact that cannot be read shows as "unknown".
    static func current(scratch: String) -> MachineInfo {
        let cpuinfo = read("/proc/cpuinfo")
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .flatMap { $0.split(separator: ":", maxSplits: 1).last }
            .map { $0.trimmingCharacters(in: .whitespaces) }
        let memoryKiB = read("/proc/meminfo").split(separator: "\n").first { $0.hasPrefix("MemTotal:") }
            .flatMap { line in line.split(separator: " ").dropFirst().first.flatMap { Double($0) } }
        return MachineInfo(
            cpuModel: model ?? "unknown",
            cores: ProcessInfo.processInfo.activeProcessorCount,
            memoryGiB: (memoryKiB ?? 0) / 1_048_576,
            kernel: read("/proc/sys/kernel/osrelease").trimmingCharacters(in: .whitespacesAndNewlines),
            filesystem: filesystem(of: scratch))
    }

    var summary: String {
        "Machine: \(cpuModel), \(cores) cores, \(Format.decimal(memoryGiB, digits: 0)) GiB, Linux \(kernel); "
            + "stores on \(filesystem)"
    }

    /// The mount with the longest mount point that contains `path`: the filesystem the path lives on.
    static func filesystem(of path: String) -> String {
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        var best: (mountPoint: String, description: String)?
        for line in read("/proc/mounts").split(separator: "\n") {
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count >= 4 else { continue }
            // /proc/mounts escapes spaces in mount points as \040.
            let mountPoint = fields[1].replacingOccurrences(of: "\\040", with: " ")
            let contains = mountPoint == "/" || resolved == mountPoint || resolved.hasPrefix(mountPoint + "/")
            if contains && mountPoint.count >= (best?.mountPoint.count ?? -1) {
                best = (mountPoint, "\(fields[2]) (\(fields[0]) at \(mountPoint))")
            }
        }
        return best?.description ?? "unknown"
    }

    private static func read(_ path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }
}
