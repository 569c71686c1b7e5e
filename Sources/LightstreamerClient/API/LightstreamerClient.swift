import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The facade of the library (docs/protocol/CLIENT-API.md §2): connects to a Lightstreamer Server,
/// subscribes, sends messages. Delegate callbacks of every client arrive on one serial queue.
public final class LightstreamerClient: Sendable {
    /// The status of a client's connection, as its delegates and `status` report it. Each
    /// case's raw value is the status string of the official API (e.g. `CONNECTED:WS-STREAMING`).
    public enum Status: String, CustomStringConvertible, Sendable, CaseIterable {
        /// Opening a session.
        case CONNECTING = "CONNECTING"
        /// Session created; checking whether streaming works on this network.
        case CONNECTED_STREAM_SENSING = "CONNECTED:STREAM-SENSING"
        /// Connected, streaming over WebSocket.
        case CONNECTED_WS_STREAMING = "CONNECTED:WS-STREAMING"
        /// Connected, streaming over HTTP.
        case CONNECTED_HTTP_STREAMING = "CONNECTED:HTTP-STREAMING"
        /// Connected, polling over WebSocket.
        case CONNECTED_WS_POLLING = "CONNECTED:WS-POLLING"
        /// Connected, polling over HTTP.
        case CONNECTED_HTTP_POLLING = "CONNECTED:HTTP-POLLING"
        /// Connected, but nothing has come from the server for longer than expected.
        case STALLED = "STALLED"
        /// Disconnected; the client will open a new session by itself.
        case DISCONNECTED_WILL_RETRY = "DISCONNECTED:WILL-RETRY"
        /// Disconnected; the client is trying to recover the same session.
        case DISCONNECTED_TRYING_RECOVERY = "DISCONNECTED:TRYING-RECOVERY"
        /// Disconnected, and not retrying: `connect()` was not called, `disconnect()` was, or the
        /// server closed the session.
        case DISCONNECTED = "DISCONNECTED"

        /// The status string (the raw value).
        public var description: String { rawValue }

        init(_ s: ClientStatus) { self = Status(rawValue: s.rawValue) ?? .DISCONNECTED }
    }

    /// Filter of MPN subscription lists (used by the MPN extension).
    public enum MPNSubscriptionStatus: Sendable {
        /// Subscribed and triggered ones alike.
        case ALL
        /// Those in status `SUBSCRIBED` (not triggered).
        case SUBSCRIBED
        /// Those in status `TRIGGERED`.
        case TRIGGERED
    }

    /// The library name the client sends to the server when it creates a session.
    public static let LIB_NAME = "swift_client"
    /// The library version the client sends to the server with `LIB_NAME`.
    public static let LIB_VERSION = "6.4.0-alpha.1"

    let core: ClientCore

    /// Creates a client. Precondition: `serverAddress`, when given, is valid (see
    /// `ConnectionDetails.serverAddress`).
    public convenience init(serverAddress: String?, adapterSet: String? = nil) {
        self.init(serverAddress, adapterSet: adapterSet, transport: NIOTransportFactory.shared)
    }

    /// The dependency-injection seam (tests).
    init(_ serverAddress: String?, adapterSet: String?, transport: TransportFactory) {
        core = ClientCore(transport: transport)
        core.client = self
        if let serverAddress { ConnectionDetails.validate(serverAddress) }
        let details = core.details
        let core = self.core
        details.core = nil
        details.serverAddress = serverAddress
        details.adapterSet = adapterSet
        details.core = core
    }

    /// Sets where every client's log goes (see `LogManager`).
    public static func setLoggerProvider(_ loggerProvider: LSLoggerProvider) {
        LogManager.setProvider(loggerProvider)
    }

    /// Adds cookies for `url` to the store shared by all clients (`HTTPCookieStorage.shared`);
    /// they are sent with every request and WebSocket upgrade to that URL.
    public static func addCookies(_ cookies: [HTTPCookie], forURL url: URL) {
        CookieJar.add(cookies, for: url)
    }

    /// The cookies the shared store holds for `url`; all of them when `url` is nil.
    public static func getCookiesForURL(_ url: URL?) -> [HTTPCookie]? {
        CookieJar.cookies(for: url)
    }

    /// Where and as whom the client connects: server address, adapter set, user, password;
    /// also what the server told about the current session.
    public var connectionDetails: ConnectionDetails { core.details }
    /// How the client connects: transports, timeouts, retry delays, bandwidth, extra headers.
    public var connectionOptions: ConnectionOptions { core.options }
    /// The current status of the connection.
    public var status: Status { Status(core.status) }

    /// Adds a delegate, which receives status changes, property changes and server errors.
    /// Adding one already present does nothing. The delegate is told with `clientDidAddDelegate`.
    public func addDelegate(_ delegate: ClientDelegate) {
        guard core.addDelegate(delegate) else { return }
        let box = UncheckedBox(delegate)
        CallbackQueue.queue.async { box.value.clientDidAddDelegate(self) }
    }

    /// Removes a delegate; it is told with `clientDidRemoveDelegate`. Removing one not present
    /// does nothing.
    public func removeDelegate(_ delegate: ClientDelegate) {
        guard core.removeDelegate(delegate) else { return }
        let box = UncheckedBox(delegate)
        CallbackQueue.queue.async { box.value.clientDidRemoveDelegate(self) }
    }

    /// The delegates currently added.
    public var delegates: [ClientDelegate] { core.delegates }

    /// Opens a session. Precondition: a server address is configured. No-op when already
    /// connecting, connected or stalled.
    public func connect() {
        precondition(connectionDetails.serverAddress != nil, "Configure the server address before trying to connect")
        core.connect()
    }

    /// Closes the session. Subscriptions stay active for the next session; pending messages
    /// are aborted.
    public func disconnect() {
        core.post(.disconnect)
    }

    /// Sends a message. A nil sequence means `UNORDERED_MESSAGES`. Precondition: the sequence
    /// has only letters, digits and `_`. When disconnected and not `enqueueWhileDisconnected`,
    /// the message is aborted at once (`didAbortMessage(sentOnNetwork: false)`).
    public func sendMessage(
        _ message: String, withSequence sequence: String? = nil, timeout delayTimeout: Millis = -1,
        delegate: ClientMessageDelegate? = nil, enqueueWhileDisconnected: Bool = false
    ) {
        if let sequence {
            precondition(
                sequence.unicodeScalars.allSatisfy {
                    ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) || $0 == "_"
                },
                "The given sequence name is not valid, use only alphanumeric characters plus underscore, or nil")
        }
        let seq = sequence == "UNORDERED_MESSAGES" ? nil : sequence
        let spec = SessionEngine.MessageSpec(
            text: message, sequence: seq, timeout: delayTimeout, wantsOutcome: delegate != nil,
            enqueueWhileDisconnected: enqueueWhileDisconnected)
        core.sendMessage(message, spec: spec, delegate: delegate)
    }

    /// Preconditions: not already active; items or itemGroup; fields or fieldSchema.
    public func subscribe(_ subscription: Subscription) {
        core.subscribe(subscription)
    }

    /// No-op if inactive. Precondition: not active on another client.
    public func unsubscribe(_ subscription: Subscription) {
        core.unsubscribe(subscription)
    }

    /// The active subscriptions (internal ones excluded).
    public var subscriptions: [Subscription] { core.subscriptions }
}
