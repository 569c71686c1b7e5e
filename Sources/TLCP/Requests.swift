/// Typed TLCP requests (docs/protocol/TLCP.md §2). Encoding is in `RequestEncoding.swift`, parsing
/// in `RequestParsing.swift`.

/// The name of a request: the HTTP path `<name>.txt` or the first line of a WS message.
public enum TLCPRequestName: String, Sendable, Hashable, CaseIterable {
    case createSession = "create_session"
    case bindSession = "bind_session"
    case control
    case msg
    case heartbeat
    case wsok

    /// The HTTP path under the service prefix, e.g. `create_session.txt`.
    public var httpFileName: String { rawValue + ".txt" }
}

/// Any request.
public enum TLCPRequest: Sendable, Hashable {
    case createSession(CreateSessionRequest)
    case bindSession(BindSessionRequest)
    case control(ControlRequest)
    case message(MessageRequest)
    case heartbeat(HeartbeatRequest)
    case wsok

    public var name: TLCPRequestName {
        switch self {
        case .createSession: return .createSession
        case .bindSession: return .bindSession
        case .control: return .control
        case .message: return .msg
        case .heartbeat: return .heartbeat
        case .wsok: return .wsok
        }
    }
}

/// Parameters common to the stream requests, create and bind.
public struct StreamParameters: Sendable, Hashable {
    /// `LS_content_length`: byte budget of the stream connection.
    public var contentLength: Int?
    /// `LS_polling=true`.
    public var polling: Bool
    public var pollingMillis: Int?
    public var idleMillis: Int?
    public var inactivityMillis: Int?
    public var keepaliveMillis: Int?
    /// `LS_send_sync`; nil means the default (true).
    public var sendSync: Bool?
    /// `LS_reduce_head` (2.2+).
    public var reduceHead: Bool?
    /// `LS_cause`: a diagnostic, for logs only.
    public var cause: String?

    public init(
        contentLength: Int? = nil, polling: Bool = false, pollingMillis: Int? = nil, idleMillis: Int? = nil,
        inactivityMillis: Int? = nil, keepaliveMillis: Int? = nil, sendSync: Bool? = nil,
        reduceHead: Bool? = nil, cause: String? = nil
    ) {
        self.contentLength = contentLength
        self.polling = polling
        self.pollingMillis = pollingMillis
        self.idleMillis = idleMillis
        self.inactivityMillis = inactivityMillis
        self.keepaliveMillis = keepaliveMillis
        self.sendSync = sendSync
        self.reduceHead = reduceHead
        self.cause = cause
    }
}

/// `create_session`.
public struct CreateSessionRequest: Sendable, Hashable {
    /// The fixed client id custom clients send (`LS_cid`).
    public static let standardClientId = "mgQkwtwdysogQz2BJ4Ji kOj2Bg"

    public var clientId: String
    public var user: String?
    public var password: String?
    public var adapterSet: String?
    public var requestedMaxBandwidth: RequestedBandwidth?
    public var supportedDiffs: [DiffFormat]?
    public var ttl: RequestTTL?
    public var oldSession: String?
    public var stream: StreamParameters
    /// Control operations carried by the same request (the create+control combo, 1.8).
    public var comboOperations: [ControlOperation]

    public init(
        clientId: String = CreateSessionRequest.standardClientId, user: String? = nil, password: String? = nil,
        adapterSet: String? = nil, requestedMaxBandwidth: RequestedBandwidth? = nil,
        supportedDiffs: [DiffFormat]? = nil, ttl: RequestTTL? = nil, oldSession: String? = nil,
        stream: StreamParameters = StreamParameters(), comboOperations: [ControlOperation] = []
    ) {
        self.clientId = clientId
        self.user = user
        self.password = password
        self.adapterSet = adapterSet
        self.requestedMaxBandwidth = requestedMaxBandwidth
        self.supportedDiffs = supportedDiffs
        self.ttl = ttl
        self.oldSession = oldSession
        self.stream = stream
        self.comboOperations = comboOperations
    }
}

/// `bind_session`.
public struct BindSessionRequest: Sendable, Hashable {
    /// `LS_session`; nil over WS means the last session bound on that socket.
    public var session: String?
    /// `LS_recovery_from` (2.1+): data notifications received so far.
    public var recoveryFrom: Int?
    public var stream: StreamParameters

    public init(session: String? = nil, recoveryFrom: Int? = nil, stream: StreamParameters = StreamParameters()) {
        self.session = session
        self.recoveryFrom = recoveryFrom
        self.stream = stream
    }
}

/// `control`.
public struct ControlRequest: Sendable, Hashable {
    public var requestId: String
    /// `LS_session`; nil over WS means the last session bound on that socket.
    public var session: String?
    public var operation: ControlOperation
    /// `LS_ack` (WS, 2.3+): false suppresses REQOK. Errors are always sent.
    public var ack: Bool?
    public var cause: String?

    public init(requestId: String, session: String? = nil, operation: ControlOperation, ack: Bool? = nil, cause: String? = nil) {
        self.requestId = requestId
        self.session = session
        self.operation = operation
        self.ack = ack
        self.cause = cause
    }
}

/// `LS_op` and its parameters.
public enum ControlOperation: Sendable, Hashable {
    case add(SubscribeParameters)
    case delete(subscriptionId: Int)
    case reconf(subscriptionId: Int, maxFrequency: RequestedFrequency?)
    case constrain(maxBandwidth: RequestedBandwidth?)
    case forceRebind(pollingMillis: Int?, closeSocket: Bool?)
    case destroy(causeCode: Int?, causeMessage: String?, closeSocket: Bool?)
    case mpnRegister(MPNRegisterParameters)
    case mpnResetBadge(deviceId: String)
    case mpnActivate(MPNActivateParameters)
    case mpnReconf(MPNReconfParameters)
    case mpnDeactivate(deviceId: String, target: MPNDeactivateTarget)

    /// The `LS_op` value.
    public var opName: String {
        switch self {
        case .add: return "add"
        case .delete: return "delete"
        case .reconf: return "reconf"
        case .constrain: return "constrain"
        case .forceRebind: return "force_rebind"
        case .destroy: return "destroy"
        case .mpnRegister: return "register"
        case .mpnResetBadge: return "reset_badge"
        case .mpnActivate: return "activate"
        case .mpnReconf: return "pn_reconf"
        case .mpnDeactivate: return "deactivate"
        }
    }

    /// Whether this is one of the MPN operations.
    public var isMPN: Bool {
        switch self {
        case .mpnRegister, .mpnResetBadge, .mpnActivate, .mpnReconf, .mpnDeactivate: return true
        default: return false
        }
    }
}

/// Parameters of `LS_op=add`.
public struct SubscribeParameters: Sendable, Hashable {
    public var subscriptionId: Int
    public var mode: SubscriptionMode
    /// `LS_group`: an item group name, or space-separated item names.
    public var group: String
    /// `LS_schema`: a field schema name, or space-separated field names.
    public var schema: String
    public var dataAdapter: String?
    public var selector: String?
    public var bufferSize: RequestedBufferSize?
    public var maxFrequency: RequestedFrequency?
    public var snapshot: SnapshotRequest?

    public init(
        subscriptionId: Int, mode: SubscriptionMode, group: String, schema: String, dataAdapter: String? = nil,
        selector: String? = nil, bufferSize: RequestedBufferSize? = nil, maxFrequency: RequestedFrequency? = nil,
        snapshot: SnapshotRequest? = nil
    ) {
        self.subscriptionId = subscriptionId
        self.mode = mode
        self.group = group
        self.schema = schema
        self.dataAdapter = dataAdapter
        self.selector = selector
        self.bufferSize = bufferSize
        self.maxFrequency = maxFrequency
        self.snapshot = snapshot
    }
}

/// Parameters of `LS_op=register`.
public struct MPNRegisterParameters: Sendable, Hashable {
    public var platform: MPNPlatform
    public var applicationId: String
    public var deviceToken: String
    /// `PN_newDeviceToken`: token rotation (the old token goes in `deviceToken`).
    public var newDeviceToken: String?

    public init(platform: MPNPlatform, applicationId: String, deviceToken: String, newDeviceToken: String? = nil) {
        self.platform = platform
        self.applicationId = applicationId
        self.deviceToken = deviceToken
        self.newDeviceToken = newDeviceToken
    }
}

/// Parameters of `LS_op=activate`.
public struct MPNActivateParameters: Sendable, Hashable {
    public var subscriptionId: Int
    public var mode: SubscriptionMode
    public var group: String
    public var schema: String
    public var dataAdapter: String?
    public var bufferSize: RequestedBufferSize?
    public var maxFrequency: RequestedFrequency?
    public var deviceId: String
    public var notificationFormat: String
    public var trigger: String?
    public var coalescing: Bool?
    /// `PN_subscriptionId`: modify that existing MPN subscription.
    public var mpnSubscriptionId: String?

    public init(
        subscriptionId: Int, mode: SubscriptionMode, group: String, schema: String, dataAdapter: String? = nil,
        bufferSize: RequestedBufferSize? = nil, maxFrequency: RequestedFrequency? = nil, deviceId: String,
        notificationFormat: String, trigger: String? = nil, coalescing: Bool? = nil, mpnSubscriptionId: String? = nil
    ) {
        self.subscriptionId = subscriptionId
        self.mode = mode
        self.group = group
        self.schema = schema
        self.dataAdapter = dataAdapter
        self.bufferSize = bufferSize
        self.maxFrequency = maxFrequency
        self.deviceId = deviceId
        self.notificationFormat = notificationFormat
        self.trigger = trigger
        self.coalescing = coalescing
        self.mpnSubscriptionId = mpnSubscriptionId
    }
}

/// Parameters of `LS_op=pn_reconf` (2.3+).
public struct MPNReconfParameters: Sendable, Hashable {
    public var deviceId: String
    public var mpnSubscriptionId: String
    /// Must match the existing subscription when given (otherwise REQERR 56).
    public var mode: SubscriptionMode?
    public var group: String?
    public var schema: String?
    public var dataAdapter: String?
    public var maxFrequency: RequestedFrequency?
    /// nil keeps the current format.
    public var notificationFormat: String?
    /// nil keeps the current trigger; an empty string removes it.
    public var trigger: String?

    public init(
        deviceId: String, mpnSubscriptionId: String, mode: SubscriptionMode? = nil, group: String? = nil,
        schema: String? = nil, dataAdapter: String? = nil, maxFrequency: RequestedFrequency? = nil,
        notificationFormat: String? = nil, trigger: String? = nil
    ) {
        self.deviceId = deviceId
        self.mpnSubscriptionId = mpnSubscriptionId
        self.mode = mode
        self.group = group
        self.schema = schema
        self.dataAdapter = dataAdapter
        self.maxFrequency = maxFrequency
        self.notificationFormat = notificationFormat
        self.trigger = trigger
    }
}

/// What `LS_op=deactivate` removes.
public enum MPNDeactivateTarget: Sendable, Hashable {
    case subscription(String)
    case status(MPNSubscriptionStatusFilter)
    case all
}

/// `msg`.
public struct MessageRequest: Sendable, Hashable {
    /// Sequences are letters, digits and `_`; this one is reserved and refused.
    public static let reservedSequence = "UNORDERED_MESSAGES"

    public var requestId: String
    public var session: String?
    public var message: String
    public var sequence: String?
    /// `LS_msg_prog`.
    public var progressive: Int?
    /// `LS_max_wait` in ms.
    public var maxWait: Int?
    public var ack: Bool?
    /// `LS_outcome=false`: no MSGDONE/MSGFAIL.
    public var outcome: Bool?

    public init(
        requestId: String, session: String? = nil, message: String, sequence: String? = nil,
        progressive: Int? = nil, maxWait: Int? = nil, ack: Bool? = nil, outcome: Bool? = nil
    ) {
        self.requestId = requestId
        self.session = session
        self.message = message
        self.sequence = sequence
        self.progressive = progressive
        self.maxWait = maxWait
        self.ack = ack
        self.outcome = outcome
    }
}

/// `heartbeat`.
public struct HeartbeatRequest: Sendable, Hashable {
    public var session: String?
    public init(session: String? = nil) { self.session = session }
}
