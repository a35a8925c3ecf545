/// A big save's uniqueness check, left until a write breaks a unique index.
///
/// The engine checks every unique index as each row is written (see `writeInRounds`), so a save whose
/// writes all go through broke no constraint, and checking its thousands of rows beforehand would only
/// repeat that work. When a write fails, the check runs then, against the snapshot the write
/// transaction started from, exactly as it would have before the writes: its conflicts (every one,
/// for the merge policy to resolve) become the save's error, and the transaction is abandoned, so
/// nothing of the save is written. Small saves check before writing: the check costs little there,
/// and a failed write would cost more than it saves.
struct DeferredUniquenessCheck {
    /// Saves writing fewer rows than this check them before writing.
    static let threshold = 1_000

    /// Runs the check after a failed write.
    /// - Throws: `ConstraintConflictsFound` with the conflicts found; what the check threw. Returns
    ///   when there are none (then the write failed for another reason, which the caller throws).
    let run: () throws -> Void
}
