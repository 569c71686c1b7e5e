import Foundation
import NIOConcurrencyHelpers

#if canImport(Security)
import Security
#endif

/// Where and as whom a `LightstreamerClient` connects (docs/protocol/CLIENT-API.md §5), plus what
/// the server told about the session.
public final class ConnectionDetails: CustomStringConvertible, Sendable {
    /// The mutable state, only touched under the box's lock.
    private struct State {
        var address: String?
        var adapter: String?
        var userName: String?
        var secret: String?
        var session: String?
        var instanceAddress: String?
        var socketName: String?
        var ip: String?
        var pins: [SecKey] = []
        var pinValues = CertificatePins([])
        var extraRoots: [String] = []
        weak var core: ClientCore?
    }

    private let state = NIOLockedValueBox(State())

    /// The client whose engine gets the changes.
    var core: ClientCore? {
        get { state.withLockedValue { $0.core } }
        set { state.withLockedValue { $0.core = newValue } }
    }

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
    private func update(_ name: String, _ change: (inout State) -> Bool) {
        if state.withLockedValue({ change(&$0) }) { core?.optionChanged(name) }
    }

    /// `http[s]://host[:port][/prefix]`. Precondition: well formed, http/https, no query.
    public var serverAddress: String? {
        get { state.withLockedValue { s in s.address } }
        set {
            if let newValue { Self.validate(newValue) }
            update("serverAddress") { s in
                defer { s.address = newValue }
                return s.address != newValue
            }
        }
    }

    /// The Adapter Set; nil means `DEFAULT` on the server.
    public var adapterSet: String? {
        get { state.withLockedValue { s in s.adapter } }
        set {
            update("adapterSet") { s in
                defer { s.adapter = newValue }
                return s.adapter != newValue
            }
        }
    }

    /// The user name sent to the server's Metadata Adapter when a session is created; nil for none.
    public var user: String? {
        get { state.withLockedValue { s in s.userName } }
        set {
            update("user") { s in
                defer { s.userName = newValue }
                return s.userName != newValue
            }
        }
    }

    /// Sets the password (write-only).
    public func setPassword(_ password: String?) {
        update("password") { s in
            defer { s.secret = password }
            return s.secret != password
        }
    }

    /// Public keys the server's (leaf) certificate must have one of, on https/wss; `[]` (the
    /// default) pins nothing. A server with another key is refused with error 62
    /// (`didReceiveServerError`), and the client does not retry. Standard certificate
    /// validation applies either way.
    public var certificatePins: [SecKey] {
        get { state.withLockedValue { s in s.pins } }
        set {
            let values = CertificatePins(newValue)
            update("certificatePins") { s in
                defer {
                    s.pins = newValue
                    s.pinValues = values
                }
                return s.pinValues != values || s.pins.count != newValue.count
            }
        }
    }

    /// Extra trusted root certificates (PEM), besides the system's. Not public: a hook for
    /// tests against a server with a test CA.
    var additionalTrustRootsPEM: [String] {
        get { state.withLockedValue { s in s.extraRoots } }
        set { state.withLockedValue { s in s.extraRoots = newValue } }
    }

    /// What TLS connections must check.
    var tlsPolicy: TLSPolicy {
        state.withLockedValue { s in TLSPolicy(pins: s.pinValues, additionalTrustRootsPEM: s.extraRoots) }
    }

    /// The current session id, set by the server.
    public var sessionId: String? { state.withLockedValue { $0.session } }
    /// The server instance address (control link) of the current session.
    public var serverInstanceAddress: String? { state.withLockedValue { $0.instanceAddress } }
    /// The server's configured name (SERVNAME).
    public var serverSocketName: String? { state.withLockedValue { $0.socketName } }
    /// The client IP as the server sees it (CLIENTIP).
    public var clientIp: String? { state.withLockedValue { $0.ip } }

    /// Applies a server-driven property; returns whether it changed.
    func apply(_ p: SessionEngine.ServerProperty) -> Bool {
        state.withLockedValue { s in
            switch p {
            case .sessionId(let v):
                defer { s.session = v }
                return s.session != v
            case .serverInstanceAddress(let v):
                defer { s.instanceAddress = v }
                return s.instanceAddress != v
            case .serverSocketName(let v):
                defer { s.socketName = v }
                return s.socketName != v
            case .clientIp(let v):
                defer { s.ip = v }
                return s.ip != v
            case .realMaxBandwidth: return false
            }
        }
    }

    func merge(into settings: inout SessionEngine.Settings) {
        state.withLockedValue { s in
            settings.serverAddress = s.address
            settings.adapterSet = s.adapter
            settings.user = s.userName
            settings.password = s.secret
        }
    }

    /// `[serverAddress: …, adapterSet: …, …, libVersion: …]`, unset values left out.
    public var description: String {
        state.withLockedValue { s in
            var map = DescriptionMap()
            map.add("serverAddress", s.address)
            map.add("adapterSet", s.adapter)
            map.add("user", s.userName)
            map.add("sessionId", s.session)
            map.add("serverInstanceAddress", s.instanceAddress)
            map.add("serverSocketName", s.socketName)
            map.add("clientIp", s.ip)
            map.add("libVersion", LightstreamerClient.LIB_NAME + " " + LightstreamerClient.LIB_VERSION)
            return map.description
        }
    }
}
