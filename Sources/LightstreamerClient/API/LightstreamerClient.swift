import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The facade of the library (docs/protocol/CLIENT-API.md §2): connects to a Lightstreamer Server,
/// subscribes, sends messages. Delegate callbacks of every client arrive on one serial queue.
public final class LightstreamerClient: Sendable {
    public enum Status: String, CustomStringConvertible, Sendable, CaseIterable {
        case CONNECTING = "CONNECTING"
        case CONNECTED_STREAM_SENSING = "CONNECTED:STREAM-SENSING"
        case CONNECTED_WS_STREAMING = "CONNECTED:WS-STREAMING"
        case CONNECTED_HTTP_STREAMING = "CONNECTED:HTTP-STREAMING"
        case CONNECTED_WS_POLLING = "CONNECTED:WS-POLLING"
        case CONNECTED_HTTP_POLLING = "CONNECTED:HTTP-POLLING"
        case STALLED = "STALLED"
        case DISCONNECTED_WILL_RETRY = "DISCONNECTED:WILL-RETRY"
        case DISCONNECTED_TRYING_RECOVERY = "DISCONNECTED:TRYING-RECOVERY"
        case DISCONNECTED = "DISCONNECTED"

        public var description: String { rawValue }

        init(_ s: ClientStatus) { self = Status(rawValue: s.rawValue) ?? .DISCONNECTED }
    }

    /// Filter of MPN subscription lists (used by the MPN extension).
    public enum MPNSubscriptionStatus: Sendable { case ALL, SUBSCRIBED, TRIGGERED }

    public static let LIB_NAME = "swift_client"
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

    public static func setLoggerProvider(_ loggerProvider: LSLoggerProvider) {
        LogManager.setProvider(loggerProvider)
    }

    public static func addCookies(_ cookies: [HTTPCookie], forURL url: URL) {
        CookieJar.add(cookies, for: url)
    }

    public static func getCookiesForURL(_ url: URL?) -> [HTTPCookie]? {
        CookieJar.cookies(for: url)
    }

    public var connectionDetails: ConnectionDetails { core.details }
    public var connectionOptions: ConnectionOptions { core.options }
    public var status: Status { Status(core.status) }

    public func addDelegate(_ delegate: ClientDelegate) {
        guard core.addDelegate(delegate) else { return }
        let box = UncheckedBox((delegate, self))
        CallbackQueue.queue.async { box.value.0.clientDidAddDelegate(box.value.1) }
    }

    public func removeDelegate(_ delegate: ClientDelegate) {
        guard core.removeDelegate(delegate) else { return }
        let box = UncheckedBox((delegate, self))
        CallbackQueue.queue.async { box.value.0.clientDidRemoveDelegate(box.value.1) }
    }

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
    public func sendMessage(_ message: String, withSequence sequence: String? = nil, timeout delayTimeout: Millis = -1,
                            delegate: ClientMessageDelegate? = nil, enqueueWhileDisconnected: Bool = false) {
        if let sequence {
            precondition(sequence.unicodeScalars.allSatisfy { ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) || $0 == "_" },
                         "The given sequence name is not valid, use only alphanumeric characters plus underscore, or nil")
        }
        let seq = sequence == "UNORDERED_MESSAGES" ? nil : sequence
        let spec = MessageSpec(text: message, sequence: seq, timeout: delayTimeout, wantsOutcome: delegate != nil,
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
