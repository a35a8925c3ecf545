import FuzzSupport
@_spi(Fuzzing) import Granary

/// Fuzzes the strict XML reader that model files go through before the model decoder sees them.
///
/// Property: any bytes read as a document or throw a syntax error, never trap; a document that reads
/// writes back out (escaped) as XML that reads as the same tree.
@main enum XMLFuzzer {
    static func main() { FuzzDriver.run("fuzz-xml", test) }

    static func test(_ bytes: [UInt8]) {
        guard let tree = try? ModelFuzzing.parseXML(bytes) else { return }
        var text = ""
        write(tree, into: &text)
        let again: ModelFuzzing.XMLNode
        do {
            again = try ModelFuzzing.parseXML(Array(text.utf8))
        } catch {
            FuzzDriver.fail("the document written back from a tree does not read: \(error)\n\(text)", bytes)
        }
        guard again == tree else { FuzzDriver.fail("the document written back reads as another tree:\n\(text)", bytes) }
    }

    /// Writes the element with its text first and its children after it, every character that XML would
    /// read differently escaped as a reference.
    static func write(_ node: ModelFuzzing.XMLNode, into text: inout String) {
        text += "<" + node.name
        for attribute in node.attributes { text += " \(attribute[0])=\"\(escape(attribute[1]))\"" }
        text += ">" + escape(node.text)
        for child in node.children { write(child, into: &text) }
        text += "</\(node.name)>"
    }

    static func escape(_ s: String) -> String {
        var out = ""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "\t", "\n", "\r": out += "&#\(scalar.value);"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
