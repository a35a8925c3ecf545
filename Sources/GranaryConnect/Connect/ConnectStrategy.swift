import GranaryStack

/// A context strategy a connect can make on its own, for `GenericConnect<MixedStrategy>(name:)`: the
/// four built-in strategies with their default merge policies.
public protocol ConnectStrategy: ContextStrategy {
    /// The strategy with its defaults.
    static var standard: Self { get }
}

extension DirectStrategy: ConnectStrategy {
    public static var standard: DirectStrategy { DirectStrategy() }
}

extension IndependentStrategy: ConnectStrategy {
    public static var standard: IndependentStrategy { IndependentStrategy() }
}

extension NestedStrategy: ConnectStrategy {
    public static var standard: NestedStrategy { NestedStrategy() }
}

extension MixedStrategy: ConnectStrategy {
    public static var standard: MixedStrategy { MixedStrategy() }
}
