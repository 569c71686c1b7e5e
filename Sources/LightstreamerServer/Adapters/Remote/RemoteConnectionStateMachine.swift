import ARI
import TLCP

/// One connection from a remote adapter, without I/O (docs/ARI.md): the handshake (`RAC`, then
/// the `DPI`/`MPI` init and its version), requests matched to replies with a timeout, the
/// remote's notifications, inactivity, and closing. The driver feeds it lines, timer wake-ups
/// and socket events, runs the actions it returns in order, and re-arms one timer for
/// `nextWakeup` after each call.
public struct RemoteConnectionStateMachine<Context: Sendable>: Sendable {
    /// What the driver must do after an event.
    public typealias Action = RemoteConnectionAction<Context>

    enum State: Sendable, Hashable {
        case idle
        case awaitingCredentials
        case initializing(initId: String)
        case ready(version: ARIVersion, dialect: ARIDialect)
        case closed
    }

    enum Waiter: Sendable {
        case initRequest
        case caller(Context)
    }

    /// The adapter this connection serves and its limits.
    public let configuration: RemoteConnectionConfiguration
    private(set) var state: State = .idle
    private var correlator: ARIRequestCorrelator<Waiter>
    private var lastReceived: Int64 = 0
    private var handshakeDeadline: Int64?
    private var remoteAllowsClose = false
    private var sdk: String?

    /// A connection waiting for its remote.
    public init(configuration: RemoteConnectionConfiguration) {
        self.configuration = configuration
        correlator = ARIRequestCorrelator(
            timeoutMillis: configuration.requestTimeoutMillis,
            maxPending: configuration.maxPendingRequests)
    }

    /// Whether the handshake is over and requests may be sent.
    public var isReady: Bool {
        if case .ready = state { return true }
        return false
    }

    /// Whether the connection is over (closed by either side or after a failure).
    public var isClosed: Bool { state == .closed }

    /// The dialect settled on in the handshake.
    public var dialect: ARIDialect? {
        if case .ready(_, let d) = state { return d }
        return nil
    }

    /// When the driver must call `timerFired`: a handshake deadline, a request deadline or the
    /// inactivity limit, whichever comes first.
    public var nextWakeup: Int64? {
        guard state != .closed else { return nil }
        var times: [Int64] = []
        if !isReady, let handshakeDeadline { times.append(handshakeDeadline) }
        if let d = correlator.nextDeadline { times.append(d) }
        if let t = configuration.inactivityTimeoutMillis, state != .idle { times.append(Saturating.add(lastReceived, t)) }
        return times.min()
    }

    // MARK: Events

    /// The remote connected. Without required credentials the init goes out at once.
    public mutating func connected(now: Int64) -> [Action] {
        guard state == .idle else { return [] }
        lastReceived = now
        handshakeDeadline = Saturating.add(now, configuration.handshakeTimeoutMillis)
        if configuration.credentials != nil {
            state = .awaitingCredentials
            return []
        }
        return sendInit(now: now)
    }

    /// A line arrived, or a line that could not be framed.
    public mutating func received(_ line: Result<String, ARIProtocolError>, now: Int64) -> [Action] {
        var actions: [Action] = []
        received(line, now: now, into: &actions)
        return actions
    }

    /// As `received(_:now:)`, appending the actions to `actions`: the driver gathers a read's
    /// lines in one array, not one per line.
    public mutating func received(_ line: Result<String, ARIProtocolError>, now: Int64, into actions: inout [Action]) {
        guard state != .closed, state != .idle else { return }
        lastReceived = now
        let text: String
        switch line {
        case .failure(let e):
            actions.append(.log(.warning, "unreadable line from remote: \("\(e)".logEscaped())"))
            return
        case .success(let t): text = t
        }
        let message: ARIRemoteLine
        do {
            message = try ARIRemoteLine.decode(text)
        } catch {
            actions += malformed(text, error)
            return
        }
        switch message {
        case .keepalive:
            return
        case .remoteCredentials(let c):
            actions += credentials(c, now: now)
        case .reply(let reply):
            actions += self.reply(reply, now: now)
        case .update, .endOfSnapshot, .clearSnapshot, .diffOrders:
            guard isReady, case .data = configuration.role else {
                actions.append(.log(.warning, "data notification \(Self.method(of: message)) outside a ready data connection: ignored"))
                return
            }
            actions.append(.dataNotification(message))
        case .failure(let m):
            actions.append(.log(.error, "remote adapter failure: \((m ?? "(no message)").logEscaped())"))
            actions.append(.remoteFailure(m))
        }
    }

    /// Sends a request; when it cannot go out, its failure comes back at once.
    public mutating func send(_ request: ARIRequest, context: Context, now: Int64) -> [Action] {
        sendRequest(request, context: context, now: now).actions
    }

    /// As `send`, with the id the request went out with (a `SUB` id names its subscription in
    /// the remote's notifications); nil when it did not go out.
    public mutating func sendRequest(
        _ request: ARIRequest, context: Context,
        now: Int64
    ) -> (id: String?, actions: [Action]) {
        guard case .ready(_, let dialect) = state else { return (nil, [.completed(context, .failure(.unavailable))]) }
        do {
            let id = try correlator.register(request.method, context: .caller(context), now: now)
            return (id, [.write(request.encode(id: id, dialect: dialect))])
        } catch {
            return (nil, [.completed(context, .failure(.overloaded))])
        }
    }

    /// The timer armed for `nextWakeup` fired.
    public mutating func timerFired(now: Int64) -> [Action] {
        guard state != .closed, state != .idle else { return [] }
        if !isReady, let handshakeDeadline, now >= handshakeDeadline {
            return closing("handshake not completed within \(configuration.handshakeTimeoutMillis) ms", level: .error)
        }
        if let t = configuration.inactivityTimeoutMillis, now >= Saturating.add(lastReceived, t) {
            return closing("no line from the remote for \(t) ms", level: .error)
        }
        var actions: [Action] = []
        for p in correlator.expire(now: now) {
            if case .caller(let c) = p.context {
                actions.append(.log(.warning, "\(p.method.rawValue) request \(p.id) got no reply in time"))
                actions.append(.completed(c, .failure(.timedOut)))
            }
        }
        return actions
    }

    /// The server closes the connection (shutdown, reconfiguration).
    public mutating func close(reason: String) -> [Action] {
        guard state != .closed else { return [] }
        return closing(reason, level: .info)
    }

    /// The socket closed or failed: every waiting request fails.
    public mutating func connectionLost() -> [Action] {
        guard state != .closed else { return [] }
        state = .closed
        return [.log(.warning, "remote adapter connection lost")] + failAll()
    }

    // MARK: Handshake

    private mutating func sendInit(now: Int64) -> [Action] {
        let request = configuration.initRequest
        let remaining = max(1, Saturating.subtract(handshakeDeadline ?? now, now))
        guard let id = try? correlator.register(request.method, context: .initRequest, now: now, timeoutMillis: remaining) else {
            return closing("cannot send the init request", level: .error)
        }
        state = .initializing(initId: id)
        // The init is written in the 1.8 form: init parameters do not differ between dialects.
        return [.write(request.encode(id: id, dialect: .v1_8))]
    }

    private mutating func credentials(_ c: ARIRemoteCredentials, now: Int64) -> [Action] {
        remoteAllowsClose = c.enableClosePacket
        sdk = c.sdk
        // Without required credentials the init is already out: only the capabilities count.
        guard state == .awaitingCredentials else { return [] }
        if let expected = configuration.credentials, c.user != expected.user || c.password != expected.password {
            return closing("remote credentials refused (user \((c.user ?? "none").logEscaped()))", level: .error)
        }
        return sendInit(now: now)
    }

    private mutating func reply(_ reply: ARIReply, now: Int64) -> [Action] {
        switch correlator.resolve(id: reply.id, method: reply.method) {
        case .unknownId:
            return [.log(.info, "reply \(reply.id.logEscaped())|\(reply.method.rawValue) to no waiting request: ignored")]
        case .methodMismatch(let p):
            return complete(p, .failure(.malformedReply("reply \(reply.method.rawValue) to a \(p.method.rawValue) request")))
        case .matched(let p):
            switch reply.outcome {
            case .success(let payload): return complete(p, .success(payload))
            case .failure(let e): return complete(p, .failure(.refused(e)))
            }
        }
    }

    private mutating func complete(
        _ p: ARIRequestCorrelator<Waiter>.Pending,
        _ result: Result<ARIReplyPayload, RemoteRequestFailure>
    ) -> [Action] {
        switch p.context {
        case .caller(let c):
            return [.completed(c, result)]
        case .initRequest:
            return initialized(result)
        }
    }

    private mutating func initialized(_ result: Result<ARIReplyPayload, RemoteRequestFailure>) -> [Action] {
        switch result {
        case .success(.initialized(let text)):
            let version = text.map { ARIVersion($0) } ?? ARIVersion(1, 8, 0)
            guard let version, version <= ARIVersion.announced, let dialect = ARIDialect(version) else {
                return closing("remote speaks ARI \((text ?? "?").logEscaped()), not 1.8.0 to \(ARIVersion.announced)", level: .error)
            }
            state = .ready(version: version, dialect: dialect)
            if version >= .closeSupported { remoteAllowsClose = true }
            handshakeDeadline = nil
            return [
                .log(.info, "remote adapter ready: ARI \(version), SDK \((sdk ?? "unknown").logEscaped())"),
                .ready(version: version, dialect: dialect, sdk: sdk),
            ]
        case .success:
            return closing("unexpected init reply", level: .error)
        case .failure(.refused(let e)):
            return closing("remote refused the init: \(e.tag) \((e.message ?? "").logEscaped())", level: .error)
        case .failure(let f):
            return closing("init failed: \(f)", level: .error)
        }
    }

    // MARK: Closing and errors

    private mutating func malformed(_ text: String, _ error: any Error) -> [Action] {
        let log = Action.log(.warning, "malformed line from remote (\("\(error)".logEscaped())): \(text.logEscaped(limit: 200))")
        // A reply we wait for that cannot be read fails now rather than at its timeout.
        let tokens = text.utf8.split(separator: UInt8(ascii: "|"), maxSplits: 2, omittingEmptySubsequences: false)
        if tokens.count >= 2, let method = ARIMethod(rawValue: String(Substring(tokens[1]))), method.isRequest,
            let p = correlator.cancel(id: String(Substring(tokens[0])))
        {
            return [log] + complete(p, .failure(.malformedReply("\(error)")))
        }
        return [log]
    }

    private mutating func closing(_ reason: String, level: RemoteLogLevel) -> [Action] {
        var actions: [Action] = [.log(level, "closing remote adapter connection: \(reason)")]
        if remoteAllowsClose { actions.append(.write(ARIRequest.encodeClose(reason: reason))) }
        actions.append(.closeConnection)
        state = .closed
        return actions + failAll()
    }

    private mutating func failAll() -> [Action] {
        correlator.removeAll().compactMap { p in
            if case .caller(let c) = p.context { return .completed(c, .failure(.unavailable)) }
            return nil
        }
    }

    static func method(of line: ARIRemoteLine) -> String {
        switch line {
        case .update: return "UD3"
        case .endOfSnapshot: return "EOS"
        case .clearSnapshot: return "CLS"
        case .diffOrders: return "DFD"
        default: return "?"
        }
    }
}
