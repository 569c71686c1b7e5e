import ARI

/// Which adapter a remote connection serves, and how the server checks and greets it.
public struct RemoteConnectionConfiguration: Sendable, Hashable {
    /// The adapter a remote connection serves.
    public enum Role: Sendable, Hashable {
        /// The adapter set's Metadata Adapter.
        case metadata
        /// The Data Adapter of that name.
        case data(name: String)
    }

    /// The adapter this connection serves.
    public var role: Role
    /// The adapter set, sent in the init.
    public var adapterSet: String
    /// The `RAC` credentials the remote must present; nil accepts any remote (and then the
    /// init goes out at once, so remotes that never send `RAC` work too).
    public var credentials: RemoteCredentials?
    /// `keepalive_hint.millis` in the init; nil sends none.
    public var keepaliveHintMillis: Int?
    /// Parameters for the remote adapter's `initialize`, sent with the init.
    public var parameters: [ARIPair]
    /// An identifier of this server instance sent in the init, if any.
    public var serverInstanceId: String?
    /// How long a request waits for its reply.
    public var requestTimeoutMillis: Int64
    /// How long the handshake (RAC and the init reply) may take.
    public var handshakeTimeoutMillis: Int64
    /// Silence from the remote after which the connection is closed; nil never closes it.
    public var inactivityTimeoutMillis: Int64?
    /// Requests waiting for their reply at once.
    public var maxPendingRequests: Int

    /// A configuration with the defaults of the configuration file.
    public init(
        role: Role, adapterSet: String, credentials: RemoteCredentials? = nil, keepaliveHintMillis: Int? = nil,
        parameters: [ARIPair] = [], serverInstanceId: String? = nil, requestTimeoutMillis: Int64 = 10_000,
        handshakeTimeoutMillis: Int64 = 10_000, inactivityTimeoutMillis: Int64? = nil, maxPendingRequests: Int = 10_000
    ) {
        self.role = role
        self.adapterSet = adapterSet
        self.credentials = credentials
        self.keepaliveHintMillis = keepaliveHintMillis
        self.parameters = parameters
        self.serverInstanceId = serverInstanceId
        self.requestTimeoutMillis = requestTimeoutMillis
        self.handshakeTimeoutMillis = handshakeTimeoutMillis
        self.inactivityTimeoutMillis = inactivityTimeoutMillis
        self.maxPendingRequests = maxPendingRequests
    }

    var initRequest: ARIRequest {
        var dataAdapter: String?
        if case .data(let name) = role { dataAdapter = name }
        let p = ARIInitParameters(
            keepaliveHintMillis: keepaliveHintMillis, adapterSet: adapterSet, dataAdapter: dataAdapter,
            serverInstanceId: serverInstanceId, custom: parameters)
        return dataAdapter == nil ? .metadataInit(p) : .dataInit(p)
    }
}

/// A user and password pair a remote must present in `RAC`.
public struct RemoteCredentials: Sendable, Hashable {
    /// The user the remote presents.
    public var user: String
    /// The password the remote presents.
    public var password: String
    /// A pair of credentials.
    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }
}

/// Why a request to a remote got no successful reply.
public enum RemoteRequestFailure: Error, Sendable, Hashable {
    /// The remote answered with an error.
    case refused(ARIErrorReply)
    /// No reply within the request timeout.
    case timedOut
    /// The reply could not be read.
    case malformedReply(String)
    /// The connection is not ready (handshake not done) or is gone.
    case unavailable
    /// Too many requests are waiting for their replies.
    case overloaded
}

/// What the connection state machine asks its driver to do, in order.
public enum RemoteConnectionAction<Context: Sendable>: Sendable {
    /// Write this line (without terminator; frame it with `ARILineFramer.frame`).
    case write(String)
    /// Close the socket once the lines before have been written.
    case closeConnection
    /// The handshake is done: requests may go out.
    case ready(version: ARIVersion, dialect: ARIDialect, sdk: String?)
    /// A request ended: its reply payload, or why it failed.
    case completed(Context, Result<ARIReplyPayload, RemoteRequestFailure>)
    /// A data notification (`UD3`, `EOS`, `CLS`, `DFD`) for the Data Adapter.
    case dataNotification(ARIRemoteLine)
    /// The remote reported a failure (`FAL`).
    case remoteFailure(String?)
    /// Something to log: the connection goes on unless another action closes it.
    case log(RemoteLogLevel, String)
}

extension RemoteConnectionAction: Equatable where Context: Equatable {}

/// The level of a line the connection asks its driver to log.
public enum RemoteLogLevel: Sendable, Hashable {
    /// Normal events (a remote connected, closed).
    case info
    /// Something the remote did wrong that the connection survives.
    case warning
    /// A failure that ends the connection.
    case error
}
