/// A TLCP protocol version, `major.minor.patch`, as written in `LS_protocol=TLCP-2.5.0`
/// or in the WebSocket subprotocol `TLCP-2.5.0.lightstreamer.com`.
public struct TLCPVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    // Stored in 32 bits each: every server session and WebSocket keeps one, 12 bytes so
    // instead of 24. Parsed parts have at most six digits (`init?(protocolName:)`); other
    // values are clamped to 0…UInt32.max.
    private var storedMajor: UInt32
    private var storedMinor: UInt32
    private var storedPatch: UInt32

    public var major: Int {
        get { Int(storedMajor) }
        set { storedMajor = UInt32(clamping: newValue) }
    }
    public var minor: Int {
        get { Int(storedMinor) }
        set { storedMinor = UInt32(clamping: newValue) }
    }
    public var patch: Int {
        get { Int(storedPatch) }
        set { storedPatch = UInt32(clamping: newValue) }
    }

    public init(_ major: Int, _ minor: Int, _ patch: Int = 0) {
        self.storedMajor = UInt32(clamping: major)
        self.storedMinor = UInt32(clamping: minor)
        self.storedPatch = UInt32(clamping: patch)
    }

    public static let v2_0 = TLCPVersion(2, 0, 0)
    public static let v2_1 = TLCPVersion(2, 1, 0)
    public static let v2_2 = TLCPVersion(2, 2, 0)
    public static let v2_3 = TLCPVersion(2, 3, 0)
    public static let v2_4 = TLCPVersion(2, 4, 0)
    public static let v2_5 = TLCPVersion(2, 5, 0)

    /// The newest version this implementation speaks.
    public static let current = v2_5
    /// The oldest version this implementation accepts.
    public static let oldestSupported = v2_0

    /// `TLCP-2.5.0`, the value of `LS_protocol`.
    public var protocolName: String { "TLCP-\(major).\(minor).\(patch)" }
    /// `TLCP-2.5.0.lightstreamer.com`, the WebSocket subprotocol.
    public var webSocketSubprotocol: String { protocolName + ".lightstreamer.com" }
    public var description: String { protocolName }

    /// Parses `TLCP-2.5.0` (the `LS_protocol` value). Returns nil for anything else.
    public init?(protocolName: some StringProtocol) {
        guard protocolName.hasPrefix("TLCP-") else { return nil }
        let numbers = protocolName.dropFirst(5).split(separator: ".", omittingEmptySubsequences: false)
        guard numbers.count == 3 || numbers.count == 2 else { return nil }
        var parts: [Int] = []
        for n in numbers {
            guard !n.isEmpty, n.count <= 6, n.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let v = Int(n) else { return nil }
            parts.append(v)
        }
        self.init(parts[0], parts[1], parts.count == 3 ? parts[2] : 0)
    }

    /// Parses `TLCP-2.5.0.lightstreamer.com` (a WebSocket subprotocol token).
    public init?(webSocketSubprotocol: some StringProtocol) {
        let suffix = ".lightstreamer.com"
        guard webSocketSubprotocol.hasSuffix(suffix) else { return nil }
        self.init(protocolName: webSocketSubprotocol.dropLast(suffix.count))
    }

    public static func < (lhs: TLCPVersion, rhs: TLCPVersion) -> Bool {
        (lhs.major, lhs.minor, lhs.patch) < (rhs.major, rhs.minor, rhs.patch)
    }

    /// Whether a server speaking `current` can serve a client that declared this version.
    /// A server supports every older 2.x version; a subminor difference alone needs no upgrade.
    public var isSupported: Bool {
        major == 2 && self >= Self.oldestSupported && TLCPVersion(major, minor) <= TLCPVersion(Self.current.major, Self.current.minor)
    }

    /// Whether this version has the given feature.
    public func supports(_ feature: TLCPFeature) -> Bool {
        TLCPVersion(major, minor) >= feature.introducedIn
    }

    /// Every feature this version has.
    public var features: [TLCPFeature] { TLCPFeature.allCases.filter { supports($0) } }

    /// Picks the version to speak with a client that offered the given WebSocket subprotocols:
    /// the highest supported one, or nil when none is acceptable.
    public static func negotiate(webSocketSubprotocols offered: [String]) -> TLCPVersion? {
        offered
            .compactMap { TLCPVersion(webSocketSubprotocol: $0.trimmingSpaces()) }
            .filter(\.isSupported)
            .max()
    }
}

/// Protocol features that appeared after TLCP 2.0, as data a server can query to decide what it
/// may send to a client of a given version.
public enum TLCPFeature: String, Sendable, CaseIterable {
    /// `LS_recovery_from`, `PROG`, CONERR 4.
    case sessionRecovery
    /// `wsok`/`WSOK`; control on WS straight after create/bind without `LS_session`.
    case wsok
    /// CONERR 5, 6 and 70 may be sent (older clients get a generic code instead).
    case extendedCreateErrors
    /// `LS_ttl_millis` on create.
    case ttl
    /// `LS_reduce_head`.
    case reduceHead
    /// `LS_op=pn_reconf` with `MPNCONF` and REQERR 56.
    case mpnReconf
    /// REQERR code 3 (session protocol cannot serve the request).
    case requestErrorCode3
    /// `LS_ack=false` on add/delete over WS.
    case ackSuppression
    /// `^P` JSON Patch and `^T` TLCP-diff field values, `LS_supported_diffs`.
    case diffs
    /// `MSGDONE` carries a third argument, the Metadata Adapter's response.
    case messageResponse

    public var introducedIn: TLCPVersion {
        switch self {
        case .sessionRecovery: return .v2_1
        case .wsok, .extendedCreateErrors, .ttl, .reduceHead: return .v2_2
        case .mpnReconf, .requestErrorCode3, .ackSuppression: return .v2_3
        case .diffs: return .v2_4
        case .messageResponse: return .v2_5
        }
    }
}

extension StringProtocol {
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }
}
