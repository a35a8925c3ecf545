// Child processes for the crash tests, killed with SIGKILL by the tests at random moments or at named
// points inside the engine.
//
// Usage:
//   granary-crashtest <store-directory> [threads] [checkpoint-threshold-bytes]
//       commits forever (see EngineWriter.swift)
//   granary-crashtest migrate <store-directory> <point|run>
//       migrates a store (see MigrationChild.swift)
//   granary-crashtest onesided <store-directory> <seed>
//       links and deletes through relationships without an inverse (see OneSidedChild.swift)
//   granary-crashtest history <store-directory> <seed>
//       saves into a store that tracks persistent history (see HistoryChild.swift)
//   granary-crashtest upload <shared-folder> <local-file>
//       uploads into a shared folder (see UploadChild.swift)
//   granary-crashtest sync-events <event-store-directory>
//       records steps into a GranarySync event store (see EventStoreChild.swift)
//   granary-crashtest sync-merge <directory>
//       integrates remote events into a store through GranarySync's merge (see MergeChild.swift)
//   granary-crashtest sync-export <directory>
//       records and exports GranarySync events into a shared folder (see ExportChild.swift)
//   granary-crashtest sync-download <directory>
//       downloads a shared folder's GranarySync events into an event store (see DownloadChild.swift)
//   granary-crashtest sync-capture <directory>
//       saves into a store with history and captures each save into an event store (see CaptureChild.swift)
//   granary-crashtest sync-rebase <directory>
//       records, exports and rebases on a shared folder (see RebaseChild.swift)
//   granary-crashtest sync-device <device-directory> <shared-folder> <seed>
//       saves and merges one device of a synced pair (see EnsembleChild.swift)
//   granary-crashtest inaccessible-fault <store-directory>
//       fires a fault whose object is gone, with shouldDeleteInaccessibleFaults off (see InaccessibleFaultChild.swift)
//   granary-crashtest connect-outbox <store-directory> <server-url> <seed> [flush]
//       saves edits that a GranaryConnect outbox sends to a web service (see OutboxChild.swift)
import Foundation

/// One unbuffered write(2) per line: a line reaches the parent before the next commit starts, and lines
/// from two threads never interleave (pipe writes under PIPE_BUF bytes are atomic).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let arguments = CommandLine.arguments
let rest = Array(arguments.dropFirst(2))
switch arguments.count > 1 ? arguments[1] : "" {
case "migrate": runMigrationChild(rest)
case "onesided": runOneSidedChild(rest)
case "history": runHistoryChild(rest)
case "upload": runUploadChild(rest)
case "sync-device": runEnsembleChild(rest)
case "sync-events": runEventStoreChild(rest)
case "sync-merge": runMergeChild(rest)
case "sync-export": runExportChild(rest)
case "sync-download": runDownloadChild(rest)
case "sync-capture": runCaptureChild(rest)
case "sync-rebase": runRebaseChild(rest)
case "connect-outbox": runOutboxChild(rest)
case "inaccessible-fault": runInaccessibleFaultChild(rest)
default: runEngineWriter(arguments)
}
