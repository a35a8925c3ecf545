import Foundation
import Granary
import GranaryConnect
import GranaryStack
@_spi(CrashTesting) import GranarySync

/// The outbox crash child: a connect whose outbox sends local edits to a web service while the parent
/// kills it with SIGKILL — during a save, a send, or between the server's answer and the commit of the
/// outbox cursor. Each committed save prints `saved <uuid> <n>` (n: the object's edit number, 0 for its
/// insert). The parent then runs the child again with `flush` until the outbox is empty, and checks
/// that every acknowledged edit reached the server once (by idempotency key), in order per object.
///
/// `granary-crashtest connect-outbox <store-directory> <server-url> <seed> [flush]`
func runOutboxChild(_ args: [String]) -> Never {
    guard args.count >= 3, let server = URL(string: args[1]) else {
        FileHandle.standardError.write(Data("usage: granary-crashtest connect-outbox <store-directory> <server-url> <seed> [flush]\n".utf8))
        exit(2)
    }
    let directory = URL(fileURLWithPath: args[0])
    let seed = Int(args[2]) ?? 1
    let flushOnly = args.count > 3 && args[3] == "flush"
    CrashChildProcess.run("connect-outbox child") {
        do {
            try await runOutbox(directory: directory, server: server, seed: seed, flushOnly: flushOnly)
        } catch {
            CrashChildProcess.say("error \(error)")
            throw error
        }
    }
}

/// The child's model: customers keyed by a uuid kept on deletion, no class of their own.
func outboxCrashModel() throws -> ManagedObjectModel {
    try ManagedObjectModel(version: "1") {
        Entity("Customer") {
            Attribute("uuid", .string, preservesValueInHistoryOnDeletion: true)
            Attribute("edit", .integer64, defaultValue: 0)
            Unique("uuid")
        }
    }
}

private func runOutbox(directory: URL, server: URL, seed: Int, flushOnly: Bool) async throws {
    let connect = GenericConnect<DirectStrategy>(name: "Outbox", managedObjectModel: try outboxCrashModel(),
                                                 options: ConnectOptions(stack: StackOptions(storeDirectory: directory)))
    try connect.attachPersistentStore(for: StoreConfiguration(options: .init(persistentHistoryTracking: true)))
    try connect.start()
    let transport = WebServiceOutboxTransport(service: WebService(baseURL: server, timeout: 5), path: "outbox")
    let outbox = try connect.enableOutbox(transport: transport, retryPolicy: OutboxRetryPolicy(initialDelay: .milliseconds(20)),
                                          flushesAutomatically: !flushOnly)
    if flushOnly {
        while try outbox.pendingCount() > 0 {
            do { try await outbox.send() } catch { try await Task.sleep(for: .milliseconds(20)) }
        }
        CrashChildProcess.say("flushed")
        exit(0)
    }
    var random = UInt64(truncatingIfNeeded: seed) &* 0x9E37_79B9_7F4A_7C15 | 1
    func next(_ bound: Int) -> Int {
        random ^= random << 13
        random ^= random >> 7
        random ^= random << 17
        return Int(random % UInt64(bound))
    }
    let context = connect.newBackgroundContext()
    var edits: [String: Int] = [:]
    var made = 0
    while true {
        let (uuid, edit): (String, Int) = try context.performAndWait {
            if made == 0 || next(3) == 0 || edits.isEmpty {
                let uuid = "s\(seed)-\(made)"
                made += 1
                let customer = try EntityDescription.insertNewObject(forEntityName: "Customer", into: context)
                try customer.setValue(uuid, forKey: "uuid")
                try context.save()
                edits[uuid] = 0
                return (uuid, 0)
            }
            let uuid = edits.keys.sorted()[next(edits.count)]
            let edit = edits[uuid]! + 1
            var request = FetchRequest<ManagedObject>(entityName: "Customer")
            request.filter = (FetchPredicate.key("uuid") == uuid).node
            let customer = try context.fetch(request)[0]
            try customer.setValue(edit, forKey: "edit")
            try context.save()
            edits[uuid] = edit
            return (uuid, edit)
        }
        CrashChildProcess.say("saved \(uuid) \(edit)")
        try await Task.sleep(for: .milliseconds(Int64(next(4))))
    }
}
