import TLCP

extension SessionEngine {
    /// Actions out of the engine, executed by the runtime in order.
    enum Action: Sendable {
        case openWebSocket(ConnectionID, url: String, headers: [String: String])
        case sendWebSocket(ConnectionID, String)
        /// POST `body` to `url`; the response body arrives as `lineReceived`, then `connectionClosed`.
        case httpPost(ConnectionID, url: String, body: String, headers: [String: String])
        case close(ConnectionID)
        case schedule(Timer, after: Int)
        case cancel(Timer)
        case notify(Notification)
        case log(LogLevel, String)
    }

    /// How much a `log` action matters.
    enum LogLevel: Sendable { case debug, info, warn, error }
}
