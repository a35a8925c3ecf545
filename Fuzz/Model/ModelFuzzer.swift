import FuzzSupport
@_spi(Fuzzing) import Granary

/// Fuzzes the whole Xcode model load (XML reader, model decoder, model validation) on the bytes of a
/// `contents` file, as `ManagedObjectModel(contentsOf:)` runs it.
///
/// Property: any bytes load as a model or throw `XcodeModelError`, never trap, and both the model's
/// version hashes and the error's message can be computed.
@main enum ModelFuzzer {
    static func main() { FuzzDriver.run("fuzz-model", test) }

    static func test(_ bytes: [UInt8]) {
        do {
            let model = try ModelFuzzing.loadModel(contents: bytes)
            _ = model.versionHash
            _ = model.description
            for entity in model.entities { _ = model.entities(forConfiguration: nil); _ = entity.description }
        } catch {
            _ = error.description
        }
    }
}
