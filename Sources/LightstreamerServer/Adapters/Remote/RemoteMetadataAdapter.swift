import ARI
import Logging
import NIOConcurrencyHelpers
import TLCP

/// A Metadata Adapter served by a remote process over ARI (docs/ARI.md, "The proxy side"):
/// each question the server asks becomes a request on the remote's connection, awaited with the
/// connection's request timeout, and each refusal reaches the client with the code of
/// `ARIClientOutcome` (via `RemoteMetadataErrors`).
///
/// | server asks | request |
/// |---|---|
/// | `notifyUser` | `NUS` (its reply also gives the bandwidth cap and whether `NNT`/`NTC` are wanted) |
/// | `notifyNewSession` / `notifySessionClose` | `NNS` / `NSC` |
/// | `items` / `fields` | `GIS` / `GSC` |
/// | `prepareItemChecks`, then the per-item checks | one `GIT` and one `GUI` for all the items |
/// | `notifyNewTable` / `notifyTableClosed` | `NNT` / `NTC`, only when the user's `NUS` reply wanted them |
/// | `notifyUserMessage` | `NUM` |
/// | MPN device access, activation, token change | `MDA`, `MSA`, `MDC` |
///
/// Close notifications (`NSC`, `NTC`) are not awaited by the server; their failures are logged.
public final class RemoteMetadataAdapter: MetadataAdapter, RemoteConnectionEvents {
    /// What the `NUS` reply said about a user.
    struct UserGrant: Sendable, Hashable {
        var maxBandwidth: Double
        var wantsTablesNotification: Bool
    }

    private struct State {
        var checks: RemoteItemChecks
        var grants: [String?: UserGrant] = [:]
        /// Session id → user, from NNS to NSC (NTC carries no user).
        var sessionUsers: [String: String?] = [:]
    }

    static let maxRememberedUsers = 10_000
    static let maxRememberedSessions = 1_000_000

    private let requester: any RemoteRequester
    private let logger: Logger
    private let now: @Sendable () -> Int64
    private let state: NIOLockedValueBox<State>
    private let failures: (@Sendable (ARIMethod) -> Void)?

    /// `itemChecksTTLMillis`: how long `GIT`/`GUI` answers serve the per-item questions.
    /// `onFailure` hears of every request that did not succeed (for metrics).
    init(
        requester: any RemoteRequester, logger: Logger, itemChecksTTLMillis: Int64 = 10_000,
        now: @escaping @Sendable () -> Int64 = RemoteAdapterConnection.now,
        onFailure: (@Sendable (ARIMethod) -> Void)? = nil
    ) {
        self.requester = requester
        self.logger = logger
        self.now = now
        self.failures = onFailure
        state = NIOLockedValueBox(State(checks: RemoteItemChecks(ttlMillis: itemChecksTTLMillis)))
    }

    convenience init(connection: RemoteAdapterConnection, logger: Logger, onFailure: (@Sendable (ARIMethod) -> Void)? = nil) {
        self.init(requester: connection, logger: logger, onFailure: onFailure)
        connection.setEvents(self)
    }

    // MARK: Requests

    /// Sends `request`; a failure becomes the error the server maps to the client's code.
    private func call(_ request: ARIRequest) async throws -> ARIReplyPayload {
        do {
            return try await requester.request(request)
        } catch {
            failures?(request.method)
            let mapped = RemoteMetadataErrors.error(error, on: request.method)
            if case .refused? = error as? RemoteRequestFailure {
                logger.debug("remote Metadata Adapter refused", metadata: ["method": "\(request.method.rawValue)", "error": "\(mapped)"])
            } else {
                logger.warning(
                    "remote Metadata Adapter request failed",
                    metadata: ["method": "\(request.method.rawValue)", "error": "\(error)"])
            }
            throw mapped
        }
    }

    private func names(_ request: ARIRequest) async throws -> [String] {
        let payload = try await call(request)
        guard case .names(let names) = payload else { throw unexpected(payload, request.method) }
        return names
    }

    private func unexpected(_ payload: ARIReplyPayload, _ method: ARIMethod) -> any Error {
        failures?(method)
        return RemoteMetadataErrors.error(RemoteRequestFailure.malformedReply("unexpected payload \(payload)"), on: method)
    }

    private func fireAndForget(_ request: ARIRequest) {
        Task { [self] in _ = try? await self.call(request) }
    }

    // MARK: Sessions

    public func notifyUser(user: String?, password: String?, headers: [String: String], clientIP: String?) async throws {
        let pairs = headers.keys.sorted().map { ARIPair($0, headers[$0]) }
        let payload = try await call(.notifyUser(user: user, password: password, headers: pairs))
        guard case .userAuthorization(let bandwidth, let wants) = payload else { throw unexpected(payload, .notifyUser) }
        state.withLockedValue { s in
            if s.grants.count >= Self.maxRememberedUsers, s.grants[user] == nil { s.grants.removeAll() }
            s.grants[user] = UserGrant(maxBandwidth: bandwidth, wantsTablesNotification: wants)
        }
    }

    public func allowedMaxBandwidth(user: String?) async -> Double? {
        guard let b = state.withLockedValue({ $0.grants[user]?.maxBandwidth }), b.isFinite, b > 0 else { return nil }
        return b
    }

    public func notifyNewSession(user: String?, sessionId: String, clientContext: [String: String]) async throws {
        let pairs = clientContext.keys.sorted().map { ARIPair($0, clientContext[$0]) }
        _ = try await call(.notifyNewSession(user: user, sessionId: sessionId, context: pairs))
        state.withLockedValue { s in
            if s.sessionUsers.count >= Self.maxRememberedSessions { s.sessionUsers.removeAll() }
            s.sessionUsers[sessionId] = .some(user)
        }
    }

    public func notifySessionClose(sessionId: String) {
        _ = state.withLockedValue { $0.sessionUsers.removeValue(forKey: sessionId) }
        fireAndForget(.notifySessionClose(sessionId: sessionId))
    }

    // MARK: Items and fields

    public func items(user: String?, sessionId: String, group: String, dataAdapter: String) async throws -> [String] {
        try await names(.getItems(user: user, group: group, sessionId: sessionId))
    }

    public func fields(user: String?, sessionId: String, group: String, dataAdapter: String, schema: String) async throws -> [String] {
        try await names(.getSchema(user: user, group: group, schema: schema, sessionId: sessionId))
    }

    public func prepareItemChecks(user: String?, sessionId: String, items: [String]) async throws {
        var seen = Set<String>()
        let distinct = items.filter { seen.insert($0).inserted }
        async let itemData = fetchItemData(distinct)
        async let userData = fetchUserItemData(user: user, distinct)
        _ = try await (itemData, userData)
    }

    @discardableResult
    private func fetchItemData(_ items: [String]) async throws -> [ARIItemData] {
        let payload = try await call(.getItemData(items: items))
        guard case .itemData(let data) = payload, data.count == items.count else { throw unexpected(payload, .getItemData) }
        let t = now()
        state.withLockedValue { $0.checks.store(items: items, data, now: t) }
        return data
    }

    @discardableResult
    private func fetchUserItemData(user: String?, _ items: [String]) async throws -> [ARIUserItemData] {
        let payload = try await call(.getUserItemData(user: user, items: items))
        guard case .userItemData(let data) = payload, data.count == items.count else { throw unexpected(payload, .getUserItemData) }
        let t = now()
        state.withLockedValue { $0.checks.store(user: user, items: items, data, now: t) }
        return data
    }

    /// `GIT` for one item, from the answers of `prepareItemChecks` or asked again; nil when the
    /// remote could not say (the check then refuses).
    private func itemData(_ item: String) async -> ARIItemData? {
        let t = now()
        if let d = state.withLockedValue({ $0.checks.item(item, now: t) }) { return d }
        return try? await fetchItemData([item]).first
    }

    private func userItemData(user: String?, _ item: String) async -> ARIUserItemData? {
        let t = now()
        if let d = state.withLockedValue({ $0.checks.userItem(user: user, item: item, now: t) }) { return d }
        return try? await fetchUserItemData(user: user, [item]).first
    }

    public func modeMayBeAllowed(item: String, mode: SubscriptionMode) async -> Bool {
        await itemData(item)?.modes.contains(mode) ?? false
    }

    public func isModeAllowed(user: String?, item: String, mode: SubscriptionMode) async -> Bool {
        await userItemData(user: user, item)?.allowedModes.contains(mode) ?? false
    }

    public func distinctSnapshotLength(item: String) async -> Int {
        max(0, await itemData(item)?.distinctSnapshotLength ?? 0)
    }

    /// 0 (or an unreadable value) is no limit.
    public func allowedMaxFrequency(user: String?, item: String) async -> Double? {
        guard let f = await userItemData(user: user, item)?.allowedMaxFrequency, f.isFinite, f > 0 else { return nil }
        return f
    }

    /// 0 is unlimited.
    public func allowedBufferSize(user: String?, item: String) async -> Int? {
        guard let b = await userItemData(user: user, item)?.allowedBufferSize, b > 0 else { return nil }
        return b
    }

    // MARK: Tables

    private func wantsTables(_ user: String?) -> Bool {
        state.withLockedValue { $0.grants[user]?.wantsTablesNotification } ?? true
    }

    static func tableInfo(_ t: TableInfo) -> ARITableInfo {
        ARITableInfo(
            windowIndex: t.subscriptionId ?? 0, mode: t.mode, group: t.group, dataAdapter: t.dataAdapter,
            schema: t.schema, firstItemIndex: 1, lastItemIndex: max(1, t.items.count), selector: t.selector,
            items: t.items)
    }

    public func notifyNewTable(user: String?, sessionId: String, table: TableInfo) async throws {
        guard wantsTables(user) else { return }
        _ = try await call(.notifyNewTables(user: user, sessionId: sessionId, tables: [Self.tableInfo(table)]))
    }

    /// Like `NNT`, `NTC` goes out only when the session's user wanted table notifications.
    public func notifyTableClosed(sessionId: String, table: TableInfo) {
        let wants = state.withLockedValue { s -> Bool in
            guard let user = s.sessionUsers[sessionId] else { return true }
            return s.grants[user]?.wantsTablesNotification ?? true
        }
        guard wants else { return }
        fireAndForget(.notifyTablesClose(sessionId: sessionId, tables: [Self.tableInfo(table)]))
    }

    // MARK: Messages

    /// ARI has no response text: an accepted message gets an empty MSGDONE.
    public func notifyUserMessage(user: String?, sessionId: String, message: String) async throws -> String? {
        _ = try await call(.notifyUserMessage(user: user, sessionId: sessionId, message: message))
        return nil
    }

    // MARK: MPN (the MPN Module's hooks call these)

    /// Asks the remote (`MDA`) whether the user may register the device; a refusal throws
    /// the remote's error.
    public func mpnDeviceAccess(
        user: String?, sessionId: String, platform: MPNPlatform, applicationId: String,
        deviceToken: String
    ) async throws {
        let device = ARIMPNDevice(platform: platform, applicationId: applicationId, deviceToken: deviceToken)
        _ = try await call(.mpnDeviceAccess(user: user, sessionId: sessionId, device: device))
    }

    /// Asks the remote (`MSA`) whether the user may activate an MPN subscription with this
    /// trigger and notification format on the device; a refusal throws the remote's error.
    public func mpnSubscriptionActivation(
        user: String?, sessionId: String, table: TableInfo, platform: MPNPlatform,
        applicationId: String, deviceToken: String, trigger: String?,
        notificationFormat: String
    ) async throws {
        let device = ARIMPNDevice(platform: platform, applicationId: applicationId, deviceToken: deviceToken)
        _ = try await call(
            .mpnSubscriptionActivation(
                user: user, sessionId: sessionId, table: Self.tableInfo(table),
                device: device, trigger: trigger, notificationFormat: notificationFormat))
    }

    /// Asks the remote (`MDC`) whether the device's token may change to `newDeviceToken`; a
    /// refusal throws the remote's error.
    public func mpnDeviceTokenChange(
        user: String?, sessionId: String, platform: MPNPlatform, applicationId: String,
        deviceToken: String, newDeviceToken: String
    ) async throws {
        let device = ARIMPNDevice(platform: platform, applicationId: applicationId, deviceToken: deviceToken)
        _ = try await call(.mpnDeviceTokenChange(user: user, sessionId: sessionId, device: device, newDeviceToken: newDeviceToken))
    }

    // MARK: RemoteConnectionEvents

    func remoteReady(dialect: ARIDialect) {
        state.withLockedValue { s in
            s.checks.removeAll()
            s.grants.removeAll()
        }
    }

    func remoteNotifications(_ lines: [ARIRemoteLine]) {}

    func remoteFailure(_ message: String?) {
        logger.error("remote Metadata Adapter reported a failure", metadata: ["message": "\((message ?? "").logEscaped())"])
    }

    func remoteLost() {
        logger.warning("remote Metadata Adapter disconnected: sessions cannot be created until it is back")
    }
}
