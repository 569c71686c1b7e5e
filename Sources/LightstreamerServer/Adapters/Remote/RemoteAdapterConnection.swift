import ARI
import Logging
import NIOConcurrencyHelpers
import NIOCore
import TLCP

/// What a remote connection reports to the adapter on top of it.
protocol RemoteConnectionEvents: AnyObject, Sendable {
    /// The handshake with a (new) remote is done.
    func remoteReady(dialect: ARIDialect)
    /// Data notifications from the remote, in order: the consecutive ones of one read.
    func remoteNotifications(_ lines: [ARIRemoteLine])
    /// The remote reported a failure (`FAL`).
    func remoteFailure(_ message: String?)
    /// The remote's connection closed; requests in flight have failed.
    func remoteLost()
}

/// Counts of one remote port's events since start.
struct RemoteConnectionCounters: Sendable, Hashable {
    /// Handshakes completed (a remote became ready).
    var handshakes = 0
    /// Remote connections that closed (after a handshake or not: refused credentials count).
    var disconnections = 0
    /// Requests that got no successful reply: refused, timed out, unreadable, or no remote.
    var failedRequests = 0
    /// `FAL` lines from the remote.
    var remoteFailures = 0
}

/// Runs a `RemoteConnectionStateMachine` over NIO: one remote at a time on a configured port
/// (a new remote replaces one whose connection closed), lines framed by `ARILineFramer`, one
/// timer for the machine's next wake-up. Callers wait for replies with `request(_:)`, which
/// never blocks an event loop: the reply or the timeout resumes them.
final class RemoteAdapterConnection: Sendable {
    typealias Reply = CheckedContinuation<ARIReplyPayload, any Error>
    typealias Machine = RemoteConnectionStateMachine<Reply>

    private struct State {
        var machine: Machine
        var framer = ARILineFramer()
        var channel: (any Channel)?
        var timer: Scheduled<Void>?
        var readyWaiters: [UInt64: CheckedContinuation<Bool, Never>] = [:]
        var nextWaiter: UInt64 = 0
        var events: (any RemoteConnectionEvents)?
        var counters = RemoteConnectionCounters()
    }

    let configuration: RemoteConnectionConfiguration
    private let logger: Logger
    private let state: NIOLockedValueBox<State>

    init(configuration: RemoteConnectionConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        state = NIOLockedValueBox(State(machine: Machine(configuration: configuration)))
    }

    func setEvents(_ events: any RemoteConnectionEvents) {
        state.withLockedValue { $0.events = events }
    }

    var isReady: Bool { state.withLockedValue { $0.machine.isReady } }

    /// What happened on this port so far (for `/metrics`).
    var counters: RemoteConnectionCounters { state.withLockedValue { $0.counters } }

    static func now() -> Int64 { Int64(NIODeadline.now().uptimeNanoseconds / 1_000_000) }

    // MARK: Channel events

    /// A remote connected. False when another remote is still connected (the caller closes it).
    func attach(_ channel: any Channel) -> Bool {
        let actions: [Machine.Action]? = state.withLockedValue { s in
            guard s.channel == nil else { return nil }
            s.channel = channel
            s.machine = Machine(configuration: configuration)
            s.framer = ARILineFramer()
            return s.machine.connected(now: Self.now())
        }
        guard let actions else {
            logger.warning(
                "remote adapter refused: another remote is connected",
                metadata: ["remote": "\(channel.remoteAddress?.description ?? "?")"])
            return false
        }
        logger.info("remote adapter connected", metadata: ["remote": "\(channel.remoteAddress?.description ?? "?")"])
        run(actions, on: channel)
        return true
    }

    func received(_ buffer: ByteBuffer, from channel: any Channel) {
        let actions: [Machine.Action] = state.withLockedValue { s in
            guard s.channel === channel else { return [] }
            var actions: [Machine.Action] = []
            // One clock reading for the read's lines (they arrived together).
            let now = Self.now()
            for line in s.framer.append(buffer.readableBytesView) {
                s.machine.received(line, now: now, into: &actions)
            }
            return actions
        }
        run(actions, on: channel)
    }

    func closed(_ channel: any Channel) {
        let actions: [Machine.Action] = state.withLockedValue { s in
            guard s.channel === channel else { return [] }
            s.channel = nil
            s.timer?.cancel()
            s.timer = nil
            s.counters.disconnections += 1
            return s.machine.connectionLost()
        }
        run(actions, on: channel)
        state.withLockedValue { $0.events }?.remoteLost()
    }

    // MARK: Requests

    /// Sends `request` and waits for its reply (or its timeout, or the connection's end).
    func request(_ request: ARIRequest) async throws -> ARIReplyPayload {
        try await send(request, onSent: { _ in })
    }

    /// As `request`, calling `onSent` with the request's id once it is out (under the lock:
    /// keep it short).
    func send(_ request: ARIRequest, onSent: @escaping @Sendable (String) -> Void) async throws -> ARIReplyPayload {
        try await withCheckedThrowingContinuation { (reply: Reply) in
            let (actions, channel) = state.withLockedValue { s -> ([Machine.Action], (any Channel)?) in
                let (id, actions) = s.machine.sendRequest(request, context: reply, now: Self.now())
                if let id { onSent(id) }
                return (actions, s.channel)
            }
            run(actions, on: channel)
        }
    }

    /// Waits until a remote finished its handshake, at most `timeout`. True when one did.
    func waitUntilReady(timeout: TimeAmount, on eventLoop: any EventLoop) async -> Bool {
        await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
            let id: UInt64? = state.withLockedValue { s in
                if s.machine.isReady { return nil }
                s.nextWaiter += 1
                s.readyWaiters[s.nextWaiter] = c
                return s.nextWaiter
            }
            guard let id else {
                c.resume(returning: true)
                return
            }
            _ = eventLoop.scheduleTask(in: timeout) { [self] in
                self.state.withLockedValue { $0.readyWaiters.removeValue(forKey: id) }?.resume(returning: false)
            }
        }
    }

    /// Sends `CLOSE` (when the remote takes it) and closes the connection.
    func close(reason: String) {
        let (actions, channel) = state.withLockedValue { s in (s.machine.close(reason: reason), s.channel) }
        run(actions, on: channel)
    }

    // MARK: Actions

    private func resumeReadyWaiters(_ ready: Bool) {
        let waiters = state.withLockedValue { s in
            defer { s.readyWaiters.removeAll() }
            return s.readyWaiters.values
        }
        for w in waiters { w.resume(returning: ready) }
    }

    private func run(_ actions: [Machine.Action], on channel: (any Channel)?) {
        let events = state.withLockedValue { $0.events }
        // Consecutive data notifications go together, so that the updates of one read reach
        // the item engine as one batch (`ItemEventListener.update(_:)`).
        var notifications: [ARIRemoteLine] = []
        for action in actions {
            if case .dataNotification(let line) = action {
                notifications.append(line)
                continue
            }
            if !notifications.isEmpty {
                events?.remoteNotifications(notifications)
                notifications.removeAll()
            }
            switch action {
            case .write(let line):
                guard let channel else { continue }
                channel.writeAndFlush(ByteBuffer(bytes: ARILineFramer.frame(line)), promise: nil)
            case .closeConnection:
                channel?.close(promise: nil)
            case .ready(let version, let dialect, _):
                logger.info("remote adapter ready", metadata: ["ari": "\(version)"])
                state.withLockedValue { $0.counters.handshakes += 1 }
                resumeReadyWaiters(true)
                events?.remoteReady(dialect: dialect)
            case .completed(let reply, let result):
                if case .failure = result { state.withLockedValue { $0.counters.failedRequests += 1 } }
                reply.resume(with: result.mapError { $0 as any Error })
            case .dataNotification:
                break
            case .remoteFailure(let message):
                state.withLockedValue { $0.counters.remoteFailures += 1 }
                events?.remoteFailure(message)
            case .log(let level, let text):
                switch level {
                case .info: logger.info("\(text)")
                case .warning: logger.warning("\(text)")
                case .error: logger.error("\(text)")
                }
            }
        }
        if !notifications.isEmpty { events?.remoteNotifications(notifications) }
        if let channel { rearmTimer(on: channel) }
    }

    private func rearmTimer(on channel: any Channel) {
        state.withLockedValue { s in
            s.timer?.cancel()
            s.timer = nil
            guard s.channel === channel, let wakeup = s.machine.nextWakeup else { return }
            let deadline = NIODeadline.uptimeNanoseconds(Saturating.uptimeNanoseconds(millis: wakeup))
            s.timer = channel.eventLoop.scheduleTask(deadline: deadline) { [self] in
                let actions = self.state.withLockedValue { $0.machine.timerFired(now: Self.now()) }
                self.run(actions, on: channel)
            }
        }
    }
}
