import Foundation
import Testing
@testable import Granary

/// Classes for the Library fixture's entities; Loan and Member stay unbound and use `ManagedObject`.
final class LibraryAuthor: ManagedObject {
    @Managed var name: String
    @Managed var email: String?
    @Managed var born: Date?
    @Managed var books: [LibraryBook]
}

final class LibraryBook: ManagedObject {
    @Managed var title: String
    @Managed var pages: Int
    @Managed var year: Int?
    @Managed var inPrint: Bool
    @Managed var price: Decimal?
    @Managed var added: Date
    @Managed var author: LibraryAuthor?
}

/// The model files under `Fixtures/` and model files written on the fly for error cases.
enum XcodeFixtures {
    /// A fixture by its path under `Fixtures/`.
    static func url(_ name: String) throws -> URL {
        let fixtures = try #require(Bundle.module.url(forResource: "Fixtures", withExtension: nil))
        return fixtures.appendingPathComponent(name)
    }

    /// Registers the codec the Library model's transformable attribute names: every test that loads the
    /// model calls it, since tests run in any order.
    static func registerLibraryTransformables() {
        _ = AttributeType.transformable([String].self, name: "[String]")
    }

    /// The Library model, with its transformable type registered and its classes bound.
    static func library() throws -> ManagedObjectModel {
        registerLibraryTransformables()
        return try ManagedObjectModel(
            contentsOf: url("Library.xcdatamodel"), classes: ["Author": LibraryAuthor.self, "Book": LibraryBook.self])
    }

    /// The Tasks bundle: three versions, the third current.
    static func tasks() throws -> XcodeModelBundle {
        try XcodeModelBundle(contentsOf: url("Tasks.xcdatamodeld"))
    }

    /// A fresh directory for files a test writes.
    static func scratchDirectory(_ label: String = #function) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("granary-xcode")
            .appendingPathComponent("\(label.filter { $0.isLetter })-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Writes `contents` as the `contents` file of a package `<name>.xcdatamodel` inside `directory`.
    @discardableResult
    static func writePackage(_ contents: String, named name: String, in directory: URL) throws -> URL {
        try writePackage(bytes: Array(contents.utf8), named: name, in: directory)
    }

    /// Writes `bytes`, which need not be UTF-8, as the `contents` file of a package.
    @discardableResult
    static func writePackage(bytes: [UInt8], named name: String, in directory: URL) throws -> URL {
        let package = directory.appendingPathComponent("\(name).xcdatamodel", isDirectory: true)
        try FileManager.default.createDirectory(at: package, withIntermediateDirectories: true)
        try Data(bytes).write(to: package.appendingPathComponent("contents"))
        return package
    }

    /// Writes an `.xccurrentversion` naming `version` into a bundle directory, as Xcode does.
    static func writeCurrentVersion(_ version: String, in bundle: URL) throws {
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
            \t<key>_XCCurrentVersionName</key>
            \t<string>\(version).xcdatamodel</string>
            </dict>
            </plist>

            """
        try Data(plist.utf8).write(to: bundle.appendingPathComponent(".xccurrentversion"))
    }

    /// The file header and one entity "Thing" around `body`: the first line of `body` is line 4.
    static func model(entity body: String, after more: String = "") -> String {
        """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22758" systemVersion="23G93" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            <entity name="Thing" representedClassName="Thing" syncable="YES" codeGenerationType="class">
        \(body)
            </entity>
        \(more)</model>

        """
    }

    /// The error loading `contents` as a package throws, or nil (and a recorded issue) when it loads.
    static func error(loading contents: String, _ label: String = #function) throws -> XcodeModelError? {
        let package = try writePackage(contents, named: "Broken", in: scratchDirectory(label))
        do {
            _ = try ManagedObjectModel(contentsOf: package)
            Issue.record("the model loaded")
            return nil
        } catch {
            return error
        }
    }
}
