/// Typed values of TLCP request parameters and notification arguments.

/// `LS_mode`.
public enum SubscriptionMode: String, Sendable, Hashable, CaseIterable {
    case raw = "RAW"
    case merge = "MERGE"
    case distinct = "DISTINCT"
    case command = "COMMAND"
}

/// `LS_snapshot`: `true`, `false` or a length (DISTINCT only).
public enum SnapshotRequest: Sendable, Hashable {
    case no
    case yes
    case length(Int)

    public var wireValue: String {
        switch self {
        case .no: return "false"
        case .yes: return "true"
        case .length(let n): return String(n)
        }
    }

    public init?(wireValue: String) {
        switch wireValue {
        case "true": self = .yes
        case "false": self = .no
        default:
            guard let n = Int(decimalDigits: wireValue), n > 0 else { return nil }
            self = .length(n)
        }
    }
}

/// `LS_requested_max_frequency`.
public enum RequestedFrequency: Sendable, Hashable {
    case unlimited
    case unfiltered
    /// Updates per second, > 0.
    case limited(Double)

    public var wireValue: String {
        switch self {
        case .unlimited: return "unlimited"
        case .unfiltered: return "unfiltered"
        case .limited(let f): return formatDecimal(f)
        }
    }

    public init?(wireValue: String) {
        switch wireValue {
        case "unlimited": self = .unlimited
        case "unfiltered": self = .unfiltered
        default:
            guard let f = parseDecimal(wireValue), f > 0 else { return nil }
            self = .limited(f)
        }
    }
}

/// `LS_requested_buffer_size`.
public enum RequestedBufferSize: Sendable, Hashable {
    case unlimited
    case size(Int)

    public var wireValue: String {
        switch self {
        case .unlimited: return "unlimited"
        case .size(let n): return String(n)
        }
    }

    public init?(wireValue: String) {
        if wireValue == "unlimited" {
            self = .unlimited
            return
        }
        guard let n = Int(decimalDigits: wireValue), n > 0 else { return nil }
        self = .size(n)
    }
}

/// `LS_requested_max_bandwidth` (kbps).
public enum RequestedBandwidth: Sendable, Hashable {
    case unlimited
    case kbps(Double)

    public var wireValue: String {
        switch self {
        case .unlimited: return "unlimited"
        case .kbps(let k): return formatDecimal(k)
        }
    }

    public init?(wireValue: String) {
        if wireValue == "unlimited" {
            self = .unlimited
            return
        }
        guard let k = parseDecimal(wireValue), k > 0 else { return nil }
        self = .kbps(k)
    }
}

/// `CONS` argument: the bandwidth the server granted.
public enum BandwidthConstraint: Sendable, Hashable {
    case unlimited
    /// The client may not limit the bandwidth.
    case unmanaged
    case kbps(Double)

    public var wireValue: String {
        switch self {
        case .unlimited: return "unlimited"
        case .unmanaged: return "unmanaged"
        case .kbps(let k): return formatDecimal(k)
        }
    }

    public init?(wireValue: String) {
        switch wireValue {
        case "unlimited": self = .unlimited
        case "unmanaged": self = .unmanaged
        default:
            guard let k = parseDecimal(wireValue), k >= 0 else { return nil }
            self = .kbps(k)
        }
    }
}

/// `CONF` second argument.
public enum GrantedFrequency: Sendable, Hashable {
    case unlimited
    case limited(Double)

    public var wireValue: String {
        switch self {
        case .unlimited: return "unlimited"
        case .limited(let f): return formatDecimal(f)
        }
    }

    public init?(wireValue: String) {
        if wireValue == "unlimited" {
            self = .unlimited
            return
        }
        guard let f = parseDecimal(wireValue), f >= 0 else { return nil }
        self = .limited(f)
    }
}

/// `LS_ttl_millis`.
public enum RequestTTL: Sendable, Hashable {
    case unknown
    case unlimited
    case millis(Int)

    public var wireValue: String {
        switch self {
        case .unknown: return "unknown"
        case .unlimited: return "unlimited"
        case .millis(let m): return String(m)
        }
    }

    public init?(wireValue: String) {
        switch wireValue {
        case "unknown": self = .unknown
        case "unlimited": self = .unlimited
        default:
            guard let m = Int(decimalDigits: wireValue) else { return nil }
            self = .millis(m)
        }
    }
}

/// `PN_type`.
public enum MPNPlatform: String, Sendable, Hashable, CaseIterable {
    case apple = "Apple"
    case google = "Google"
}

/// `PN_subscriptionStatus` on deactivate.
public enum MPNSubscriptionStatusFilter: String, Sendable, Hashable, CaseIterable {
    case active = "ACTIVE"
    case triggered = "TRIGGERED"
}

/// The diff formats a client accepts (`LS_supported_diffs`).
public enum DiffFormat: String, Sendable, Hashable, CaseIterable {
    /// `^P`: RFC 6902 JSON Patch.
    case jsonPatch = "P"
    /// `^T`: TLCP-diff.
    case tlcpDiff = "T"
}

// MARK: - Number helpers

extension Int {
    /// Parses an optional `-` followed by 1–18 ASCII digits (no `+`, no spaces, no overflow).
    init?(decimalDigits s: some StringProtocol) {
        var utf8 = Substring(s).utf8[...]
        var negative = false
        if utf8.first == UInt8(ascii: "-") {
            negative = true
            utf8 = utf8.dropFirst()
        }
        guard !utf8.isEmpty, utf8.count <= 18 else { return nil }
        var v = 0
        for b in utf8 {
            guard b >= 0x30 && b <= 0x39 else { return nil }
            v = v * 10 + Int(b - 0x30)
        }
        self = negative ? -v : v
    }
}

/// Parses a plain decimal number with a dot (`40`, `1.0`, `0.5`): no exponent, no sign, no
/// `inf`/`nan`.
func parseDecimal(_ s: String) -> Double? {
    let utf8 = s.utf8
    // 400: the plain form `formatDecimal` writes for any finite double fits (the longest, a
    // subnormal's, has 342 characters), so every value this side writes reads back.
    guard !utf8.isEmpty, utf8.count <= 400 else { return nil }
    var dots = 0
    var digits = 0
    for b in utf8 {
        if b == UInt8(ascii: ".") { dots += 1 } else if b >= 0x30 && b <= 0x39 { digits += 1 } else { return nil }
    }
    guard dots <= 1, digits > 0, let value = Double(s), value.isFinite else { return nil }
    // (Past 1.8e308, digits alone read as infinity: refused, not granted as `inf`.)
    return value
}

/// Formats a decimal the way the protocol writes it: `40` for whole numbers, `1.5` otherwise,
/// and never with an exponent, which `parseDecimal` (and the protocol) does not read: Swift
/// writes 1e16 and above, and below 1e-4, as `d.ddde±XX`, so those are written out in full.
func formatDecimal(_ d: Double) -> String {
    // A plain conversion (in range thanks to the guard) rather than rounded() or
    // Int64(exactly:), which call libm: the module must link without it.
    if d.isFinite, abs(d) < 1e15, Double(Int64(d)) == d { return String(Int64(d)) }
    let text = String(d)
    guard d.isFinite, let e = text.utf8.firstIndex(where: { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) else {
        return text
    }
    return withoutExponent(mantissa: text[..<e], exponent: Int(text[text.utf8.index(after: e)...]) ?? 0)
}

/// `mantissa` × 10^`exponent` (the shortest form Swift wrote: `-d.ddd`) in plain decimal
/// digits: the same value, so it reads back to the same double.
private func withoutExponent(mantissa: Substring, exponent: Int) -> String {
    let negative = mantissa.hasPrefix("-")
    let unsigned = negative ? mantissa.dropFirst() : mantissa
    let parts = unsigned.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
    let whole = parts.first.map(String.init) ?? ""
    let digits = whole + (parts.count > 1 ? String(parts[1]) : "")
    // Where the point goes in `digits`, clamped to what a double's exponent allows.
    let point = max(-400, min(400, whole.count + exponent))
    var out = negative ? "-" : ""
    if point >= digits.count {
        out += digits + String(repeating: "0", count: point - digits.count)
    } else if point <= 0 {
        out += "0." + String(repeating: "0", count: -point) + digits
    } else {
        out += digits.prefix(point) + "." + digits.dropFirst(point)
    }
    return out
}
