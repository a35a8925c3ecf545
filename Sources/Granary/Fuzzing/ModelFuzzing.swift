import Foundation

/// The Xcode model reader's stages, reachable from the fuzz targets in `Fuzz/`.
///
/// The XML reader and the model decoder are internal, and the public loader only reads files; an SPI
/// lets a fuzz target hand them bytes directly without widening the API that `import Granary` shows.
/// Nothing else should use it.
@_spi(Fuzzing) public enum ModelFuzzing {
    /// An element as `XMLReader` reads it, in a form a fuzz target can compare and write back out.
    public struct XMLNode: Sendable, Hashable {
        public var name: String
        /// Name and value pairs in the order written.
        public var attributes: [[String]]
        /// The character data directly inside the element, references resolved.
        public var text: String
        public var children: [XMLNode]

        public init(name: String, attributes: [[String]], text: String, children: [XMLNode]) {
            self.name = name
            self.attributes = attributes
            self.text = text
            self.children = children
        }
    }

    /// Reads a UTF-8 XML document as the model loader does.
    /// - Throws: a syntax error naming the line and column where the document stops being well-formed.
    public static func parseXML(_ bytes: [UInt8]) throws -> XMLNode {
        node(try XMLReader.parse(bytes))
    }

    /// Loads a model from the bytes of an `.xcdatamodel` package's `contents` file: reads the XML, decodes
    /// the declarations and builds the model, as `ManagedObjectModel(contentsOf:)` does after reading the file.
    /// - Throws: `XcodeModelError` for every problem, as the loader would.
    public static func loadModel(contents bytes: [UInt8]) throws(XcodeModelError) -> ManagedObjectModel {
        let path = "Fuzz.xcdatamodel/contents"
        let root: XMLReader.Element
        do {
            root = try XMLReader.parse(bytes)
        } catch {
            throw .malformedXML(XcodeModelError.Location(path: path, line: error.line), reason: "column \(error.column): \(error.reason)")
        }
        let decoded = XcodeModelDecoder(path: path, classes: XcodeClassBinding([:])).decode(root)
        return try ManagedObjectModel(decoded: decoded, versionIdentifier: "Fuzz")
    }

    private static func node(_ element: XMLReader.Element) -> XMLNode {
        XMLNode(name: element.name, attributes: element.attributes.map { [$0.name, $0.value] }, text: element.text,
                children: element.children.map(node))
    }
}
