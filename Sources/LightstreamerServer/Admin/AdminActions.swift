import NIOConcurrencyHelpers

/// The administrator's actions on a running server (docs/ADMIN.md). Used by the admin HTTP
/// API and, through it, the dashboard; public so that an embedding application can call them.
public final class AdminActions: Sendable {
    let manager: SessionManager
    let engine: ItemEngine
    private let mpnHook = NIOLockedValueBox<(any MPNAdminHook)?>(nil)

    init(manager: SessionManager, engine: ItemEngine) {
        self.manager = manager
        self.engine = engine
    }

    var mpn: (any MPNAdminHook)? { mpnHook.withLockedValue { $0 } }

    func setMPNHook(_ hook: (any MPNAdminHook)?) { mpnHook.withLockedValue { $0 = hook } }

    /// While blocked, creates are refused with CONERR 10 (sessions of the `MONITOR` adapter
    /// set excepted, so that the dashboard keeps working); live sessions go on.
    public var newSessionsBlocked: Bool {
        get { manager.admission.withLockedValue { $0 } }
        set { manager.admission.withLockedValue { $0 = newValue } }
    }

    /// The codes a destroy may carry: what clients read as "closed by the server" (32), "by
    /// another session of the user" (35), "reconnect" (41, 48), or an application code ≤ 0.
    public static func isAllowedCauseCode(_ code: Int) -> Bool {
        [32, 35, 41, 48].contains(code) || (-9_999...0).contains(code)
    }

    /// Ends a session: its client gets `END,<code>,<message>`. False when there is no such session.
    public func destroySession(id: String, code: Int = 32, message: String = "Closed by the administrator") -> Bool {
        guard let session = manager.session(id) else { return false }
        session.run { m, now in m.serverClose(code: code, message: message, now: now) }
        return true
    }

    /// Clears the snapshot the server holds for an item (subscribers get `CS` for DISTINCT and
    /// COMMAND, nulls for MERGE), as if its Data Adapter had cleared it. False when the item is
    /// not subscribed from that adapter right now (the server holds nothing for it then).
    public func clearSnapshot(adapterSet: String, dataAdapter: String = AdapterSet.defaultDataAdapterName, item: String) -> Bool {
        engine.adminClearSnapshot(ItemKey(adapterSet: adapterSet, dataAdapter: dataAdapter, item: item))
    }
}

extension ItemEngine {
    /// `adapterClear` for an item the engine holds; false when it holds none.
    func adminClearSnapshot(_ key: ItemKey) -> Bool {
        guard store.withLockedValue({ $0.items[key] != nil }) else { return false }
        adapterClear(key)
        return true
    }
}
