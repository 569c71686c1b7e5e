/// One client message handed to the Metadata Adapter.
public struct MessageDispatch: Sendable, Hashable {
    /// Identifies the message in `messageHandled`.
    public var id: Int
    /// nil for messages outside any sequence.
    public var sequence: String?
    /// The message's progressive within its sequence (`LS_msg_prog`), if any.
    public var progressive: Int?
    /// The message text.
    public var text: String
}
