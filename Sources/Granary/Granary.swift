@_exported import GranaryStorage
