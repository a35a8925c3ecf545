@_exported import GranaryStorage
// As `import CoreData` brings Foundation: ported files use `Date`, `UUID`, `Data`, `URL`, `Predicate`,
// `SortDescriptor` and `NotificationCenter` with `import Granary` alone.
@_exported import Foundation
