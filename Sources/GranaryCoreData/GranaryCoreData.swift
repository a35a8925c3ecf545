// Core Data code imports one module and gets Foundation with it; so does code that imports this one.
@_exported import Foundation
@_exported import Granary
@_exported import GranaryStack
