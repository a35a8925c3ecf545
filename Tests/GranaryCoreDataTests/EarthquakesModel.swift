import GranaryCoreData

// The model of Apple's sample "Loading and Displaying a Large Data Feed" (Earthquakes), shared by the
// ports in this target. In the sample it is an Xcode model (Earthquakes.xcdatamodeld, a `Quake` entity
// with a uniqueness constraint on `code`); Linux has no model compiler, so a port either ships the
// .xcdatamodeld as a resource (GranaryStack's `init(name:)` reads it) or registers the model in code, as
// here, once, before the first container is made.

// Ported: `@NSManaged` became `@Managed`; nothing else in the class changed.
final class Quake: NSManagedObject {
    @Managed var magnitude: Float
    @Managed var place: String
    @Managed var time: Date
    @Managed var code: String
}

/// Not in the sample: the model the sample's Xcode model file declares, written with Granary's builder.
let earthquakesModel: NSManagedObjectModel = {
    do {
        return try ManagedObjectModel(version: "1") {
            Entity("Quake", as: Quake.self) {
                Attribute("magnitude", .float, defaultValue: Float(0))
                Attribute("place", .string)
                Attribute("time", .date)
                Attribute("code", .string)
                Unique("code")
                Index("byTime", "time")
            }
        }
    } catch {
        fatalError("the Earthquakes model does not build: \(error)")
    }
}()

/// Registers the model under the name the sample's container uses (once per process; registering again
/// replaces it with the same model).
func registerEarthquakesModel() {
    ModelRegistry.shared.register(earthquakesModel, named: "Earthquakes")
}

/// A fresh store URL under the temporary directory, named after the test.
func scratchStoreURL(_ label: String = #function) -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("granary-coredata")
        .appendingPathComponent("\(label.filter { $0.isLetter })-\(UUID().uuidString.prefix(8))", isDirectory: true)
        .appendingPathComponent("Earthquakes.granary", isDirectory: true)
}

/// The feed's records, as the sample's `QuakeProperties.dictionaryValue` gives them.
func feedRecords(_ range: ClosedRange<Int>, magnitudeOffset: Float = 0) -> [[String: Any]] {
    range.map { i in
        ["code": "ci\(i)", "magnitude": Float(i % 7) + magnitudeOffset, "place": "\(i) km N of Ridgecrest",
         "time": Date(timeIntervalSince1970: TimeInterval(1_600_000_000 + i * 60))]
    }
}
