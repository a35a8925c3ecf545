import Foundation

/// One `.xcdatamodel` package: a directory holding the `contents` XML file Xcode writes, and the version
/// name it gives the model (the package name without its extension).
struct XcodeModelPackage {
    /// What a URL given to the loader points at.
    enum Source {
        case package(XcodeModelPackage)
        case bundle(URL)
    }

    /// The package directory.
    let url: URL

    /// The version name: "Model 2" for "Model 2.xcdatamodel".
    var name: String { url.deletingPathExtension().lastPathComponent }

    /// The XML file inside the package.
    var contentsURL: URL { url.appendingPathComponent("contents") }

    /// Whether `url` is a package, a bundle of versions, or neither: decided by the extension Xcode gives
    /// each, or for a directory without one, by what it holds. A `contents` file stands for its package.
    /// - Throws: `XcodeModelError.unreadable` when nothing exists at `url`, `.notAModel` otherwise.
    static func source(of url: URL) throws(XcodeModelError) -> Source {
        let fileManager = FileManager.default
        let location = XcodeModelError.Location(path: url.path)
        var isDirectory: ObjCBool = false
        guard fileManager.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw .unreadable(location, reason: "no such file or directory")
        }
        let ext = url.pathExtension.lowercased()
        if ext == "mom" || ext == "momd" {
            throw .notAModel(
                location, reason: "this is a compiled model; load the .xcdatamodeld or .xcdatamodel it was compiled from")
        }
        guard isDirectory.boolValue else {
            if url.lastPathComponent == "contents" { return .package(XcodeModelPackage(url: url.deletingLastPathComponent())) }
            throw .notAModel(location, reason: "expected an .xcdatamodel or .xcdatamodeld directory, found a file")
        }
        if ext == "xcdatamodeld" { return .bundle(url) }
        if ext == "xcdatamodel" || fileManager.fileExists(atPath: url.appendingPathComponent("contents").path) {
            return .package(XcodeModelPackage(url: url))
        }
        let entries = (try? fileManager.contentsOfDirectory(atPath: url.path)) ?? []
        if entries.contains(where: { $0.hasSuffix(".xcdatamodel") }) { return .bundle(url) }
        throw .notAModel(location, reason: "the directory holds neither a contents file nor .xcdatamodel versions")
    }

    /// The declarations of the package's `contents` file, with every problem found in it.
    ///
    /// Problems reading the file (`XcodeModelError.unreadable` when it cannot be read, `.malformedXML`
    /// when it is not well-formed) are the only problem in the result; otherwise it holds every problem
    /// `XcodeModelDecoder.decode(_:)` finds.
    func decode(classes: XcodeClassBinding) -> XcodeModelDecoder.Result {
        let path = contentsURL.path
        func failure(_ problem: XcodeModelError) -> XcodeModelDecoder.Result {
            XcodeModelDecoder.Result(sourceMap: XcodeSourceMap(path: path), problems: [problem])
        }
        guard FileManager.default.fileExists(atPath: path) else {
            let location = XcodeModelError.Location(path: url.path)
            let isXcode3 = ["elements", "layout"].contains { FileManager.default.fileExists(atPath: url.appendingPathComponent($0).path) }
            return failure(isXcode3 ? .xcode3Format(location) : .unreadable(location, reason: "the package has no contents file"))
        }
        let data: Data
        do {
            data = try Data(contentsOf: contentsURL)
        } catch {
            return failure(.unreadable(XcodeModelError.Location(path: path), reason: error.localizedDescription))
        }
        let root: XMLReader.Element
        do {
            root = try XMLReader.parse(Array(data))
        } catch {
            return failure(
                .malformedXML(XcodeModelError.Location(path: path, line: error.line), reason: "column \(error.column): \(error.reason)"))
        }
        return XcodeModelDecoder(path: path, classes: classes).decode(root)
    }
}

extension ManagedObjectModel {
    /// The model a decoded file declares, with model errors placed at the element they are about.
    ///
    /// A file with problems builds no model: its declarations lack the elements the problems are about,
    /// and the model errors that would cause are not the author's.
    /// - Throws: every problem of the file (see `XcodeModelError.combining(_:)`), or `.invalidModel`.
    convenience init(decoded: XcodeModelDecoder.Result, versionIdentifier: String) throws(XcodeModelError) {
        guard decoded.problems.isEmpty else { throw .combining(decoded.problems) }
        do {
            try self.init(entities: decoded.entities, configurations: decoded.configurations, versionIdentifier: versionIdentifier)
        } catch {
            throw .invalidModel(decoded.sourceMap.location(of: error), error: error)
        }
    }
}
