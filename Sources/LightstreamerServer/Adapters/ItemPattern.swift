/// An item-name pattern for configuration rules: `*` matches any run of characters (also
/// none), every other character matches itself. `item*` matches `item`, `item1`, `item30`;
/// `*` matches everything.
public struct ItemPattern: Sendable, Hashable, CustomStringConvertible {
    /// The pattern as written.
    public let text: String
    private let parts: [Substring]

    /// A pattern from its text.
    public init(_ text: String) {
        self.text = text
        self.parts = text.split(separator: "*", omittingEmptySubsequences: false)
    }

    /// The pattern as written.
    public var description: String { text }

    /// Whether `name` matches the pattern.
    public func matches(_ name: String) -> Bool {
        guard parts.count > 1 else { return name == text }
        var rest = Substring(name)
        guard let first = parts.first, rest.hasPrefix(first) else { return false }
        rest = rest.dropFirst(first.count)
        let last = parts[parts.count - 1]
        for middle in parts.dropFirst().dropLast() where !middle.isEmpty {
            guard let r = rest.firstRange(of: middle) else { return false }
            rest = rest[r.upperBound...]
        }
        return rest.count >= last.count && rest.hasSuffix(last)
    }
}
