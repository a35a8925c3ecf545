import GranaryStack

/// How a connect runs its actions, beside the stack's own options.
public struct ConnectOptions: Sendable {
    /// The stack's options (store directory, view-context queue, background-save error handler).
    public var stack: StackOptions
    /// How many generic actions run at once (Coherence: 5, fixed).
    public var maximumConcurrentGenericActions: Int

    public init(stack: StackOptions = StackOptions(), maximumConcurrentGenericActions: Int = 5) {
        self.stack = stack
        self.maximumConcurrentGenericActions = maximumConcurrentGenericActions
    }
}
