import Foundation

/// A position in one store's persistent history: Core Data's `NSPersistentHistoryToken`.
///
/// Every transaction a store records gets the next value of a counter the store keeps (it survives
/// reopening, crash recovery and purging), and its token names that store and that value. Keep the token
/// of the last transaction you processed (it is `Codable`, for writing to disk) and fetch the history after
/// it next time.
///
/// Tokens of one store compare by their counter: a later transaction has a greater token. Tokens of
/// different stores are ordered by store identifier first, which only makes sorting deterministic; their
/// order says nothing about when their transactions happened.
public struct PersistentHistoryToken: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The identifier of the store whose history this token is a position in.
    public let storeIdentifier: UUID
    /// The number of the transaction: 1 for a store's first, increasing by one with each.
    public let transactionNumber: Int64

    /// A token for the `transactionNumber`th transaction of the store `storeIdentifier`; made by stores,
    /// and by apps that kept the two values rather than the token.
    public init(storeIdentifier: UUID, transactionNumber: Int64) {
        self.storeIdentifier = storeIdentifier
        self.transactionNumber = transactionNumber
    }

    public static func < (a: PersistentHistoryToken, b: PersistentHistoryToken) -> Bool {
        if a.storeIdentifier != b.storeIdentifier { return a.storeIdentifier.uuidString < b.storeIdentifier.uuidString }
        return a.transactionNumber < b.transactionNumber
    }

    public var description: String { "<history token \(storeIdentifier.uuidString) #\(transactionNumber)>" }
}
