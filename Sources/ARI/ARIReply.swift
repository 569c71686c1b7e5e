/// A reply from a remote adapter: the request's id and method, then a success payload or an
/// error (docs/ARI.md, "Lines", "Methods" and "Error replies").
public struct ARIReply: Sendable, Hashable {
    public var id: String
    public var method: ARIMethod
    public var outcome: Outcome

    public enum Outcome: Sendable, Hashable {
        case success(ARIReplyPayload)
        case failure(ARIErrorReply)
    }

    public init(id: String, method: ARIMethod, outcome: Outcome) {
        self.id = id
        self.method = method
        self.outcome = outcome
    }

    /// The reply line.
    public func encode() -> String {
        var w = ARILineWriter(id: id, method: method.rawValue)
        switch outcome {
        case .failure(let e): e.write(to: &w)
        case .success(let p): p.write(to: &w)
        }
        return w.line
    }

    /// Reads the arguments of a reply to `method` (the reader stands after the method token).
    static func read(id: String, method: ARIMethod, _ r: inout ARIArgumentReader) throws(ARIProtocolError) -> ARIReply {
        if let first = r.peek, ARIErrorReply.isTag(first) {
            let e = try ARIErrorReply.read(from: &r)
            try r.finish()
            return ARIReply(id: id, method: method, outcome: .failure(e))
        }
        let payload = try ARIReplyPayload.read(method: method, &r)
        try r.finish()
        return ARIReply(id: id, method: method, outcome: .success(payload))
    }
}

/// What a successful reply carries, by method.
public enum ARIReplyPayload: Sendable, Hashable {
    /// `V`: SUB, USB, NNS, NSC, NUM, NNT, NTC, MDA, MSA, MDC.
    case void
    /// DPI/MPI: the version the remote settled on; nil for a bare `V` (a 1.8.0 remote).
    case initialized(version: String?)
    /// NUS/NUA: the session's bandwidth cap in kbit/s (0 = none) and whether the remote wants
    /// NNT/NTC for the user's sessions.
    case userAuthorization(maxBandwidth: Double, wantsTablesNotification: Bool)
    /// NNS in 1.9: how long the session may live, in seconds (≤ 0 = no limit).
    case sessionTimeToLive(seconds: Int)
    /// NNT in 1.9.
    case tablesNotificationOptions(enableUnsubscription: Bool, wantsFinalStatistics: Bool)
    /// GIS (items) and GSC (fields).
    case names([String])
    /// GIT, one per requested item in order.
    case itemData([ARIItemData])
    /// GUI, one per requested item in order.
    case userItemData([ARIUserItemData])

    func write(to w: inout ARILineWriter) {
        switch self {
        case .void:
            w.raw("V")
        case .initialized(let version):
            if let version {
                w.string(ARIInitParameters.versionKey)
                w.string(version)
            } else {
                w.raw("V")
            }
        case .userAuthorization(let bandwidth, let wants):
            w.append(.double(bandwidth))
            w.append(.boolean(wants))
        case .sessionTimeToLive(let seconds):
            w.integer(seconds)
        case .tablesNotificationOptions(let unsubscription, let statistics):
            w.append(.boolean(unsubscription))
            w.append(.boolean(statistics))
        case .names(let names):
            for n in names { w.string(n) }
        case .itemData(let data):
            for d in data {
                w.integer(d.distinctSnapshotLength)
                w.append(.double(d.minSourceFrequency))
                w.append(.modes(d.modes))
            }
        case .userItemData(let data):
            for d in data {
                w.integer(d.allowedBufferSize)
                w.append(.double(d.allowedMaxFrequency))
                w.append(.modes(d.allowedModes))
            }
        }
    }

    static func read(method: ARIMethod, _ r: inout ARIArgumentReader) throws(ARIProtocolError) -> ARIReplyPayload {
        let isVoid = r.remaining == 1 && r.peek == "V"
        switch method {
        case .dataInit, .metadataInit:
            if isVoid {
                _ = try r.token("V")
                return .initialized(version: nil)
            }
            let pairs = try r.pairsToEnd()
            guard let version = pairs.first(where: { $0.name == ARIInitParameters.versionKey })?.value ?? nil else {
                throw .missingArgument(expected: ARIInitParameters.versionKey)
            }
            return .initialized(version: version)
        case .subscribe, .unsubscribe, .notifySessionClose, .notifyUserMessage, .notifyTablesClose,
            .mpnDeviceAccess, .mpnSubscriptionActivation, .mpnDeviceTokenChange:
            _ = try Self.void(&r)
            return .void
        case .notifyNewSession:
            if isVoid { return try Self.void(&r) }
            return .sessionTimeToLive(seconds: try r.integer())
        case .notifyNewTables:
            if isVoid { return try Self.void(&r) }
            return .tablesNotificationOptions(enableUnsubscription: try r.boolean(), wantsFinalStatistics: try r.boolean())
        case .notifyUser, .notifyUserAuth:
            return .userAuthorization(maxBandwidth: try r.double(), wantsTablesNotification: try r.boolean())
        case .getItems, .getSchema:
            var names: [String] = []
            while !r.isAtEnd { names.append(try r.nonNullString("name")) }
            return .names(names)
        case .getItemData:
            var data: [ARIItemData] = []
            while !r.isAtEnd {
                data.append(
                    ARIItemData(
                        distinctSnapshotLength: try r.integer(), minSourceFrequency: try r.double(),
                        modes: try r.modes() ?? []))
            }
            return .itemData(data)
        case .getUserItemData:
            var data: [ARIUserItemData] = []
            while !r.isAtEnd {
                data.append(
                    ARIUserItemData(
                        allowedBufferSize: try r.integer(), allowedMaxFrequency: try r.double(),
                        allowedModes: try r.modes() ?? []))
            }
            return .userItemData(data)
        default:
            throw .unexpectedMethod(method.rawValue)
        }
    }

    private static func void(_ r: inout ARIArgumentReader) throws(ARIProtocolError) -> ARIReplyPayload {
        let t = try r.token("V")
        guard t == "V" else { throw .unexpectedType(expected: "V", found: String(t)) }
        return .void
    }
}

/// GIT reply for one item: static properties of the item.
public struct ARIItemData: Sendable, Hashable {
    /// Events kept for a DISTINCT snapshot (0 = none).
    public var distinctSnapshotLength: Int
    /// The item's own update rate limit, per second (0 = none).
    public var minSourceFrequency: Double
    /// The modes that may ever be allowed for the item.
    public var modes: ARIModes

    public init(distinctSnapshotLength: Int, minSourceFrequency: Double, modes: ARIModes) {
        self.distinctSnapshotLength = distinctSnapshotLength
        self.minSourceFrequency = minSourceFrequency
        self.modes = modes
    }
}

/// GUI reply for one item: what one user may do with it.
public struct ARIUserItemData: Sendable, Hashable {
    /// Buffer size for the user's subscriptions (0 = unlimited).
    public var allowedBufferSize: Int
    /// Updates per second the user may receive (0 = no limit).
    public var allowedMaxFrequency: Double
    /// Modes allowed to this user.
    public var allowedModes: ARIModes

    public init(allowedBufferSize: Int, allowedMaxFrequency: Double, allowedModes: ARIModes) {
        self.allowedBufferSize = allowedBufferSize
        self.allowedMaxFrequency = allowedMaxFrequency
        self.allowedModes = allowedModes
    }
}
