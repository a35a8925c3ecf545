/// Reads the derivation of an `<attribute>` element: Xcode writes `derived="YES"` with the expression in
/// `derivationExpression` (`lowercase:(name)`, `books.@count`, `now()`…). The expression itself is checked
/// when the model is built, which knows the other properties it names.
enum XcodeDerivedAttribute {
    /// The derivation expression of a derived attribute, or nil for an attribute the app sets. A derived
    /// attribute without an expression is reported (and read as an attribute the app sets); an expression
    /// on an attribute not marked derived is ignored, as Core Data ignores it, with a warning.
    static func derivation(of element: XcodeModelElement, isDerived: Bool) -> String? {
        let expression = element.nonEmpty("derivationExpression")
        guard isDerived else {
            if expression != nil {
                element.ignore("derivationExpression", "the attribute is not marked derived=\"YES\"")
            }
            return nil
        }
        guard let expression else {
            element.diagnostics.report(.missingAttribute(element.location, attribute: "derivationExpression"))
            return nil
        }
        return expression
    }
}
