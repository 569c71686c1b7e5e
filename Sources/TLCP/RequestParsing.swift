/// Server-side parsing of requests: WS messages and HTTP requests (query + body), into typed
/// requests. Every failure is a `TLCPRequestError` carrying the protocol's code; nothing traps.

/// The outcome of parsing one request line.
public typealias ParsedRequest = Result<TLCPRequest, TLCPRequestError>

/// A whole WS message or HTTP request: its name and one result per request line.
public struct ParsedRequestBatch: Sendable {
    public var name: TLCPRequestName
    /// The protocol version the HTTP request declared (`LS_protocol`); nil over WS, where the
    /// subprotocol carries it.
    public var version: TLCPVersion?
    public var requests: [ParsedRequest]

    public init(name: TLCPRequestName, version: TLCPVersion? = nil, requests: [ParsedRequest]) {
        self.name = name
        self.version = version
        self.requests = requests
    }
}

/// The text encodings a request body may use.
public enum RequestCharset: Sendable, Hashable {
    case utf8
    case latin1

    /// Reads the `charset` of a Content-Type header (`text/plain; charset=utf-8`,
    /// `application/x-www-form-urlencoded`). No charset means UTF-8. Nil for one we do not support.
    public init?(contentType: String?) {
        guard let contentType else {
            self = .utf8
            return
        }
        var charset: String?
        for part in contentType.split(separator: ";").dropFirst() {
            let kv = part.split(separator: "=", maxSplits: 1)
            if kv.count == 2, kv[0].trimmingSpaces().lowercased() == "charset" {
                charset = kv[1].trimmingSpaces().lowercased().replacingQuotes()
            }
        }
        switch charset {
        case nil, "utf-8", "utf8", "us-ascii", "ascii": self = .utf8
        case "iso-8859-1", "latin1", "latin-1", "iso8859-1": self = .latin1
        default: return nil
        }
    }

    func decode(_ bytes: some Collection<UInt8>) -> String? {
        switch self {
        case .utf8: return String(validating: bytes, as: UTF8.self)
        case .latin1:
            var s = ""
            s.unicodeScalars.append(contentsOf: bytes.map { Unicode.Scalar($0) })
            return s
        }
    }
}

private extension String {
    func replacingQuotes() -> String { filter { $0 != "\"" } }
}

public enum TLCPRequestParser {
    /// Parses one WS text message: the request name, then parameter lines (a batch).
    /// A message whose name cannot be read is an error for the whole message (answer `ERROR`).
    public static func parseWebSocketMessage(_ text: String) throws(TLCPRequestError) -> ParsedRequestBatch {
        var lines = splitLines(Substring(text))
        guard let nameLine = lines.first else {
            throw TLCPRequestError(code: 67, message: "Empty request")
        }
        lines.removeFirst()
        guard let name = TLCPRequestName(rawValue: String(nameLine)) else {
            throw TLCPRequestError(code: 67, message: "Unknown request '\(nameLine.prefix(40))'")
        }
        if name == .wsok {
            return ParsedRequestBatch(name: .wsok, requests: [.success(.wsok)])
        }
        // A trailing empty line is the CR-LF that may end the message.
        if lines.count > 1, lines.last?.isEmpty == true { lines.removeLast() }
        if lines.isEmpty { lines = [""] }
        return ParsedRequestBatch(name: name, requests: parseLines(name: name, lines: lines, defaults: RequestParameters(), http: false))
    }

    /// Parses an HTTP request. `fileName` is the last path component (`control.txt`), `query`
    /// the query string (without `?`), `body` the raw body bytes, `contentType` the header.
    /// On POST the query's parameters (typically `LS_protocol`, `LS_session`) are defaults for
    /// every body line; a request with no body line (GET) is made of the query alone.
    public static func parseHTTP(
        fileName: Substring, query: Substring, body: some Collection<UInt8>,
        contentType: String? = nil
    ) throws(TLCPRequestError) -> ParsedRequestBatch {
        guard fileName.hasSuffix(".txt"),
            let name = TLCPRequestName(rawValue: String(fileName.dropLast(4))),
            name != .wsok
        else {
            throw TLCPRequestError(code: 67, message: "Unknown request '\(fileName.prefix(40))'")
        }
        guard let charset = RequestCharset(contentType: contentType) else {
            throw TLCPRequestError(code: 67, message: "Unsupported charset in '\(contentType?.prefix(60) ?? "")'")
        }
        guard let text = charset.decode(body) else {
            throw TLCPRequestError(code: 67, message: "Request body is not valid text")
        }
        var defaults = try RequestParameters.parse(line: query)
        guard let protocolValue = defaults["LS_protocol"] else {
            throw TLCPRequestError(code: 65, message: "Missing parameter LS_protocol")
        }
        guard let version = TLCPVersion(protocolName: protocolValue), version.isSupported else {
            throw TLCPRequestError(code: 60, message: "Unsupported protocol '\(protocolValue.prefix(40))'")
        }
        defaults.remove("LS_protocol")
        var lines = splitLines(Substring(text)).filter { !$0.isEmpty }
        if lines.isEmpty { lines = [""] }
        return ParsedRequestBatch(
            name: name, version: version,
            requests: parseLines(name: name, lines: lines, defaults: defaults, http: true))
    }

    /// Splits on CR-LF (a lone LF is tolerated too).
    static func splitLines(_ text: Substring) -> [Substring] {
        // Byte offsets: "\r\n" is a single Character, so splitting Characters on "\n" would miss it.
        let offsets = text.withUTF8Bytes { bytes -> [(Int, Int)] in
            var ranges: [(Int, Int)] = []
            var start = 0
            let n = bytes.count
            while true {
                let end = bytes.firstIndex(of: UInt8(ascii: "\n"), from: start, to: n) ?? n
                let contentEnd = end > start && bytes[end - 1] == UInt8(ascii: "\r") ? end - 1 : end
                ranges.append((start, contentEnd))
                if end == n { break }
                start = end + 1
            }
            if ranges.count > 1, let last = ranges.last, last.0 == last.1 { ranges.removeLast() }
            return ranges
        }
        let utf8 = text.utf8
        return offsets.map { lo, hi in
            Substring(utf8[utf8.index(utf8.startIndex, offsetBy: lo)..<utf8.index(utf8.startIndex, offsetBy: hi)])
        }
    }

    /// `defaults` overridden by the line's own parameters.
    static func merged(_ defaults: RequestParameters, _ line: Substring) throws(TLCPRequestError) -> RequestParameters {
        let own = try RequestParameters.parse(line: line)
        if defaults.isEmpty { return own }
        if own.isEmpty { return defaults }
        // Linear: a default survives unless the line names it (lookups take the last value).
        let named = Set(own.pairs.map(\.name))
        var params = RequestParameters(defaults.pairs.filter { !named.contains($0.name) }.map { ($0.name, $0.value) })
        for p in own.pairs { params.append(p.name, p.value) }
        guard params.pairs.count <= RequestParameters.maxCount else { throw RequestParameters.tooMany }
        return params
    }

    static func parseLines(name: TLCPRequestName, lines: [Substring], defaults: RequestParameters, http: Bool) -> [ParsedRequest] {
        if name == .createSession {
            // One create; any further line is a combo control belonging to it.
            return [
                Result { () throws(TLCPRequestError) -> TLCPRequest in
                    try parseCreate(lines: lines, defaults: defaults)
                }
            ]
        }
        return lines.map { line in
            Result { () throws(TLCPRequestError) -> TLCPRequest in
                try parse(name: name, params: try merged(defaults, line), http: http)
            }
        }
    }

    /// Parses one request from its decoded parameters.
    public static func parse(name: TLCPRequestName, params: RequestParameters, http: Bool = false) throws(TLCPRequestError) -> TLCPRequest {
        switch name {
        case .createSession: return .createSession(try parseCreate(params, combo: []))
        case .bindSession: return .bindSession(try parseBind(params, http: http))
        case .control: return .control(try parseControl(params, http: http))
        case .msg: return .message(try parseMessage(params, http: http))
        case .heartbeat: return .heartbeat(HeartbeatRequest(session: params["LS_session"]))
        case .wsok: return .wsok
        }
    }

    static func parseCreate(lines: [Substring], defaults: RequestParameters) throws(TLCPRequestError) -> TLCPRequest {
        let params = try merged(defaults, lines.first ?? "")
        var combo: [ControlOperation] = []
        for line in lines.dropFirst() {
            do {
                combo.append(try parseOperation(ParameterReader(params: try RequestParameters.parse(line: line), requestId: nil)))
            } catch {
                throw TLCPRequestError(code: 64, message: "Combined control request refused: \(error.message)")
            }
        }
        return .createSession(try parseCreate(params, combo: combo))
    }

    static func parseStream(_ r: ParameterReader) throws(TLCPRequestError) -> StreamParameters {
        StreamParameters(
            contentLength: try r.int("LS_content_length", min: 0),
            polling: try r.bool("LS_polling") ?? false,
            pollingMillis: try r.int("LS_polling_millis", min: 0),
            idleMillis: try r.int("LS_idle_millis", min: 0),
            inactivityMillis: try r.int("LS_inactivity_millis", min: 0),
            keepaliveMillis: try r.int("LS_keepalive_millis", min: 0),
            sendSync: try r.bool("LS_send_sync"),
            reduceHead: try r.bool("LS_reduce_head"),
            cause: r.string("LS_cause"))
    }

    static func parseCreate(_ params: RequestParameters, combo extra: [ControlOperation]) throws(TLCPRequestError) -> CreateSessionRequest {
        let r = ParameterReader(params: params, requestId: nil)
        var combo: [ControlOperation] = []
        if params.contains("LS_op") {
            do {
                combo.append(try parseOperation(r))
            } catch {
                throw TLCPRequestError(code: 64, message: "Combined control request refused: \(error.message)")
            }
        }
        combo.append(contentsOf: extra)
        var diffs: [DiffFormat]?
        if let d = params["LS_supported_diffs"] {
            var list: [DiffFormat] = []
            for tag in d.split(separator: ",") {
                guard let f = DiffFormat(rawValue: tag.trimmingSpaces()) else {
                    throw r.error("Invalid LS_supported_diffs '\(d.prefix(40))'")
                }
                list.append(f)
            }
            diffs = list
        }
        return CreateSessionRequest(
            clientId: try r.required("LS_cid"),
            user: params["LS_user"],
            password: params["LS_password"],
            adapterSet: params["LS_adapter_set"],
            requestedMaxBandwidth: try r.parsed("LS_requested_max_bandwidth", RequestedBandwidth.init(wireValue:)),
            supportedDiffs: diffs,
            ttl: try r.parsed("LS_ttl_millis", RequestTTL.init(wireValue:)),
            oldSession: params["LS_old_session"],
            stream: try parseStream(r),
            comboOperations: combo)
    }

    static func parseBind(_ params: RequestParameters, http: Bool) throws(TLCPRequestError) -> BindSessionRequest {
        let r = ParameterReader(params: params, requestId: nil)
        if http { _ = try r.requiredNonEmpty("LS_session") }
        return BindSessionRequest(
            session: params["LS_session"],
            recoveryFrom: try r.int("LS_recovery_from", min: 0),
            stream: try parseStream(r))
    }

    static func parseControl(_ params: RequestParameters, http: Bool) throws(TLCPRequestError) -> ControlRequest {
        guard let reqId = params["LS_reqId"], !reqId.isEmpty else {
            throw TLCPRequestError(code: 67, message: "Missing parameter LS_reqId")
        }
        let r = ParameterReader(params: params, requestId: reqId)
        if http { _ = try r.requiredNonEmpty("LS_session") }
        return ControlRequest(
            requestId: reqId, session: params["LS_session"], operation: try parseOperation(r),
            ack: try r.bool("LS_ack"), cause: params["LS_cause"])
    }

    static func parseOperation(_ r: ParameterReader) throws(TLCPRequestError) -> ControlOperation {
        let op = try r.required("LS_op")
        switch op {
        case "add":
            return .add(
                SubscribeParameters(
                    subscriptionId: try r.requiredInt("LS_subId", min: 0),
                    mode: try r.requiredParsed("LS_mode", SubscriptionMode.init(rawValue:)),
                    group: try r.requiredNonEmpty("LS_group"),
                    schema: try r.requiredNonEmpty("LS_schema"),
                    dataAdapter: r.string("LS_data_adapter"),
                    selector: r.string("LS_selector"),
                    bufferSize: try r.parsed("LS_requested_buffer_size", RequestedBufferSize.init(wireValue:)),
                    maxFrequency: try r.parsed("LS_requested_max_frequency", RequestedFrequency.init(wireValue:)),
                    snapshot: try r.parsed("LS_snapshot", SnapshotRequest.init(wireValue:))))
        case "delete":
            return .delete(subscriptionId: try r.requiredInt("LS_subId", min: 0))
        case "reconf":
            return .reconf(
                subscriptionId: try r.requiredInt("LS_subId", min: 0),
                maxFrequency: try r.parsed("LS_requested_max_frequency", RequestedFrequency.init(wireValue:)))
        case "constrain":
            return .constrain(maxBandwidth: try r.parsed("LS_requested_max_bandwidth", RequestedBandwidth.init(wireValue:)))
        case "force_rebind":
            return .forceRebind(pollingMillis: try r.int("LS_polling_millis", min: 0), closeSocket: try r.bool("LS_close_socket"))
        case "destroy":
            return .destroy(
                causeCode: try r.int("LS_cause_code"), causeMessage: r.string("LS_cause_message"),
                closeSocket: try r.bool("LS_close_socket"))
        case "register":
            return .mpnRegister(
                MPNRegisterParameters(
                    platform: try r.requiredParsed("PN_type", MPNPlatform.init(rawValue:)),
                    applicationId: try r.requiredNonEmpty("PN_appId"),
                    deviceToken: try r.requiredNonEmpty("PN_deviceToken"),
                    newDeviceToken: r.string("PN_newDeviceToken")))
        case "reset_badge":
            return .mpnResetBadge(deviceId: try r.requiredNonEmpty("PN_deviceId"))
        case "activate":
            return .mpnActivate(
                MPNActivateParameters(
                    subscriptionId: try r.requiredInt("LS_subId", min: 0),
                    mode: try r.requiredParsed("LS_mode", SubscriptionMode.init(rawValue:)),
                    group: try r.requiredNonEmpty("LS_group"),
                    schema: try r.requiredNonEmpty("LS_schema"),
                    dataAdapter: r.string("LS_data_adapter"),
                    bufferSize: try r.parsed("LS_requested_buffer_size", RequestedBufferSize.init(wireValue:)),
                    maxFrequency: try r.parsed("LS_requested_max_frequency", RequestedFrequency.init(wireValue:)),
                    deviceId: try r.requiredNonEmpty("PN_deviceId"),
                    notificationFormat: try r.required("PN_notificationFormat"),
                    trigger: r.string("PN_trigger"),
                    coalescing: try r.bool("PN_coalescing"),
                    mpnSubscriptionId: r.string("PN_subscriptionId")))
        case "pn_reconf":
            return .mpnReconf(
                MPNReconfParameters(
                    deviceId: try r.requiredNonEmpty("PN_deviceId"),
                    mpnSubscriptionId: try r.requiredNonEmpty("PN_subscriptionId"),
                    mode: try r.parsed("LS_mode", SubscriptionMode.init(rawValue:)),
                    group: r.string("LS_group"),
                    schema: r.string("LS_schema"),
                    dataAdapter: r.string("LS_data_adapter"),
                    maxFrequency: try r.parsed("LS_requested_max_frequency", RequestedFrequency.init(wireValue:)),
                    notificationFormat: r.string("PN_notificationFormat"),
                    trigger: r.string("PN_trigger")))
        case "deactivate":
            let deviceId = try r.requiredNonEmpty("PN_deviceId")
            if let id = r.string("PN_subscriptionId") {
                guard !id.isEmpty else { throw r.error("Empty parameter PN_subscriptionId") }
                return .mpnDeactivate(deviceId: deviceId, target: .subscription(id))
            }
            if let status = try r.parsed("PN_subscriptionStatus", MPNSubscriptionStatusFilter.init(rawValue:)) {
                return .mpnDeactivate(deviceId: deviceId, target: .status(status))
            }
            return .mpnDeactivate(deviceId: deviceId, target: .all)
        default:
            throw r.error("Unknown LS_op '\(op.prefix(40))'")
        }
    }

    static func parseMessage(_ params: RequestParameters, http: Bool) throws(TLCPRequestError) -> MessageRequest {
        guard let reqId = params["LS_reqId"], !reqId.isEmpty else {
            throw TLCPRequestError(code: 67, message: "Missing parameter LS_reqId")
        }
        let r = ParameterReader(params: params, requestId: reqId)
        if http { _ = try r.requiredNonEmpty("LS_session") }
        let sequence = params["LS_sequence"]
        if let sequence {
            guard !sequence.isEmpty, sequence.utf8.allSatisfy({ PercentEncoding.isAlnum($0) || $0 == UInt8(ascii: "_") }) else {
                throw r.error("Invalid LS_sequence '\(sequence.prefix(40))': letters, digits and _ only")
            }
            guard sequence != MessageRequest.reservedSequence else {
                throw r.error("LS_sequence \(MessageRequest.reservedSequence) is reserved")
            }
        }
        let prog = try r.int("LS_msg_prog", min: 1)
        if sequence != nil, prog == nil { throw r.error("Missing parameter LS_msg_prog") }
        return MessageRequest(
            requestId: reqId, session: params["LS_session"], message: try r.required("LS_message"),
            sequence: sequence, progressive: prog, maxWait: try r.int("LS_max_wait", min: 0),
            ack: try r.bool("LS_ack"), outcome: try r.bool("LS_outcome"))
    }
}
