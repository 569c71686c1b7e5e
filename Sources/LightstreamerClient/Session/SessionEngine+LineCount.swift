extension SessionEngine {
    /// The counts each line of the session's stream updates. They belong to the session but
    /// are kept beside `state` rather than in its `Session`: reaching into the enum's payload
    /// on every line moves the whole session value out and back (a retain and a release per
    /// field), which costs more than the rest of an update's handling. A new session starts
    /// them over (CONOK of a create) and `teardownSession` drops them with the session.
    struct LineCount {
        /// Data notifications received so far (docs/protocol/TLCP.md §5.5).
        var dataCount = 0
        /// Data notifications to drop after a recovery (count − PROG).
        var skip = 0
        /// When the last data (or any line) arrived on the stream, for stall detection.
        var lastDataAt: Int64 = 0
    }
}
