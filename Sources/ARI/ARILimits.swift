/// Bounds applied to every line read from an ARI peer (docs/ARI.md, "Limits"). The SDKs have no
/// limits of their own; these keep a broken or hostile remote from making the server hold
/// unbounded memory or work.
public struct ARILimits: Sendable, Hashable {
    /// Bytes in one line, terminator excluded. An update of a few thousand fields fits easily.
    public var maxLineLength: Int
    /// `|`-separated tokens in one line (a field of `UD3` takes four).
    public var maxTokens: Int
    /// Characters in one number (`I`, `L`, `D`, error codes); longer is a bad value.
    public var maxNumberLength: Int

    public init(maxLineLength: Int = 1 << 20, maxTokens: Int = 32_768, maxNumberLength: Int = 40) {
        self.maxLineLength = max(16, maxLineLength)
        self.maxTokens = max(4, maxTokens)
        self.maxNumberLength = max(1, maxNumberLength)
    }

    public static let `default` = ARILimits()
}
