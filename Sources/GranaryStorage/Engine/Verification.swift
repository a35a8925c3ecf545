import Foundation

/// The outcome of `Engine.verify()`: what was checked and every problem found.
public struct VerificationReport: Sendable {
    public var tablesChecked = 0
    public var rowsChecked = 0
    public var indexEntriesChecked = 0
    public var filesChecked: [String] = []
    /// Each problem names the file, table, index or row involved. Empty means the store is sound.
    public var problems: [String] = []
    public var isSound: Bool { problems.isEmpty }
}

extension Engine {
    /// Checks every checksum in the store's files and every table and index in memory: tree structure,
    /// that each row decodes and fits its schema, that each index holds exactly one entry per row with
    /// the right values, and that unique indexes are unique.
    ///
    /// It reads the whole store; run it from tools and tests, not on a hot path.
    public func verify() -> VerificationReport {
        var report = VerificationReport()
        if let directory = storageDirectory {
            verifyFiles(in: directory, into: &report)
        }
        let snapshot = read()
        for table in snapshot.state.orderedTables {
            Self.verify(table, into: &report)
        }
        return report
    }

    private func verifyFiles(in directory: String, into report: inout VerificationReport) {
        let names = ((try? PosixFile.list(directory)) ?? []).sorted()
        for name in names where name.hasSuffix(".snap") {
            do {
                _ = try SnapshotReader.read(path: directory + "/" + name) { _ in }
                report.filesChecked.append(name)
            } catch {
                report.problems.append("\(error)")
            }
        }
        let segments = names.filter { $0.hasSuffix(".wal") }
        for (i, name) in segments.enumerated() {
            do {
                let scan = try LogReader.scan(path: directory + "/" + name, expectedBaseLSN: nil) { _, _ in }
                report.filesChecked.append(name)
                switch scan.stop {
                case .cleanEnd: break
                case .tornTail(let offset, let reason), .corrupt(let offset, let reason):
                    // The newest segment of a store open elsewhere may be mid-append.
                    if i != segments.count - 1 || !options.isReadOnly {
                        report.problems.append("log \(name) at offset \(offset): \(reason)")
                    }
                }
            } catch {
                report.problems.append("\(error)")
            }
        }
    }

    static func verify(_ table: TableState, into report: inout VerificationReport) {
        report.tablesChecked += 1
        let name = table.name
        do { try table.rows.checkInvariants() } catch { report.problems.append("table '\(name)' row tree: \(error)") }
        var expected: [[[UInt8]]] = table.indexes.map { _ in [] }
        var uniqueValues: [Set<[UInt8]>] = table.indexes.map { _ in [] }
        table.rows.scan { k, v in
            let key = IndexKey.primaryKey(from: k)
            report.rowsChecked += 1
            do {
                let row = try RowCodec.decode(v, table: name, key: key)
                try table.validate(row)
                for (i, index) in table.indexes.enumerated() {
                    let prefix = try index.valuePrefix(of: row)
                    expected[i].append(prefix + IndexKey.primaryKey(key))
                    if index.participatesInUniqueness(row) && !uniqueValues[i].insert(prefix).inserted {
                        report.problems.append("unique index '\(name).\(index.definition.name)' holds a duplicate value at row \(key)")
                    }
                }
                if key >= table.nextKey { report.problems.append("table '\(name)' row \(key) is at or past the next key \(table.nextKey)") }
            } catch {
                report.problems.append("table '\(name)' row \(key): \(error)")
            }
            return report.problems.count < 100
        }
        for (i, index) in table.indexes.enumerated() {
            let indexName = index.definition.name
            do { try index.entries.checkInvariants() } catch { report.problems.append("index '\(name).\(indexName)': \(error)") }
            let wanted = expected[i].sorted { $0.lexicographicallyPrecedes($1) }
            var actual: [[UInt8]] = []
            actual.reserveCapacity(index.entries.count)
            index.entries.scan { k, _ in
                actual.append(Array(k))
                return true
            }
            report.indexEntriesChecked += actual.count
            if actual != wanted {
                let missing = Set(wanted).subtracting(actual).count
                let extra = Set(actual).subtracting(wanted).count
                report.problems.append("index '\(name).\(indexName)' has \(actual.count) entries for \(wanted.count) rows (\(missing) missing, \(extra) stray)")
            }
        }
    }
}
