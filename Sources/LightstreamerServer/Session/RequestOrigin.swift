/// Where a control, message or heartbeat came from, which decides where its reply goes.
public enum RequestOrigin: Sendable, Hashable {
    /// A WS: replies are written on that socket, in order with everything else on it.
    case webSocket(ConnectionID)
    /// Line `index` of an HTTP `control.txt`/`msg.txt`/`heartbeat.txt` request: the reply goes
    /// into that HTTP response (one reply per line, even with `LS_ack=false`).
    case http(ConnectionID, index: Int)
    /// A control part of a create+control combo: no reply of its own.
    case combo
}
