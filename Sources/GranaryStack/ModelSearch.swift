import Foundation
import Granary

/// Finds a model by name as Core Data's `NSPersistentContainer(name:)` finds `<name>.momd` in the app's
/// bundle: first among the models registered in code, then among the model files shipped with the app.
///
/// Linux has no model compiler, so the files looked for are Xcode's sources, `<name>.xcdatamodeld` or
/// `<name>.xcdatamodel`, read with `ManagedObjectModel(contentsOf:)`: an app ships them as resources
/// (SwiftPM's `.copy`) or beside its executable. Tests give their own directories.
struct ModelSearch: Sendable {
    /// Searched first.
    var registry: ModelRegistry
    /// Directories that may hold the model file, in the order searched.
    var directories: [URL]

    init(registry: ModelRegistry = .shared, directories: [URL] = ModelSearch.shippedModelDirectories()) {
        self.registry = registry
        self.directories = directories
    }

    /// Where an app's model files can be: the main bundle's resources, the main executable's directory,
    /// and the resource bundles SwiftPM puts beside the executable (`<Package>_<Target>.resources` on
    /// Linux, `.bundle` with `Contents/Resources` on macOS), each directory once.
    /// - Parameters:
    ///   - resourceDirectory: The main bundle's resource directory.
    ///   - executableDirectory: The directory of the main executable.
    static func shippedModelDirectories(resourceDirectory: URL? = Bundle.main.resourceURL,
                                        executableDirectory: URL? = Bundle.main.executableURL?.deletingLastPathComponent()) -> [URL] {
        var directories: [URL] = []
        func add(_ url: URL) {
            let url = url.standardizedFileURL
            if !directories.contains(where: { $0.path == url.path }) { directories.append(url) }
        }
        if let resourceDirectory { add(resourceDirectory) }
        if let executableDirectory {
            add(executableDirectory)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: executableDirectory.path)) ?? []
            for name in names.sorted() where name.contains("_") && (name.hasSuffix(".resources") || name.hasSuffix(".bundle")) {
                let bundle = executableDirectory.appendingPathComponent(name, isDirectory: true)
                add(bundle)
                if name.hasSuffix(".bundle") { add(bundle.appendingPathComponent("Contents/Resources", isDirectory: true)) }
            }
        }
        return directories
    }

    /// The model registered under `name`, or else read from the first `<name>.xcdatamodeld` or
    /// `<name>.xcdatamodel` in `directories`.
    /// - Throws: `StackError.modelNotFound` naming the registered models and the directories searched;
    ///   `.modelUnreadable` when a registered factory throws or the file found is not a readable model.
    func model(named name: String) throws(StackError) -> ManagedObjectModel {
        do {
            return try registry.model(named: name)
        } catch StackError.unknownModel {
            // Not registered: look for a file.
        } catch {
            throw .modelUnreadable(name: name, source: "the factory registered in the ModelRegistry", underlying: error)
        }
        for directory in directories {
            for file in ["\(name).xcdatamodeld", "\(name).xcdatamodel"] {
                let url = directory.appendingPathComponent(file, isDirectory: true)
                guard FileManager.default.fileExists(atPath: url.path) else { continue }
                do {
                    return try ManagedObjectModel(contentsOf: url)
                } catch {
                    throw .modelUnreadable(name: name, source: url.path, underlying: error)
                }
            }
        }
        throw .modelNotFound(name: name, registered: registry.names, searched: directories)
    }
}
