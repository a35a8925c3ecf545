/// What a context's faulting has loaded: round trips to the store (or parent) and objects filled.
///
/// Internal, for tests: whether an access pattern loads each object once is a property of the
/// faulting code that timings show only at sizes too large for unit tests.
struct FaultStatistics: Sendable, Hashable {
    /// Calls that loaded faults, one batch or one object each.
    var loads = 0
    /// Faults filled with their values, each time one was.
    var fulfilledObjects = 0
}
