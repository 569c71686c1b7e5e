import Dispatch
import Foundation
import NIOConcurrencyHelpers
import TLCP

/// Runs a client's `SessionEngine`: every event goes through one serial engine queue, actions
/// are executed there (connections, timers) and application callbacks are dispatched, in
/// order, on the shared callback queue.
/// `@unchecked Sendable`: every mutable property is only touched on `queue` (a serial queue), which every entry point hops to.
final class ClientCore: @unchecked Sendable {
    let queue: DispatchQueue
    private var engine: SessionEngine
    private let transport: TransportFactory
    let details: ConnectionDetails
    let options: ConnectionOptions
    weak var client: LightstreamerClient?

    // engine-queue state
    private var connections: [SessionEngine.ConnectionID: TransportConnection] = [:]
    private var timerGenerations: [SessionEngine.Timer: UInt64] = [:]
    private var timerCounter: UInt64 = 0
    private var subscriptionObjects: [Int: Subscription] = [:]
    private var messageObjects: [Int: (String, ClientMessageDelegate?)] = [:]
    private let start = DispatchTime.now().uptimeNanoseconds
    /// Callbacks produced by the engine-queue work item under way, in order: they go to the
    /// callback queue together, as one work item, when it ends (`flushCallbacks`).
    private var outbox: [Callback] = []
    /// While the lines of one socket read are processed: callbacks wait for the end of the read.
    private var inBatch = false

    /// Lines received and not yet delivered to the application: the transports stop reading
    /// while too many are in flight, so a slow application (or a fast server) cannot make the
    /// queues grow without bound.
    let readGate = ReadGate()

    /// The state read from any thread, under the box's lock.
    /// `@unchecked Sendable`: the client delegates are of the official API's non-`Sendable` protocol; the box's lock guards them.
    private struct Shared: @unchecked Sendable {
        var status: ClientStatus = .disconnected
        var clientDelegates = DelegateList<ClientDelegate>()
        var activeSubscriptions: [Subscription] = []
        var nextKey = 1
    }

    private let shared = NIOLockedValueBox(Shared())

    /// Extension point for MPN: receives MPN notifications, session starts and external replies.
    var extensionHook: (@Sendable (SessionEngine.Notification) -> Void)?

    init(transport: TransportFactory) {
        queue = DispatchQueue(label: "com.lightstreamer.engine")
        engine = SessionEngine(seed: UInt64(truncatingIfNeeded: DispatchTime.now().uptimeNanoseconds))
        self.transport = transport
        details = ConnectionDetails()
        options = ConnectionOptions()
        details.core = self
        options.core = self
    }

    private var now: Int64 { Int64((DispatchTime.now().uptimeNanoseconds - start) / 1_000_000) }

    var status: ClientStatus { shared.withLockedValue { $0.status } }

    func newKey() -> Int {
        shared.withLockedValue { s in
            defer { s.nextKey += 1 }
            return s.nextKey
        }
    }

    var settings: SessionEngine.Settings {
        var s = options.snapshot
        details.merge(into: &s)
        return s
    }

    // MARK: API entry points

    func post(_ event: SessionEngine.Event) {
        queue.async { self.process(event) }
    }

    func optionChanged(_ name: String) {
        let s = settings
        post(.settingsChanged(s, property: name))
        dispatchToDelegates(.property(name))
    }

    func connect() {
        let s = settings
        queue.async {
            self.process(.settingsChanged(s, property: ""))
            self.process(.connect)
        }
    }

    func subscribe(_ sub: Subscription) {
        let key = newKey()
        sub.activate(core: self, key: key)
        shared.withLockedValue { $0.activeSubscriptions.append(sub) }
        let spec = sub.spec
        queue.async {
            self.subscriptionObjects[key] = sub
            self.process(.subscribe(key: key, spec: spec))
        }
    }

    /// Subscribes without listing the subscription in `subscriptions` (MPN's internal items).
    func subscribeInternal(_ sub: Subscription) {
        let key = newKey()
        sub.activate(core: self, key: key)
        let spec = sub.spec
        queue.async {
            self.subscriptionObjects[key] = sub
            self.process(.subscribe(key: key, spec: spec))
        }
    }

    /// Sends a control operation built by an extension (MPN). Its REQOK/REQERR comes back to
    /// `extensionHook` as `.externalReply(token:…)`; it waits for a session and survives
    /// session changes.
    func sendExternalControl(token: Int, _ operation: ControlOperation, cause: String? = nil) {
        post(.externalControl(token: token, operation: operation, cause: cause))
    }

    /// Like `sendExternalControl`, for several controls that may share one batch.
    func sendExternalControls(_ controls: [SessionEngine.ExternalControl]) {
        guard !controls.isEmpty else { return }
        post(.externalControls(controls))
    }

    func unsubscribe(_ sub: Subscription) {
        guard let key = sub.deactivate(from: self) else { return }
        shared.withLockedValue { s in s.activeSubscriptions.removeAll { $0 === sub } }
        post(.unsubscribe(key: key))
    }

    var subscriptions: [Subscription] { shared.withLockedValue { $0.activeSubscriptions } }

    func changeFrequency(key: Int, _ f: RequestedFrequency?) { post(.changeFrequency(key: key, f)) }

    func sendMessage(_ text: String, spec: SessionEngine.MessageSpec, delegate: ClientMessageDelegate?) {
        let key = newKey()
        let box = UncheckedBox(delegate)
        queue.async {
            if spec.wantsOutcome { self.messageObjects[key] = (text, box.value) }
            self.process(.sendMessage(key: key, spec))
        }
    }

    /// Test hook: breaks the connection that carries the session's stream, as a network
    /// failure would, so that recovery can be observed end to end.
    func breakStreamConnection() {
        queue.async {
            if let id = self.engine.stream?.connection { self.connections[id]?.abort() }
        }
    }

    // MARK: delegates

    func addDelegate(_ d: ClientDelegate) -> Bool { shared.withLockedValue { $0.clientDelegates.add(d) } }

    func removeDelegate(_ d: ClientDelegate) -> Bool { shared.withLockedValue { $0.clientDelegates.remove(d) } }

    var delegates: [ClientDelegate] { shared.withLockedValue { $0.clientDelegates.all } }

    enum ClientEvent {
        case status(LightstreamerClient.Status)
        case serverError(Int, String)
        case property(String)
    }

    /// From an API thread: straight to the callback queue.
    private func dispatchToDelegates(_ event: ClientEvent) {
        guard let client else { return }
        let targets = delegates
        let box = UncheckedBox(ClientCallback(delegates: targets, client: client, event: event))
        CallbackQueue.queue.async { box.value.run() }
    }

    /// From the engine queue: after the callbacks already produced.
    private func enqueueForDelegates(_ event: ClientEvent) {
        guard let client else { return }
        outbox.append(.client(ClientCallback(delegates: delegates, client: client, event: event)))
    }

    /// One application callback, produced on the engine queue, run on the callback queue.
    enum Callback {
        case client(ClientCallback)
        case subscription(Subscription, SessionEngine.SubscriptionEvent)
        case message(ClientMessageDelegate, LightstreamerClient, String, SessionEngine.MessageOutcome)

        func run() {
            switch self {
            case .client(let c): c.run()
            case .subscription(let s, let e): ClientCore.runSubscriptionCallback(s, e)
            case .message(let d, let c, let text, let outcome):
                switch outcome {
                case .processed(let response): d.client(c, didProcessMessage: text, withResponse: response)
                case .denied(let code, let message): d.client(c, didDenyMessage: text, withCode: code, error: message)
                case .discarded: d.client(c, didDiscardMessage: text)
                case .failed: d.client(c, didFailMessage: text)
                case .aborted(let sent): d.client(c, didAbortMessage: text, sentOnNetwork: sent)
                }
            }
        }
    }

    /// Hands the callbacks produced so far to the callback queue as one work item, then
    /// releases `lines` from the read gate once they have run.
    private func flushCallbacks(releasingLines lines: Int = 0) {
        guard !outbox.isEmpty else {
            if lines > 0 { readGate.remove(lines) }
            return
        }
        let box = UncheckedBox(outbox)
        outbox = []
        outbox.reserveCapacity(min(box.value.count, 1024))
        let gate = readGate
        CallbackQueue.queue.async {
            for c in box.value { c.run() }
            if lines > 0 { gate.remove(lines) }
        }
    }

    struct ClientCallback {
        let delegates: [ClientDelegate]
        let client: LightstreamerClient
        let event: ClientEvent

        func run() {
            for d in delegates {
                switch event {
                case .status(let s): d.client(client, didChangeStatus: s)
                case .serverError(let code, let message): d.client(client, didReceiveServerError: code, withMessage: message)
                case .property(let name): d.client(client, didChangeProperty: name)
                }
            }
        }
    }

    // MARK: engine

    private func process(_ event: SessionEngine.Event) {
        let actions = engine.handle(event, now: now)
        for a in actions { execute(a) }
        if !inBatch { flushCallbacks() }
    }

    private func execute(_ action: SessionEngine.Action) {
        switch action {
        case .openWebSocket(let id, let url, let headers):
            connections[id] = transport.openWebSocket(
                url: url, headers: withCookies(headers, url: url), tls: details.tlsPolicy,
                gate: readGate, events: handler(id))
        case .sendWebSocket(let id, let text):
            LogManager.proto?.debug("WS send: \(text.prefix(500))")
            connections[id]?.send(text)
        case .httpPost(let id, let url, let body, let headers):
            LogManager.proto?.debug("HTTP POST \(url): \(body.prefix(500))")
            connections[id] = transport.post(
                url: url, body: body, headers: withCookies(headers, url: url), tls: details.tlsPolicy,
                gate: readGate, events: handler(id))
        case .close(let id):
            connections.removeValue(forKey: id)?.close()
        case .schedule(let timer, let ms):
            timerCounter += 1
            let gen = timerCounter
            timerGenerations[timer] = gen
            // At most a day (ServerNumbers.millis): values may come from the network (LOOP,
            // CONOK keepalive); the engine holds them to that range already.
            queue.asyncAfter(deadline: .now() + .milliseconds(ServerNumbers.millis(ms))) {
                guard self.timerGenerations[timer] == gen else { return }
                self.timerGenerations[timer] = nil
                self.process(.timerFired(timer))
            }
        case .cancel(let timer):
            timerGenerations[timer] = nil
        case .notify(let n):
            deliver(n)
        case .log(let level, let text):
            guard let l = LogManager.session else { return }
            switch level {
            case .debug: l.debug(text)
            case .info: l.info(text)
            case .warn: l.warn(text)
            case .error: l.error(text)
            }
        }
    }

    private func withCookies(_ headers: [String: String], url: String) -> [String: String] {
        var h = headers
        if let cookie = CookieJar.header(for: url) { h["Cookie"] = cookie }
        return h
    }

    private func handler(_ id: SessionEngine.ConnectionID) -> @Sendable (TransportEvent) -> Void {
        { [weak self] event in
            guard let self else { return }
            guard case .lines(let lines) = event else {
                self.queue.async { self.transportEvent(id, event) }
                return
            }
            // One socket read: its callbacks reach the callback queue as one work item.
            let n = lines.count
            self.readGate.add(n)
            self.queue.async {
                self.inBatch = true
                self.transportEvent(id, event)
                self.inBatch = false
                self.flushCallbacks(releasingLines: n)
            }
        }
    }

    private func transportEvent(_ id: SessionEngine.ConnectionID, _ event: TransportEvent) {
        guard connections[id] != nil else { return }
        switch event {
        case .opened:
            process(.webSocketOpened(id))
        case .lines(let lines):
            // The stream logger is looked up once per socket read (under a lock), not per line.
            let log = LogManager.stream.flatMap { $0.isDebugEnabled ? $0 : nil }
            for line in lines {
                if let log { log.debug("received: \(line.prefix(500))") }
                process(.lineReceived(id, line))
                if connections[id] == nil { break }
            }
        case .closed:
            connections.removeValue(forKey: id)
            process(.connectionClosed(id))
        case .failed(let reason):
            connections.removeValue(forKey: id)
            process(.connectionFailed(id, reason))
        case .rejected(let code, let message):
            connections.removeValue(forKey: id)
            process(.connectionRejected(id, code: code, message: message))
        }
    }

    // MARK: notifications

    private func deliver(_ n: SessionEngine.Notification) {
        switch n {
        case .status(let s):
            shared.withLockedValue { $0.status = s }
            let status = LightstreamerClient.Status(s)
            enqueueForDelegates(.status(status))
        case .serverError(let code, let message):
            enqueueForDelegates(.serverError(code, message))
        case .property(let p):
            let changed: Bool
            if case .realMaxBandwidth(let v) = p {
                changed = options.realMaxBandwidth != v
                options.setRealMaxBandwidth(v)
            } else {
                changed = details.apply(p)
            }
            if changed {
                let name = p.name
                enqueueForDelegates(.property(name))
            }
        case .subscription(let key, let event):
            deliverSubscription(key, event)
        case .message(let key, let outcome):
            guard let (text, delegate) = messageObjects.removeValue(forKey: key), let delegate, let client else { return }
            outbox.append(.message(delegate, client, text, outcome))
        case .externalReply, .mpn, .sessionStarted, .sessionEnded, .externalDropped, .externalSubscriptionId:
            // The extension dispatches its own callbacks: the ones before go first.
            flushCallbacks()
            extensionHook?(n)
        }
    }

    private func deliverSubscription(_ key: Int, _ event: SessionEngine.SubscriptionEvent) {
        guard let sub = subscriptionObjects[key] else { return }
        switch event {
        case .subscribed(_, _, let kp, let cp):
            sub.setSubscribed(true, keyPosition: kp, commandPosition: cp)
        case .unsubscribed:
            sub.setSubscribed(false)
            if sub.engineKey != key { subscriptionObjects.removeValue(forKey: key) }
        case .failed:
            sub.failed(key: key)
            subscriptionObjects.removeValue(forKey: key)
            shared.withLockedValue { s in s.activeSubscriptions.removeAll { $0 === sub } }
        case .update, .endOfSnapshot, .clearSnapshot, .lostUpdates, .realFrequency, .secondLevelFailed, .secondLevelLostUpdates:
            break
        }
        outbox.append(.subscription(sub, event))
    }

    /// On the callback queue.
    static func runSubscriptionCallback(_ s: Subscription, _ e: SessionEngine.SubscriptionEvent) {
        if case .update(let u) = e { s.store(u) }
        for d in s.delegates {
            switch e {
            case .subscribed: d.subscriptionDidSubscribe(s)
            case .unsubscribed: d.subscriptionDidUnsubscribe(s)
            case .failed(let code, let message): d.subscription(s, didFailWithErrorCode: code, message: message)
            case .update(let u): d.subscription(s, didUpdateItem: u)
            case .endOfSnapshot(let name, let pos): d.subscription(s, didEndSnapshotForItemName: name, itemPos: UInt(clamping: pos))
            case .clearSnapshot(let name, let pos): d.subscription(s, didClearSnapshotForItemName: name, itemPos: UInt(clamping: pos))
            case .lostUpdates(let name, let pos, let n):
                d.subscription(s, didLoseUpdates: UInt(clamping: n), forItemName: name, itemPos: UInt(clamping: pos))
            case .realFrequency(let f): d.subscription(s, didReceiveRealFrequency: f)
            case .secondLevelFailed(let k, let code, let message):
                d.subscription(s, didFailWithErrorCode: code, message: message, forCommandSecondLevelItemWithKey: k)
            case .secondLevelLostUpdates(let k, let n):
                d.subscription(s, didLoseUpdates: UInt(clamping: n), forCommandSecondLevelItemWithKey: k)
            }
        }
    }
}
