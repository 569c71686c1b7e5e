import NIOHTTP1

/// `GET /health/live` and `GET /health/ready` (also HEAD), on the main listener and on the
/// admin listener: 200 or 503 with a small JSON body naming the node, e.g.
/// `{"status":"not ready","node":"a","reasons":["draining"]}`.
enum HealthEndpoint {
    static let livePath = "/health/live"
    static let readyPath = "/health/ready"

    /// The answer for `path`, or nil when it is not a health path.
    static func response(path: Substring, health: ServerHealth, nodeName: String?) -> (HTTPResponseStatus, String)? {
        if path == livePath {
            return (.ok, body(status: "live", nodeName: nodeName, reasons: []))
        }
        guard path == readyPath else { return nil }
        let r = health.readiness
        return r.ready
            ? (.ok, body(status: "ready", nodeName: nodeName, reasons: []))
            : (.serviceUnavailable, body(status: "not ready", nodeName: nodeName, reasons: r.reasons))
    }

    static let contentType = "application/json; charset=utf-8"

    private static func body(status: String, nodeName: String?, reasons: [String]) -> String {
        var out = "{\"status\":\(quoted(status))"
        if let nodeName { out += ",\"node\":\(quoted(nodeName))" }
        if !reasons.isEmpty { out += ",\"reasons\":[" + reasons.map(quoted).joined(separator: ",") + "]" }
        return out + "}\n"
    }

    /// A JSON string: quotes, backslashes and control characters escaped.
    private static func quoted(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where u.value < 0x20:
                let hex = String(u.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }
}
