extension StringProtocol {
    /// The text as it may appear in a log line when it comes from outside (a user name, an
    /// item name, a client's cause message, an error that quotes a request): control
    /// characters, line and paragraph separators and backslashes are escaped (`\n`, `\u{1B}`),
    /// so that no value can end a log line and forge the next one, and the result is cut at
    /// `limit` characters (marked with `…`).
    public func logEscaped(limit: Int = 256) -> String {
        var out = ""
        var count = 0
        for scalar in unicodeScalars {
            if count >= limit {
                out += "…"
                break
            }
            count += 1
            switch scalar {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\"": out += "\\\""
            default:
                if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "\u{2028}" || scalar == "\u{2029}" {
                    out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
