/// Client-side encoding of requests: parameter lines, WS messages, HTTP paths and bodies.
/// Parameters go out in the order official clients use, so traces compare easily.

extension TLCPRequest {
    /// The request's parameters in wire order (empty for `wsok` and a session-less heartbeat).
    public var parameters: RequestParameters {
        switch self {
        case .createSession(let r): return r.parameters
        case .bindSession(let r): return r.parameters
        case .control(let r): return r.parameters
        case .message(let r): return r.parameters
        case .heartbeat(let r):
            var p = RequestParameters()
            p.append("LS_session", r.session)
            return p
        case .wsok: return RequestParameters()
        }
    }

    /// The encoded parameter line (without CR-LF).
    public var encodedLine: String { parameters.encoded }
}

extension CreateSessionRequest {
    public var parameters: RequestParameters {
        var p = RequestParameters()
        p.append("LS_ttl_millis", ttl?.wireValue)
        if stream.polling { p.append("LS_polling", "true") }
        p.append("LS_polling_millis", stream.pollingMillis.map(String.init))
        p.append("LS_idle_millis", stream.idleMillis.map(String.init))
        p.append("LS_keepalive_millis", stream.keepaliveMillis.map(String.init))
        p.append("LS_inactivity_millis", stream.inactivityMillis.map(String.init))
        p.append("LS_requested_max_bandwidth", requestedMaxBandwidth?.wireValue)
        p.append("LS_adapter_set", adapterSet)
        p.append("LS_user", user)
        p.append("LS_cid", clientId)
        p.append("LS_old_session", oldSession)
        p.append("LS_content_length", stream.contentLength.map(String.init))
        p.append("LS_supported_diffs", supportedDiffs.map { $0.map(\.rawValue).joined(separator: ",") })
        p.append("LS_reduce_head", stream.reduceHead.map { $0 ? "true" : "false" })
        p.append("LS_send_sync", stream.sendSync.map { $0 ? "true" : "false" })
        p.append("LS_cause", stream.cause)
        // The first combo operation rides on the create line; the others get lines of their own.
        if let first = comboOperations.first {
            for (name, value) in first.parameters.pairs { p.append(name, value) }
        }
        p.append("LS_password", password)
        return p
    }
}

extension BindSessionRequest {
    public var parameters: RequestParameters {
        var p = RequestParameters()
        p.append("LS_session", session)
        p.append("LS_recovery_from", recoveryFrom.map(String.init))
        p.append("LS_content_length", stream.contentLength.map(String.init))
        if stream.polling { p.append("LS_polling", "true") }
        p.append("LS_polling_millis", stream.pollingMillis.map(String.init))
        p.append("LS_idle_millis", stream.idleMillis.map(String.init))
        p.append("LS_keepalive_millis", stream.keepaliveMillis.map(String.init))
        p.append("LS_inactivity_millis", stream.inactivityMillis.map(String.init))
        p.append("LS_reduce_head", stream.reduceHead.map { $0 ? "true" : "false" })
        p.append("LS_send_sync", stream.sendSync.map { $0 ? "true" : "false" })
        p.append("LS_cause", stream.cause)
        return p
    }
}

extension ControlRequest {
    public var parameters: RequestParameters {
        var p = RequestParameters()
        p.append("LS_session", session)
        p.append("LS_reqId", requestId)
        for (name, value) in operation.parameters.pairs { p.append(name, value) }
        p.append("LS_ack", ack.map { $0 ? "true" : "false" })
        p.append("LS_cause", cause)
        return p
    }
}

extension ControlOperation {
    /// `LS_op` and the operation's own parameters.
    public var parameters: RequestParameters {
        var p = RequestParameters()
        p.append("LS_op", opName)
        switch self {
        case .add(let s):
            p.append("LS_subId", String(s.subscriptionId))
            p.append("LS_mode", s.mode.rawValue)
            p.append("LS_group", s.group)
            p.append("LS_schema", s.schema)
            p.append("LS_data_adapter", s.dataAdapter)
            p.append("LS_selector", s.selector)
            p.append("LS_snapshot", s.snapshot?.wireValue)
            p.append("LS_requested_buffer_size", s.bufferSize?.wireValue)
            p.append("LS_requested_max_frequency", s.maxFrequency?.wireValue)
        case .delete(let id):
            p.append("LS_subId", String(id))
        case .reconf(let id, let freq):
            p.append("LS_subId", String(id))
            p.append("LS_requested_max_frequency", freq?.wireValue)
        case .constrain(let bw):
            p.append("LS_requested_max_bandwidth", bw?.wireValue)
        case .forceRebind(let polling, let close):
            p.append("LS_polling_millis", polling.map(String.init))
            p.append("LS_close_socket", close.map { $0 ? "true" : "false" })
        case .destroy(let code, let message, let close):
            p.append("LS_close_socket", close.map { $0 ? "true" : "false" })
            p.append("LS_cause_code", code.map(String.init))
            p.append("LS_cause_message", message)
        case .mpnRegister(let r):
            p.append("PN_type", r.platform.rawValue)
            p.append("PN_appId", r.applicationId)
            p.append("PN_deviceToken", r.deviceToken)
            p.append("PN_newDeviceToken", r.newDeviceToken)
        case .mpnResetBadge(let deviceId):
            p.append("PN_deviceId", deviceId)
        case .mpnActivate(let a):
            p.append("LS_subId", String(a.subscriptionId))
            p.append("LS_mode", a.mode.rawValue)
            p.append("LS_group", a.group)
            p.append("LS_schema", a.schema)
            p.append("LS_data_adapter", a.dataAdapter)
            p.append("LS_requested_buffer_size", a.bufferSize?.wireValue)
            p.append("LS_requested_max_frequency", a.maxFrequency?.wireValue)
            p.append("PN_deviceId", a.deviceId)
            p.append("PN_notificationFormat", a.notificationFormat)
            p.append("PN_trigger", a.trigger)
            p.append("PN_coalescing", a.coalescing.map { $0 ? "true" : "false" })
            p.append("PN_subscriptionId", a.mpnSubscriptionId)
        case .mpnReconf(let r):
            p.append("LS_mode", r.mode?.rawValue)
            p.append("LS_group", r.group)
            p.append("LS_schema", r.schema)
            p.append("LS_data_adapter", r.dataAdapter)
            p.append("LS_requested_max_frequency", r.maxFrequency?.wireValue)
            p.append("PN_deviceId", r.deviceId)
            p.append("PN_subscriptionId", r.mpnSubscriptionId)
            p.append("PN_notificationFormat", r.notificationFormat)
            p.append("PN_trigger", r.trigger)
        case .mpnDeactivate(let deviceId, let target):
            p.append("PN_deviceId", deviceId)
            switch target {
            case .subscription(let id): p.append("PN_subscriptionId", id)
            case .status(let s): p.append("PN_subscriptionStatus", s.rawValue)
            case .all: break
            }
        }
        return p
    }
}

extension MessageRequest {
    public var parameters: RequestParameters {
        var p = RequestParameters()
        p.append("LS_session", session)
        p.append("LS_reqId", requestId)
        p.append("LS_message", message)
        p.append("LS_outcome", outcome.map { $0 ? "true" : "false" })
        p.append("LS_sequence", sequence)
        p.append("LS_msg_prog", progressive.map(String.init))
        p.append("LS_max_wait", maxWait.map(String.init))
        p.append("LS_ack", ack.map { $0 ? "true" : "false" })
        return p
    }
}

/// Builds whole WS messages and HTTP requests from typed requests.
public enum TLCPRequestEncoder {
    /// The lines a request occupies: one, except a create carrying more than one combo control.
    public static func lines(of request: TLCPRequest) -> [String] {
        var lines = [request.encodedLine]
        if case .createSession(let c) = request {
            for op in c.comboOperations.dropFirst() { lines.append(op.parameters.encoded) }
        }
        return lines
    }

    /// One WS text message: the request name, CR-LF, then one parameter line per request.
    /// All requests must have the same name (a batch). `wsok` is the bare name; a heartbeat
    /// without parameters still ends with CR-LF and an empty line.
    public static func webSocketMessage(_ requests: [TLCPRequest]) -> String {
        guard let first = requests.first else { return "" }
        if case .wsok = first { return "wsok" }
        var out = first.name.rawValue
        for r in requests {
            for line in lines(of: r) {
                out.append("\r\n")
                out.append(line)
            }
        }
        // A lone empty parameter line must still be visible: `heartbeat\r\n\r\n`.
        if out.utf8.last == UInt8(ascii: "\n") { out.append("\r\n") }
        return out
    }

    public static func webSocketMessage(_ request: TLCPRequest) -> String { webSocketMessage([request]) }

    /// The HTTP body of a batch: one line per request, CR-LF separated, no trailing CR-LF
    /// (a request with no parameters, like a heartbeat, is the body `\r\n`).
    public static func httpBody(_ requests: [TLCPRequest]) -> String {
        let all = requests.flatMap(lines(of:))
        if all.count == 1 && all[0].isEmpty { return "\r\n" }
        return all.joined(separator: "\r\n")
    }

    /// The HTTP request target, e.g. `/lightstreamer/control.txt?LS_protocol=TLCP-2.5.0&LS_session=S1`.
    /// `prefix` is the path of the server address (e.g. `/Prefix`), without a trailing slash.
    public static func httpTarget(
        name: TLCPRequestName, prefix: String = "", version: TLCPVersion = .current,
        session: String? = nil
    ) -> String {
        var target = prefix + "/lightstreamer/" + name.httpFileName + "?LS_protocol=" + version.protocolName
        if let session { target += "&LS_session=" + PercentEncoding.encodeRequestValue(session) }
        return target
    }
}
