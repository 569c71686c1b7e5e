/// Identifies one network connection (a WS, or one HTTP request/response) for the session
/// state machine. The I/O layer maps ids to real channels.
public struct ConnectionID: Hashable, Sendable, CustomStringConvertible {
    /// The number the I/O layer gave the connection.
    public var raw: UInt64
    /// An id from its number.
    public init(_ raw: UInt64) { self.raw = raw }
    /// `conn#<raw>`.
    public var description: String { "conn#\(raw)" }
}
