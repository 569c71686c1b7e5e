import TLCP

@testable import LightstreamerServer

/// A scripted driver for `SessionStateMachine`: a fake clock and helpers to read what was
/// written where.
struct SessionScript {
    var machine: SessionStateMachine
    var now: Int64 = 1_000
    /// Every action so far.
    var actions: [SessionAction] = []
    /// Lines written per connection, in order.
    var written: [ConnectionID: [String]] = [:]
    var httpReplies: [ConnectionID: [Int: String?]] = [:]
    var ended: [ConnectionID: Bool] = [:]
    var armed: [SessionTimer: Int64] = [:]

    static let stream = ConnectionID(1)

    init(
        create: CreateSessionRequest = CreateSessionRequest(), version: TLCPVersion = .v2_5, transport: TransportKind = .webSocket,
        connection: ConnectionID = SessionScript.stream, settings: SessionSettings = SessionScript.settings,
        allowedMaxBandwidth: Double? = nil
    ) {
        machine = SessionStateMachine(
            sessionId: "S1", version: version, create: create, connection: connection,
            transport: transport, clientIP: "127.0.0.1", allowedMaxBandwidth: allowedMaxBandwidth,
            settings: settings, now: 1_000)
        record(machine.start(now: now))
    }

    static var settings: SessionSettings {
        var s = SessionSettings()
        s.pollCoalesceMillis = 0
        return s
    }

    mutating func record(_ new: [SessionAction]) {
        actions.append(contentsOf: new)
        for a in new {
            switch a {
            case .write(let c, let text, _):
                var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
                if lines.last == "" { lines.removeLast() }
                written[c, default: []].append(contentsOf: lines)
            case .endStream(let c, let close):
                ended[c] = close
            case .httpReply(let c, let index, let line):
                httpReplies[c, default: [:]][index] = line
            case .armTimer(let t, let at):
                armed[t] = at
            case .cancelTimer(let t):
                armed[t] = nil
            default:
                break
            }
        }
    }

    /// Lines written on `conn`, and forgets them.
    mutating func take(_ conn: ConnectionID = SessionScript.stream) -> [String] {
        defer { written[conn] = [] }
        return written[conn] ?? []
    }

    mutating func advance(_ millis: Int64) {
        now += millis
        // Fire due timers in deadline order.
        while let (t, at) = armed.filter({ $0.value <= now }).min(by: { $0.value < $1.value }) {
            armed[t] = nil
            let saved = now
            now = at
            record(machine.timerFired(t, now: now))
            now = saved
        }
    }

    mutating func control(
        _ op: ControlOperation, id: String = "1", ack: Bool? = nil,
        origin: RequestOrigin = .webSocket(SessionScript.stream)
    ) {
        record(machine.control(ControlRequest(requestId: id, operation: op, ack: ack), origin: origin, now: now))
    }

    mutating func bind(
        _ stream: StreamParameters, recoveryFrom: Int? = nil, on conn: ConnectionID,
        transport: TransportKind = .http, version: TLCPVersion = .v2_5
    ) {
        record(
            machine.bind(
                BindSessionRequest(session: "S1", recoveryFrom: recoveryFrom, stream: stream), connection: conn,
                transport: transport, version: version, clientIP: "127.0.0.1", now: now))
    }

    /// Subscribes `subId` and lets the engine accept it.
    mutating func subscribe(
        _ subId: Int, mode: SubscriptionMode = .merge, items: Int = 1, fields: Int = 2, ack: Bool? = nil,
        key: Int? = nil, command: Int? = nil
    ) {
        control(.add(SubscribeParameters(subscriptionId: subId, mode: mode, group: "g", schema: "s")), id: "r\(subId)", ack: ack)
        record(
            machine.subscribeSucceeded(
                subId,
                grant: SubscriptionGrant(
                    itemCount: items, fieldCount: fields, keyPosition: key,
                    commandPosition: command), now: now))
    }

    /// A session with one MERGE subscription (id 1), its set-up lines already taken.
    static func subscribed(items: Int, fields: Int, settings: SessionSettings = SessionScript.settings) -> SessionScript {
        var script = SessionScript(settings: settings)
        _ = script.take()
        script.subscribe(1, items: items, fields: fields, ack: false)
        _ = script.take()
        return script
    }

    mutating func update(_ subId: Int, item: Int = 1, _ values: [String?], snapshot: Bool = false) {
        record(machine.tableEvent(subId, .update(item: item, values: values, isSnapshot: snapshot), now: now))
    }

    var subscribeActions: [Int] {
        actions.compactMap { if case .subscribe(let id, _) = $0 { id } else { nil } }
    }
}
