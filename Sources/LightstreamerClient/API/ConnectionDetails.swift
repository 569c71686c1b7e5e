import Foundation
#if canImport(Security)
import Security
#endif

/// Where and as whom a `LightstreamerClient` connects (docs/protocol/CLIENT-API.md §5), plus what
/// the server told about the session.
/// `@unchecked Sendable`: every mutable property is only touched under `lock`.
public final class ConnectionDetails: CustomStringConvertible, @unchecked Sendable {
    private let lock = Lock()
    private var address: String?
    private var adapter: String?
    private var userName: String?
    private var secret: String?
    private var session: String?
    private var instanceAddress: String?
    private var socketName: String?
    private var ip: String?
    private var pins: [SecKey] = []
    private var pinValues = CertificatePins([])
    private var extraRoots: [String] = []
    weak var core: ClientCore?

    init() {}

    /// Checks an address as the setter does; traps with the documented messages.
    static func validate(_ address: String) {
        switch ServerAddress.parse(address) {
        case .success: return
        case .failure(.malformed): preconditionFailure("serverAddress is malformed")
        case .failure(.badScheme): preconditionFailure("serverAddress scheme must be http or https")
        case .failure(.hasQuery): preconditionFailure("serverAddress must not have query")
        }
    }

    /// Sets a value under the lock; fires the property event when it changed.
    private func update(_ name: String, _ change: () -> Bool) {
        if lock.withLock(change) { core?.optionChanged(name) }
    }

    /// `http[s]://host[:port][/prefix]`. Precondition: well formed, http/https, no query.
    public var serverAddress: String? {
        get { lock.withLock { address } }
        set {
            if let newValue { Self.validate(newValue) }
            update("serverAddress") { defer { address = newValue }; return address != newValue }
        }
    }

    /// The Adapter Set; nil means `DEFAULT` on the server.
    public var adapterSet: String? {
        get { lock.withLock { adapter } }
        set { update("adapterSet") { defer { adapter = newValue }; return adapter != newValue } }
    }

    /// The user name sent to the server's Metadata Adapter when a session is created; nil for none.
    public var user: String? {
        get { lock.withLock { userName } }
        set { update("user") { defer { userName = newValue }; return userName != newValue } }
    }

    /// Sets the password (write-only).
    public func setPassword(_ password: String?) {
        update("password") { defer { secret = password }; return secret != password }
    }

    /// Public keys the server's (leaf) certificate must have one of, on https/wss; `[]` (the
    /// default) pins nothing. A server with another key is refused with error 62
    /// (`didReceiveServerError`), and the client does not retry. Standard certificate
    /// validation applies either way.
    public var certificatePins: [SecKey] {
        get { lock.withLock { pins } }
        set {
            let values = CertificatePins(newValue)
            update("certificatePins") {
                defer { pins = newValue; pinValues = values }
                return pinValues != values || pins.count != newValue.count
            }
        }
    }

    /// Extra trusted root certificates (PEM), besides the system's. Not public: a hook for
    /// tests against a server with a test CA.
    var additionalTrustRootsPEM: [String] {
        get { lock.withLock { extraRoots } }
        set { lock.withLock { extraRoots = newValue } }
    }

    /// What TLS connections must check.
    var tlsPolicy: TLSPolicy {
        lock.withLock { TLSPolicy(pins: pinValues, additionalTrustRootsPEM: extraRoots) }
    }

    /// The current session id, set by the server.
    public var sessionId: String? { lock.withLock { session } }
    /// The server instance address (control link) of the current session.
    public var serverInstanceAddress: String? { lock.withLock { instanceAddress } }
    /// The server's configured name (SERVNAME).
    public var serverSocketName: String? { lock.withLock { socketName } }
    /// The client IP as the server sees it (CLIENTIP).
    public var clientIp: String? { lock.withLock { ip } }

    /// Applies a server-driven property; returns whether it changed.
    func apply(_ p: SessionEngine.ServerProperty) -> Bool {
        lock.withLock {
            switch p {
            case .sessionId(let v): defer { session = v }; return session != v
            case .serverInstanceAddress(let v): defer { instanceAddress = v }; return instanceAddress != v
            case .serverSocketName(let v): defer { socketName = v }; return socketName != v
            case .clientIp(let v): defer { ip = v }; return ip != v
            case .realMaxBandwidth: return false
            }
        }
    }

    func merge(into s: inout SessionEngine.Settings) {
        lock.withLock {
            s.serverAddress = address
            s.adapterSet = adapter
            s.user = userName
            s.password = secret
        }
    }

    /// `[serverAddress: …, adapterSet: …, …, libVersion: …]`, unset values left out.
    public var description: String {
        lock.withLock {
            var map = DescriptionMap()
            map.add("serverAddress", address)
            map.add("adapterSet", adapter)
            map.add("user", userName)
            map.add("sessionId", session)
            map.add("serverInstanceAddress", instanceAddress)
            map.add("serverSocketName", socketName)
            map.add("clientIp", ip)
            map.add("libVersion", LightstreamerClient.LIB_NAME + " " + LightstreamerClient.LIB_VERSION)
            return map.description
        }
    }
}
