import LightstreamerServer
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import TLCP

/// # The MPN Module facade
///
/// The server-side engine of Mobile Push Notifications, used by server sessions for the five
/// MPN control operations and running on its own afterwards:
///
/// ```swift
/// let internal = MPNInternalDataAdapter()          // add to each MPN adapter set as
///                                                   // config.internalDataAdapterName, then
/// let engine = ItemEngine(adapterSets: sets)        // build the item engine
/// let store = try await MPNModule.openStore(config.store)
/// let mpn = MPNModule(configuration: config, store: store,
///                     providers: MPNProviderRegistry(configuration: config),
///                     itemEngine: engine, internalAdapter: internal)
/// try await mpn.start()                             // reload devices/subscriptions, subscribe items
/// // per request (context = adapter set, user, session id):
/// let reg = try await mpn.register(params, context: ctx)      // → MPNREG,<reg.deviceId>,<reg.adapterName>
/// let id  = try await mpn.activate(params, context: ctx)      // → MPNOK,<LS_subId>,<id>
/// let id2 = try await mpn.reconfigure(params, context: ctx)   // → MPNCONF,<id2>
/// let ids = try await mpn.deactivate(deviceId: d, target: t, context: ctx) // → one MPNDEL,<id> each
/// try await mpn.resetBadge(deviceId: d, context: ctx)         // → MPNZERO,<d>
/// await mpn.shutdown()
/// ```
///
/// Every operation throws `MPNError` with the code of docs/protocol/MPN.md §2 (40 disabled, 41
/// store, 43 unknown app, 44 trigger, 45 device, 46 subscription, 47 argument, 48 suspended, 49
/// size, 50 no items/fields, 51 payload, 52/53 format, 56 pn_reconf mismatch, 17/21/23/24 from the
/// item engine and Metadata Adapter, ≤0/66 from `MPNMetadataHooks`). A returned operation is
/// committed to the store: the session may acknowledge it at once. The session itself checks that
/// the device was registered in that session before the other operations.
///
/// Runtime: each ACTIVE subscription of an ACTIVE device subscribes its items through the
/// `ItemEngine`, independent of sessions. A subscription with a trigger (MERGE: with snapshot,
/// so the current values are checked at once) evaluates it on every update until it is true,
/// then is marked TRIGGERED in the store (compare-and-set) and sends exactly one notification.
/// One without a trigger (no snapshot: a restart does not re-notify current values) sends a
/// notification per update,
/// paced per device (`pacing.minSendDelayMillis`, trigger notifications exempt), with MERGE
/// conflation of waiting notifications (latest values win) and retries with exponential
/// backoff. A provider that reports a dead token suspends the device (48 on activation; DEV
/// item updated); a token change or a new registration resumes it. Devices SUSPENDED or without
/// ACTIVE subscriptions are deleted after `inactivity.deviceInactivityTimeoutMinutes`.
/// The internal items `DEV-`, `SUBS-`, `SUB-` are served live by `MPNInternalDataAdapter`.
public actor MPNModule {
    public struct Registration: Sendable, Hashable {
        public var deviceId: String
        /// The internal MPN Data Adapter name (second argument of MPNREG).
        public var adapterName: String
    }

    /// Counters (tests, benchmarks, monitoring).
    public struct Statistics: Sendable, Hashable {
        public var delivered = 0
        public var triggered = 0
        public var retried = 0
        public var dropped = 0
        /// Outbox entries that failed for good (refused, dead token, retries exhausted).
        public var failed = 0
        public var suspendedDevices = 0
    }

    let configuration: MPNConfiguration
    let store: any MPNStore
    let providers: MPNProviderRegistry
    let itemEngine: ItemEngine
    let internalAdapter: MPNInternalDataAdapter
    let clock: any EngineClock
    let wallClock: any MPNWallClock
    let logger: Logger
    /// Notifications by outcome, provider latency (docs/METRICS.md).
    let metrics: MPNMetrics

    // Runtime state (actor-isolated).
    var devices: [String: MPNDeviceRecord] = [:]
    var running: [String: RunningSubscription] = [:]
    var queues: [String: DeviceQueue] = [:]
    var statistics = Statistics()
    /// Per-application counts and suspensions (`MPNModule+Admin.swift`).
    var admin = MPNAdminState()
    var nextGeneration: UInt64 = 0
    var started = false
    var collectorTimer: (any EngineTimer)?
    /// This instance in the `mpn_modules` table, and the devices it runs.
    public nonisolated let moduleId: String
    var owned: Set<String> = []
    var checkTimer: (any EngineTimer)?
    /// Triggers that fired since the last group commit, in order (one per subscription).
    var firedTriggers: [PendingNotification] = []
    var firedTriggerIds: Set<String> = []
    /// Outbox entries being sent or waiting for a retry here (not claimed again meanwhile).
    var outboxUnderWay: Set<String> = []

    /// Listens for changes made through other servers on a shared store (`MPNModule+ClusterSync`).
    var changeWatcher: Task<Void, Never>?
    /// Devices announced changed and not yet read again; `resyncDue`: read everything.
    var changedDevices: Set<String> = []
    var resyncDue = false
    var syncPosted = false

    let events: AsyncStream<Event>
    let eventSink: AsyncStream<Event>.Continuation
    let outstanding = NIOLockedValueBox(0)
    var consumer: Task<Void, Never>?
    /// The loading of `start()`, awaited by every caller until `shutdown()`.
    var loading: Task<Void, any Error>?
    /// Told after each heartbeat whether the store answered (nil) or why not: the server's
    /// readiness condition `mpnStore`.
    var healthReporter: (@Sendable (String?) -> Void)?

    public func setHealthReporter(_ reporter: (@Sendable (String?) -> Void)?) {
        healthReporter = reporter
    }

    public init(
        configuration: MPNConfiguration, store: any MPNStore, providers: MPNProviderRegistry, itemEngine: ItemEngine,
        internalAdapter: MPNInternalDataAdapter, clock: any EngineClock = SystemEngineClock(),
        wallClock: any MPNWallClock = SystemWallClock(), logger: Logger = Logger(label: "lightstreamer.mpn"),
        metrics: MPNMetrics = .global()
    ) {
        self.configuration = configuration
        self.metrics = metrics
        self.store = store
        self.providers = providers
        self.itemEngine = itemEngine
        self.internalAdapter = internalAdapter
        self.clock = clock
        self.wallClock = wallClock
        self.logger = logger
        self.moduleId = configuration.moduleId ?? MPNIdentifier.make()
        (events, eventSink) = AsyncStream.makeStream(of: Event.self)
    }

    /// Opens the configured store (PostgreSQL when a URL is given, else the SQLite file).
    /// - Parameter eventLoopGroup: where the PostgreSQL connections run (nil: NIO's singleton).
    public static func openStore(
        _ config: MPNConfiguration.Store,
        eventLoopGroup: (any EventLoopGroup)? = nil
    ) async throws -> any MPNStore {
        if let url = config.postgresURL {
            return try await PostgresMPNStore.open(
                url: url, schema: config.postgresSchema,
                eventLoopGroup: eventLoopGroup ?? MultiThreadedEventLoopGroup.singleton)
        }
        return try SQLiteMPNStore(path: config.sqlitePath ?? "mpn.sqlite")
    }

    /// Loads devices and subscriptions, publishes them on the internal items and subscribes the
    /// items of every ACTIVE subscription of every ACTIVE device. Callers arriving while it
    /// loads wait for the same loading; once started, returns at once until `shutdown()`.
    public func start() async throws {
        let task = loading ?? Task { try await self.load() }
        loading = task
        try await task.value
    }

    private func load() async throws {
        guard !started else { return }
        started = true
        consumer = Task { [events] in
            for await event in events { await self.handle(event) }
        }
        try await store.heartbeat(moduleId: moduleId, now: nowMillis)
        owned = try await store.claimOrphanedDevices(moduleId: moduleId, silentBefore: orphanCutoff)
        for d in try await store.allDevices() {
            devices[d.id] = d
            internalAdapter.publish(device: d)
        }
        for r in try await store.allSubscriptions(status: nil) {
            internalAdapter.publish(subscription: r)
            guard owned.contains(r.deviceId) else { continue }
            guard let prepared = try? prepare(r) else {
                logger.error("Stored MPN subscription no longer compiles", metadata: ["id": "\(r.id)"])
                continue
            }
            running[r.id] = prepared
            if r.status == .active, devices[r.deviceId]?.status == .active { await startTable(r.id) }
        }
        // Notifications committed but not sent before a crash (or a stop) go out now.
        await resendOutbox()
        logger.info("MPN Module started", metadata: ["module": "\(moduleId)", "devices": "\(owned.count)"])
        scheduleCollector()
        scheduleModuleCheck()
        startChangeWatcher()
    }

    /// Stops every item subscription, timer and provider. A module check or collection under
    /// way (suspended at the store) stops at its next step and re-arms no timer: `started` is
    /// false from the first line (`checkModules`).
    public func shutdown() async {
        let wasStarted = started
        started = false
        collectorTimer?.cancel()
        checkTimer?.cancel()
        changeWatcher?.cancel()
        changeWatcher = nil
        if wasStarted { try? await store.removeModule(moduleId: moduleId) }
        for id in Array(running.keys) { await stopTable(id) }
        for (_, q) in queues { q.timer?.cancel() }
        queues.removeAll()
        eventSink.finish()
        consumer?.cancel()
        await providers.shutdown()
        loading = nil
    }

    public var currentStatistics: Statistics { statistics }

    /// Waits until every queued event, send and timer due by now has been handled (tests).
    public func settle(maxRounds: Int = 10_000) async {
        for _ in 0..<maxRounds {
            if outstanding.withLockedValue({ $0 }) == 0 { return }
            try? await Task.sleep(for: .milliseconds(1))
        }
    }

    var nowMillis: MPNTimestamp { wallClock.nowMillis() }

    // MARK: - Operations

    func checkEnabled(_ context: MPNRequestContext) throws(MPNError) {
        guard configuration.isEnabled(for: context.adapterSet) else { throw .disabled }
    }

    func storeCall<T>(_ body: () async throws -> T) async throws(MPNError) -> T {
        do { return try await body() } catch let e as MPNError { throw e } catch {
            logger.error("MPN store failure", metadata: ["error": "\(String(describing: error).logEscaped())"])
            throw .internalResource("\(error)")
        }
    }

    func hooks(_ context: MPNRequestContext) -> (any MPNMetadataHooks)? {
        itemEngine.adapterSet(named: context.adapterSet)?.metadata as? any MPNMetadataHooks
    }

    /// The device of an operation: 45 when unknown.
    func requireDevice(_ id: String, _ context: MPNRequestContext) async throws(MPNError) -> MPNDeviceRecord {
        guard let d = try await storeCall({ try await store.device(id: id) }) else { throw .unknownDevice }
        devices[d.id] = d
        if let hooks = hooks(context) {
            let info = MPNDeviceInfo(platform: d.platform, applicationId: d.applicationId, deviceToken: d.deviceToken)
            try await MPNHookCall.run {
                try await hooks.notifyMpnDeviceAccess(user: context.user, sessionId: context.sessionId, device: info)
            }
        }
        return d
    }

    /// `register`: finds or creates the device (token change with `PN_newDeviceToken`).
    public func register(_ p: MPNRegisterParameters, context: MPNRequestContext) async throws(MPNError) -> Registration {
        try checkEnabled(context)
        try configuration.limits.checkDevice(applicationId: p.applicationId, token: p.deviceToken)
        if let n = p.newDeviceToken { try MPNLimits.check(n, max: configuration.limits.deviceToken, "device token") }
        guard !p.deviceToken.isEmpty, !p.applicationId.isEmpty else { throw MPNError(code: 65, message: "Empty token or application id") }
        try MPNDeviceToken.check(p.deviceToken, platform: p.platform)
        if let n = p.newDeviceToken { try MPNDeviceToken.check(n, platform: p.platform) }
        guard providers.knows(p.platform, p.applicationId) else { throw .unknownApplication(p.applicationId) }
        let info = MPNDeviceInfo(platform: p.platform, applicationId: p.applicationId, deviceToken: p.deviceToken)
        if let hooks = hooks(context) {
            try await MPNHookCall.run {
                try await hooks.notifyMpnDeviceAccess(user: context.user, sessionId: context.sessionId, device: info)
            }
            if let new = p.newDeviceToken, new != p.deviceToken {
                try await MPNHookCall.run {
                    try await hooks.notifyMpnDeviceTokenChange(
                        user: context.user, sessionId: context.sessionId, device: info, newDeviceToken: new)
                }
            }
        }
        let now = nowMillis
        var device: MPNDeviceRecord
        if let new = p.newDeviceToken, new != p.deviceToken {
            let (d, removed) = try await storeCall {
                try await store.changeDeviceToken(
                    platform: p.platform, applicationId: p.applicationId, oldToken: p.deviceToken,
                    newToken: new, now: now)
            }
            device = d
            if let removed {
                for (id, r) in running where r.record.deviceId == removed {
                    await stopTable(id)
                    running[id]?.record.deviceId = d.id
                }
                devices.removeValue(forKey: removed)
                queues.removeValue(forKey: removed)?.timer?.cancel()
                internalAdapter.merge(from: removed, records: running.values.map(\.record).filter { $0.deviceId == d.id })
            }
        } else {
            device = try await storeCall {
                try await store.registerDevice(platform: p.platform, applicationId: p.applicationId, token: p.deviceToken, now: now).device
            }
            if device.status == .suspended,
                let resumed = try await storeCall({
                    try await store.setDeviceStatus(id: device.id, status: .active, now: now)
                })
            {
                device = resumed
            }
        }
        let wasActive = devices[device.id]?.status == .active
        devices[device.id] = device
        internalAdapter.publish(device: device)
        // This session may now read the device's internal items.
        internalAdapter.sessions.register(device: device.id, in: context.sessionId)
        if !owned.contains(device.id) {
            // Registered through this instance: it runs the device from now on (another one
            // that ran it lets go at its next check).
            try await storeCall { try await store.claimDevice(id: device.id, moduleId: moduleId) }
            owned.insert(device.id)
            await adopt(device.id)
        }
        if !wasActive || p.newDeviceToken != nil {
            for (id, r) in running where r.record.deviceId == device.id && r.record.status == .active && r.handle == nil {
                await startTable(id)
            }
        }
        return Registration(deviceId: device.id, adapterName: configuration.internalDataAdapterName)
    }

    /// `reset_badge`: the AUTO badge counter back to 0.
    public func resetBadge(deviceId: String, context: MPNRequestContext) async throws(MPNError) {
        try checkEnabled(context)
        let d = try await requireDevice(deviceId, context)
        guard try await storeCall({ try await store.resetBadge(deviceId: d.id) }) else { throw .unknownDevice }
        devices[d.id]?.badge = 0
    }

    /// `deactivate`: removes one subscription, those with a status, or all of the device's.
    /// Returns the removed ids (one MPNDEL each; possibly none).
    public func deactivate(deviceId: String, target: MPNDeactivateTarget, context: MPNRequestContext) async throws(MPNError) -> [String] {
        try checkEnabled(context)
        let d = try await requireDevice(deviceId, context)
        let now = nowMillis
        _ = try? await store.touchDevice(id: d.id, now: now)
        var removed: [String]
        switch target {
        case .subscription(let id):
            guard let r = try await storeCall({ try await store.subscription(id: id) }), r.deviceId == d.id else {
                throw .unknownSubscription
            }
            guard try await storeCall({ try await store.deleteSubscription(id: r.id) }) else { throw .unknownSubscription }
            removed = [r.id]
        case .status(let s):
            let status: MPNSubscriptionStatus = s == .active ? .active : .triggered
            removed = try await storeCall { try await store.deleteSubscriptions(deviceId: d.id, status: status) }
        case .all:
            removed = try await storeCall { try await store.deleteSubscriptions(deviceId: d.id, status: nil) }
        }
        for id in removed {
            await stopTable(id)
            forgetFiredTrigger(id)
            running.removeValue(forKey: id)
            queues[d.id]?.pending.removeAll { $0.subscriptionId == id }
            internalAdapter.remove(subscriptionId: id, deviceId: d.id)
        }
        return removed
    }
}

/// Who asks for an MPN operation.
public struct MPNRequestContext: Sendable, Hashable {
    /// The session's adapter set (`LS_adapter_set`).
    public var adapterSet: String
    public var user: String?
    public var sessionId: String

    public init(adapterSet: String, user: String? = nil, sessionId: String) {
        self.adapterSet = adapterSet
        self.user = user
        self.sessionId = sessionId
    }
}
