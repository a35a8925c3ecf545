import Granary

/// What one merge did.
public struct MergeReport: Sendable, Hashable {
    /// Whether local saves since the last merge were recorded as an event for the other devices.
    public var capturedLocalChanges = false
    /// Files downloaded from the cloud in this merge.
    public var downloadedEvents = 0
    /// Events of other devices folded into the store.
    public var integratedEvents = 0
    /// Events downloaded but not integrated yet, because an event they depend on has not arrived or they
    /// were made with a model version this app does not know. Not an error: they wait for a later merge.
    public var waitingEvents = 0
    /// Events of this device uploaded in this merge.
    public var exportedEvents = 0
    /// What the merge saved into the store (empty when it changed nothing).
    public var changes = ContextChanges()
    /// Cloud files the merge left for a later one, and why: a damaged or truncated file, an event whose
    /// parts have not all arrived, a file removed while it was read. Nothing here is an error: a file
    /// that arrives whole later is read then.
    public var diagnostics: [String] = []

    public init() {}
}

extension MergeReport: CustomStringConvertible {
    /// One line of counts, as the log shows each merge.
    public var description: String {
        var parts = [capturedLocalChanges ? "local changes recorded" : "no local changes",
                     "\(downloadedEvents) downloaded", "\(integratedEvents) integrated"]
        if waitingEvents > 0 { parts.append("\(waitingEvents) waiting") }
        parts.append("\(exportedEvents) exported")
        if !changes.isEmpty {
            parts.append("\(changes.inserted.count) inserted, \(changes.updated.count) updated, \(changes.deleted.count) deleted")
        }
        if !diagnostics.isEmpty { parts.append("\(diagnostics.count) files left for later") }
        return parts.joined(separator: ", ")
    }
}
