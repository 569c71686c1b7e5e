/// Every ARI method this codec knows, by its wire name (docs/ARI.md, "Methods").
public enum ARIMethod: String, Sendable, Hashable, CaseIterable {
    // Connection
    /// `RAC`: the remote's credentials and capabilities, its first line.
    case remoteCredentials = "RAC"
    /// `CLOSE`: the proxy asks the remote to stop (always id `0`).
    case close = "CLOSE"
    /// `KEEPALIVE`: a bare line from the remote.
    case keepalive = "KEEPALIVE"
    // Data Adapter
    case dataInit = "DPI"
    case subscribe = "SUB"
    case unsubscribe = "USB"
    case update = "UD3"
    case endOfSnapshot = "EOS"
    case clearSnapshot = "CLS"
    case failure = "FAL"
    case diffOrders = "DFD"
    // Metadata Adapter
    case metadataInit = "MPI"
    case notifyUser = "NUS"
    case notifyUserAuth = "NUA"
    case notifyNewSession = "NNS"
    case notifySessionClose = "NSC"
    case getItems = "GIS"
    case getSchema = "GSC"
    case getItemData = "GIT"
    case getUserItemData = "GUI"
    case notifyUserMessage = "NUM"
    case notifyNewTables = "NNT"
    case notifyTablesClose = "NTC"
    case mpnDeviceAccess = "MDA"
    case mpnSubscriptionActivation = "MSA"
    case mpnDeviceTokenChange = "MDC"

    /// Whether the proxy sends this method as a request that the remote answers.
    public var isRequest: Bool {
        switch self {
        case .remoteCredentials, .close, .keepalive, .update, .endOfSnapshot, .clearSnapshot, .failure, .diffOrders:
            return false
        default:
            return true
        }
    }

    /// Whether the method belongs to a Metadata Adapter connection (else data or both).
    public var isMetadata: Bool {
        switch self {
        case .metadataInit, .notifyUser, .notifyUserAuth, .notifyNewSession, .notifySessionClose, .getItems,
            .getSchema, .getItemData, .getUserItemData, .notifyUserMessage, .notifyNewTables, .notifyTablesClose,
            .mpnDeviceAccess, .mpnSubscriptionActivation, .mpnDeviceTokenChange:
            return true
        default:
            return false
        }
    }
}

/// An ARI protocol version (`1.8.3`, `1.9.1`).
public struct ARIVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var major: Int
    public var minor: Int
    public var patch: Int

    public init(_ major: Int, _ minor: Int, _ patch: Int) {
        self.major = major
        self.minor = minor
        self.patch = patch
    }

    /// `a.b.c` with one or two digits each; anything else is nil.
    public init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var numbers: [Int] = []
        for p in parts {
            guard (1...2).contains(p.utf8.count), p.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let n = Int(p) else { return nil }
            numbers.append(n)
        }
        self.init(numbers[0], numbers[1], numbers[2])
    }

    public var description: String { "\(major).\(minor).\(patch)" }

    public static func < (a: ARIVersion, b: ARIVersion) -> Bool {
        (a.major, a.minor, a.patch) < (b.major, b.minor, b.patch)
    }

    /// What this server announces in every init.
    public static let announced = ARIVersion(1, 9, 1)
    /// The oldest version a remote may settle on: a remote that answers the init with a bare `V`.
    public static let oldestSupported = ARIVersion(1, 8, 0)
    /// From this version on, the proxy may send `CLOSE` after the init.
    public static let closeSupported = ARIVersion(1, 8, 3)
}

/// The two syntaxes of the versions this server speaks (docs/ARI.md, "Versions and dialects").
public enum ARIDialect: Sendable, Hashable {
    /// 1.8.0 to 1.8.3 (the Python SDK): 14-token tables, `Y` byte values, `V` replies only.
    case v1_8
    /// 1.9.0 and 1.9.1 (Java, .NET, Node SDKs): tables with data adapter and item list,
    /// NTC statistics, extended NNS/NNT replies.
    case v1_9

    /// The dialect of a version the remote settled on; nil for a version outside 1.8.0…1.9.x.
    public init?(_ version: ARIVersion) {
        guard version >= .oldestSupported, version.major == 1, version.minor <= 9 else { return nil }
        self = version.minor >= 9 ? .v1_9 : .v1_8
    }
}
