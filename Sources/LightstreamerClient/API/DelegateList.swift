/// The delegates of an API object (client, subscription, MPN device or subscription): each at
/// most once, in the order added. Guarded by its owner's lock.
struct DelegateList<Delegate> {
    private(set) var all: [Delegate] = []

    /// Adds `delegate` unless it is there already; true if added.
    mutating func add(_ delegate: Delegate) -> Bool {
        guard !all.contains(where: { sameDelegate($0, delegate) }) else { return false }
        all.append(delegate)
        return true
    }

    /// Removes `delegate`; true if it was there.
    mutating func remove(_ delegate: Delegate) -> Bool {
        guard let i = all.firstIndex(where: { sameDelegate($0, delegate) }) else { return false }
        all.remove(at: i)
        return true
    }
}

/// Delegates are not all class-bound: identity is object identity for class instances, and no
/// deduplication is possible for values.
func sameDelegate(_ a: Any, _ b: Any) -> Bool {
    guard type(of: a) is AnyClass, type(of: b) is AnyClass else { return false }
    return (a as AnyObject) === (b as AnyObject)
}
