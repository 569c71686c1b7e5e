import TLCP

@testable import LightstreamerClient

/// Drives a `SessionEngine` with a fake clock and records what it does as readable lines:
/// `ws.open URL`, `ws#N request-name|params…` (a WS message, CR-LF shown as `|`),
/// `http#N URL body` (CR-LF shown as `|`), `close#N`, plus the application notifications.
struct EngineHarness {
    var engine: SessionEngine
    var now: Int64 = 0
    /// Armed timers and their deadlines.
    var timers: [SessionEngine.Timer: Int64] = [:]
    /// Network actions since the last `takeSent()`.
    var sent: [String] = []
    var notifications: [SessionEngine.Notification] = []
    var lastWebSocket: SessionEngine.ConnectionID?
    var lastHTTP: SessionEngine.ConnectionID?
    var httpByURLPart: [(String, SessionEngine.ConnectionID)] = []

    init(_ configure: (inout SessionEngine.Settings) -> Void = { _ in }) {
        var s = SessionEngine.Settings()
        s.serverAddress = "http://server"
        s.adapterSet = "TEST"
        configure(&s)
        engine = SessionEngine(settings: s, seed: 1)
    }

    mutating func send(_ event: SessionEngine.Event) {
        let actions = engine.handle(event, now: now)
        for a in actions { record(a) }
    }

    mutating func record(_ a: SessionEngine.Action) {
        switch a {
        case .openWebSocket(let id, let url, _):
            lastWebSocket = id
            sent.append("ws.open \(url)")
        case .sendWebSocket(let id, let text):
            sent.append("ws#\(id) " + text.replacingOccurrences("\r\n", "|"))
        case .httpPost(let id, let url, let body, _):
            lastHTTP = id
            httpByURLPart.append((url, id))
            sent.append("http#\(id) \(url) " + body.replacingOccurrences("\r\n", "|"))
        case .close(let id):
            sent.append("close#\(id)")
        case .schedule(let t, let ms):
            timers[t] = now + Int64(ms)
        case .cancel(let t):
            timers.removeValue(forKey: t)
        case .notify(let n):
            notifications.append(n)
        case .log:
            break
        }
    }

    /// Network actions since the last call.
    mutating func takeSent() -> [String] {
        defer { sent = [] }
        return sent
    }

    mutating func takeNotifications() -> [SessionEngine.Notification] {
        defer { notifications = [] }
        return notifications
    }

    /// Status changes among the notifications since the last `takeNotifications()`.
    var statuses: [String] {
        notifications.compactMap { if case .status(let s) = $0 { return s.rawValue } else { return nil } }
    }

    var status: String { engine.status.rawValue }

    /// Lines from the server on a connection (several lines at once allowed).
    mutating func receive(_ id: SessionEngine.ConnectionID?, _ lines: String...) {
        guard let id else { return }
        for text in lines {
            for l in text.split(separator: "\n", omittingEmptySubsequences: true) { send(.lineReceived(id, String(l))) }
        }
    }

    /// The most recent HTTP connection whose URL contains `part`.
    func http(_ part: String) -> SessionEngine.ConnectionID? {
        httpByURLPart.last { $0.0.contains(part) }?.1
    }

    /// Moves the clock, firing due timers in deadline order.
    mutating func advance(_ ms: Int64) {
        let end = now + ms
        while let (timer, deadline) = timers.filter({ $0.value <= end }).min(by: { $0.value < $1.value }) {
            now = deadline
            timers.removeValue(forKey: timer)
            send(.timerFired(timer))
        }
        now = end
    }

    /// Fires a timer at once (if armed).
    mutating func fire(_ timer: SessionEngine.Timer) {
        guard let deadline = timers.removeValue(forKey: timer) else { return }
        now = max(now, deadline)
        send(.timerFired(timer))
    }

    /// WS create as in docs/protocol/TLCP.md §6 E1: connect, socket opens, WSOK and CONOK arrive.
    mutating func connectWS(keepalive: Int = 5000, requestLimit: Int = 70000) {
        send(.connect)
        send(.webSocketOpened(lastWebSocket ?? 0))
        receive(lastWebSocket, "WSOK", "CONOK,sid,\(requestLimit),\(keepalive),*")
    }

    /// Subscription events for `key` since the last `takeNotifications()`.
    func subscriptionEvents(_ key: Int) -> [SessionEngine.SubscriptionEvent] {
        notifications.compactMap { if case .subscription(let k, let e) = $0, k == key { return e } else { return nil } }
    }

    func updates(_ key: Int) -> [ItemUpdateValue] {
        subscriptionEvents(key).compactMap { if case .update(let u) = $0 { return u } else { return nil } }
    }

    func messageOutcomes() -> [(Int, SessionEngine.MessageOutcome)] {
        notifications.compactMap { if case .message(let k, let o) = $0 { return (k, o) } else { return nil } }
    }

    func serverErrors() -> [Int] {
        notifications.compactMap { if case .serverError(let c, _) = $0 { return c } else { return nil } }
    }
}

extension String {
    func replacingOccurrences(_ a: String, _ b: String) -> String {
        split(separator: a, omittingEmptySubsequences: false).joined(separator: b)
    }
}

func spec(_ mode: SubscriptionMode, items: [String], fields: [String], snapshot: SnapshotRequest? = .yes) -> SessionEngine.SubscriptionSpec
{
    var s = SessionEngine.SubscriptionSpec(mode: mode)
    s.items = items
    s.fields = fields
    s.snapshot = snapshot
    return s
}

func msg(
    _ text: String, sequence: String? = nil, timeout: Int = -1, outcome: Bool = true, enqueue: Bool = false
) -> SessionEngine.MessageSpec {
    SessionEngine.MessageSpec(text: text, sequence: sequence, timeout: timeout, wantsOutcome: outcome, enqueueWhileDisconnected: enqueue)
}
