/// A refusal with a protocol code (REQERR/MSGFAIL/CONERR).
public struct SessionRefusal: Error, Sendable, Hashable {
    /// The protocol code the client sees.
    public var code: Int
    /// The message the client sees.
    public var message: String
    /// A refusal with its code and message.
    public init(code: Int, message: String) {
        self.code = code
        self.message = message
    }
}
