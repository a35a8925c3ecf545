import Foundation

/// Declares a typed property of a `ManagedObject` subclass, backed by the attribute or relationship of
/// the same name in the entity: Granary's `@NSManaged`.
///
/// The property's type says how it reads: `String`, `Int`, `Double`, `Date?`, `Decimal`, `UUID`, `Data`,
/// `URL` for attributes (any integer width works for any integer attribute); `Employee?` for a to-one
/// relationship; `Set<Employee>` or `[Employee]` (ordered) for a to-many one. Typed key paths to these
/// properties work in `#Predicate` and `SortDescriptor`.
///
/// Setting a value the model rejects (an integer out of an `integer16`'s range) leaves the property
/// unchanged and makes the next `save()` fail with that error; use `setValue(_:forKey:)` to get the error
/// at once. Reading a required property that was never set gives its type's zero value (and `save()`
/// reports it as missing): declare it optional or give the attribute a default value.
@propertyWrapper
public struct Managed<Value>: ManagedStorage {
    /// Set for a moment on one object's declaration while its property's name is found by reflection
    /// (Swift describes a subclass's private storage key paths unreliably). One byte, not an index
    /// cached per object: every object would pay for it, and a new object's first read would miss.
    var isMarked = false

    public init() {}

    @available(*, unavailable, message: "@Managed properties can only be declared in ManagedObject subclasses")
    public var wrappedValue: Value {
        get { fatalError("unreachable") }
        // swiftlint:disable:next unused_setter_value
        set { fatalError("unreachable") }
    }

    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Managed<Value>>
    ) -> Value {
        get {
            let i = index(object, storageKeyPath)
            if KeyPathProbe.isProbing, let probe = KeyPathProbe.current {
                return probe.record(object, property: i, as: Value.self)
            }
            if object.layout.isObservable { ObjectObservation.access(object, wrappedKeyPath, index: i) }
            if object.layout.isToOne[i] { return toOne(of: object, at: i) }
            // An attribute value of a small type the setters store as itself, read in place: the
            // `Any?` copy and the cast below were most of an import's `<-`, which reads before it writes.
            // (No `Value?` on the way, for the reason given below.)
            if AnyBox.isInline(Value.self) {
                object.assertOnContextQueue()
                object.fireFaultIfNeeded()
                let isInPlace = object.values.withUnsafeBufferPointer { AnyBox.holds(at: $0.baseAddress! + i, exactly: Value.self) }
                if isInPlace { return object.values.withUnsafeBufferPointer { AnyBox.read(at: $0.baseAddress! + i, as: Value.self) } }
            }
            let raw = object.publicValue(at: i, pendingMembers: true)
            // A value stored as exactly the declared type (and `Int64` for `Int`), without a
            // conditional cast: in this unspecialized getter, any `Value?` (a conditional cast's
            // result, or `coerce`'s) makes the frame ask the runtime for `Optional<Value>`'s metadata,
            // a lookup that took a third of each read.
            if let stored = raw {
                let storedType = type(of: stored)
                if storedType == Value.self { return stored as! Value }
                if Value.self == Int.self, storedType == Int64.self { return unsafeBitCast(Int(truncatingIfNeeded: stored as! Int64), to: Value.self) }
            }
            return coerced(raw, of: object, at: i)
        }
        set {
            let i = index(object, storageKeyPath)
            do {
                // Optionals are looked through by the setter, and only where a plain cast fails: asking
                // whether `Value` is an optional on every write is a conformance lookup.
                try object.setPublicValue(newValue, at: i)
            } catch {
                // A value the model rejects (70000 into an integer16) is kept out and reported by the
                // next `save()`, which then writes nothing: a setter cannot throw, and a crash would be
                // worse than a failed save.
                object.reject(error)
            }
        }
    }

    /// A to-one relationship's target as the declared type: the reference itself once a read of this
    /// property showed that to be right for the declared type and the target's class, else converted.
    private static func toOne(of object: ManagedObject, at i: Int) -> Value {
        let target = object.toOneTarget(at: i)
        let reads = object.layout.toOneReads
        if reads.readsAsReference(target, at: i, as: Value.self) { return unsafeBitCast(target, to: Value.self) }
        let value = coerced(target.map { $0 as Any }, of: object, at: i)
        reads.learn(target, at: i, as: Value.self, value: value)
        return value
    }

    /// A stored value that is not simply a `Value`, converted. Out of line, so that the getter
    /// holds no `Value?` (its frame then needs that type's metadata, a runtime lookup on every read).
    @inline(never)
    private static func coerced(_ raw: Any?, of object: ManagedObject, at i: Int) -> Value {
        var raw = raw
        if case .toMany = object.layout.kinds[i], let members = raw as? ToManyMembers {
            if let collection = Value.self as? any ManagedMemberCollection.Type { return members.handedOut(as: collection) as! Value }
            // Core Data's generated classes declare to-many relationships as `NSSet?` and `NSOrderedSet?`.
            if let foundation = ManagedValueCoercion.foundationCollection(members, as: Value.self) { return foundation }
            // Declared some other way (an optional set): the untyped collection, cast.
            raw = members.handedOut()
        }
        if let value = ManagedValueCoercion.coerce(raw, to: Value.self) { return value }
        // A required property that was never set reads as its type's zero value; `save()` reports
        // it as missing. Never a crash for data the program did not control.
        if let zero = ManagedValueCoercion.coerce(KeyPathProbe.zero(for: object.layout.kinds[i]), to: Value.self) { return zero }
        preconditionFailure("\(object.entity.name).\(object.layout.names[i]) holds \(SafeDescription.of(raw)), which is not a \(Value.self)")
    }

    /// The property behind the wrapper: found once per class by marking the storage and finding the
    /// marked one among the object's reflected children (`_name` → `name`), then cached by key path.
    private static func index<Object: ManagedObject>(_ object: Object, _ storageKeyPath: ReferenceWritableKeyPath<Object, Managed<Value>>) -> Int {
        if let i = object.layout.cachedIndex(forKeyPath: storageKeyPath) { return i }
        return lookUpIndex(object, storageKeyPath)
    }

    private static func lookUpIndex<Object: ManagedObject>(_ object: Object, _ storageKeyPath: ReferenceWritableKeyPath<Object, Managed<Value>>) -> Int {
        object[keyPath: storageKeyPath].isMarked = true
        defer { object[keyPath: storageKeyPath].isMarked = false }
        var mirror: Mirror? = Mirror(reflecting: object)
        while let m = mirror {
            for child in m.children {
                guard let storage = child.value as? any ManagedStorage, storage.isMarked, var label = child.label else { continue }
                if label.hasPrefix("_") { label.removeFirst() }
                guard let i = object.layout.indexByName[label] else {
                    preconditionFailure("@Managed var \(label) of \(Object.self) names no property of entity \(object.entity.name)")
                }
                object.layout.cache(i, forKeyPath: storageKeyPath)
                return i
            }
            mirror = m.superclassMirror
        }
        preconditionFailure("cannot find the @Managed property at \(storageKeyPath) in \(Object.self)")
    }
}

/// Lets `unwrap` look inside an `Optional` held in an `Any` without reflection.
protocol AnyOptional {
    var wrappedAny: Any? { get }
}

extension Optional: AnyOptional {
    var wrappedAny: Any? {
        switch self {
        case .some(let value): return value
        case .none: return nil
        }
    }
}

/// What every `Managed<Value>` has, whatever its value type: for finding a declaration by reflection.
protocol ManagedStorage {
    var isMarked: Bool { get }
}

/// Converts the values the object layer stores into the types `@Managed` properties declare.
enum ManagedValueCoercion {
    /// `value` as a `T`, bridging integer widths, floating-point widths, optionals and collections of
    /// subclasses; `nil` when it cannot be one.
    static func coerce<T>(_ value: Any?, to type: T.Type) -> T? {
        // Cast from `Any`, unwrapped first: a cast from `Any?` looks up `Optional<Any>`'s metadata in
        // the runtime each time.
        if let value {
            // `Int` properties of `.integer64` attributes (stored as `Int64`) first: a metatype
            // comparison, where trying the direct cast first made every such read pay for a failed
            // dynamic cast.
            if T.self == Int.self, let v = value as? Int64 { return unsafeBitCast(Int(truncatingIfNeeded: v), to: T.self) }
            // Stored values are already canonical and unwrapped, so the common case is one cast.
            if let direct = value as? T { return direct }
            if T.self == Int?.self, let v = value as? Int64 { return Int?.some(Int(truncatingIfNeeded: v)) as? T }
        }
        guard let value = unwrap(value) else {
            if let optional = T.self as? any ExpressibleByNilLiteral.Type { return (optional.init(nilLiteral: ()) as! T) }
            return nil
        }
        if let direct = value as? T { return direct }
        // `NSDecimalNumber?` properties (Core Data's generated form of decimal attributes) of a `Decimal`.
        if let decimal = value as? Decimal, T.self == NSDecimalNumber.self || T.self == NSDecimalNumber?.self {
            return NSDecimalNumber(decimal: decimal) as? T
        }
        switch T.self {
        case is Int.Type, is Int?.Type: return integer(value).flatMap { Int(exactly: $0) }.map { $0 as Any } as? T
        case is Int64.Type, is Int64?.Type: return integer(value).map { $0 as Any } as? T
        case is Int32.Type, is Int32?.Type: return integer(value).flatMap { Int32(exactly: $0) }.map { $0 as Any } as? T
        case is Int16.Type, is Int16?.Type: return integer(value).flatMap { Int16(exactly: $0) }.map { $0 as Any } as? T
        case is Double.Type, is Double?.Type: return floating(value).map { $0 as Any } as? T
        case is Float.Type, is Float?.Type: return floating(value).map { Float($0) as Any } as? T
        default: return nil
        }
    }

    /// A to-many relationship's members as the `NSSet` or `NSOrderedSet` (optional or not) a property
    /// declares, or nil when it declares neither.
    static func foundationCollection<T>(_ members: ToManyMembers, as type: T.Type) -> T? {
        if T.self == NSOrderedSet.self || T.self == NSOrderedSet?.self {
            return NSOrderedSet(array: members.handedOut(as: [ManagedObject].self)) as? T
        }
        if T.self == NSSet.self || T.self == NSSet?.self {
            return NSSet(array: members.handedOut(as: [ManagedObject].self)) as? T
        }
        return nil
    }

    /// Looks through `Optional` wrappers, so that `Optional(Optional(3))` is 3 and `.none` is nil.
    static func unwrap(_ value: Any?) -> Any? {
        guard let value else { return nil }
        guard let optional = value as? any AnyOptional else { return value }
        return unwrap(optional.wrappedAny)
    }

    private static func integer(_ value: Any) -> Int64? {
        switch value {
        case let i as any BinaryInteger: return Int64(exactly: i)
        case let d as Double: return Int64(exactly: d)
        default: return nil
        }
    }

    private static func floating(_ value: Any) -> Double? {
        switch value {
        case let d as Double: return d
        case let f as Float: return Double(f)
        case let i as any BinaryInteger: return Double(i)
        case let d as Decimal: return NSDecimalNumber(decimal: d).doubleValue
        default: return nil
        }
    }
}
