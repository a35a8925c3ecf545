/// The problems and warnings found while reading one model file (or a bundle's directory), gathered so
/// that loading reports every problem at once rather than stopping at the first.
///
/// Decoders report a problem here and skip the element it is about, then go on with the next element;
/// loading throws them all together at the end. A reference type because every element of a file shares
/// one collector, however deep it sits.
final class XcodeDiagnostics {
    private(set) var problems: [XcodeModelError] = []
    private(set) var warnings: [XcodeModelWarning] = []

    var hasProblems: Bool { !problems.isEmpty }

    func report(_ problem: XcodeModelError) {
        problems.append(contentsOf: problem.problems)
    }

    func warn(_ warning: XcodeModelWarning) {
        warnings.append(warning)
    }

    /// Runs `body`; a problem it throws is reported and nil returned, so the caller skips that element.
    func attempt<T>(_ body: () throws(XcodeModelError) -> T) -> T? {
        do {
            return try body()
        } catch {
            report(error)
            return nil
        }
    }
}
