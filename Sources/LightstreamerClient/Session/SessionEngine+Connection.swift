import TLCP

extension SessionEngine {
    /// Identifies one network connection the engine asked the runtime to open.
    typealias ConnectionID = Int

    /// What a connection is for.
    enum ConnectionRole: Equatable {
        case webSocket
        case httpStream
        case httpControl([String])
        case httpMessage([String])
        case httpHeartbeat
        /// The destroy request sent by `disconnect()`: its answer is not needed.
        case httpFireAndForget
    }

    /// The WebSocket in use: it may open before a session exists and carry several binds.
    struct WebSocket {
        var connection: ConnectionID
        var url: String
        var open = false
        /// Messages waiting for the socket to open.
        var outbox: [String] = []
        /// A session was bound on this socket (controls may omit LS_session).
        var sessionBound = false
    }
}
