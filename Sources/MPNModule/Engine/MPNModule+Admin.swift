import LightstreamerServer
import TLCP

extension MPNModule {
    /// How often the TRIGGERED subscriptions are counted in the store for the dashboard.
    static let triggeredCountPeriodMillis: Int64 = 10_000

    func adminFigures() async -> MPNMonitorFigures {
        let now = nowMillis
        if admin.triggeredCountedAt.map({ now - $0 >= Self.triggeredCountPeriodMillis || now < $0 }) ?? true {
            admin.triggeredCountedAt = now
            if let list = try? await store.allSubscriptions(status: .triggered) { admin.triggered = list.count }
        }
        var keys = Set(admin.counts.keys).union(admin.suspended)
        for d in devices.values where keys.count < MPNAdminState.maxApplications {
            keys.insert(MPNAdminState.key(d.platform, d.applicationId))
        }
        let apps = keys.sorted().prefix(MPNAdminState.maxApplications).map { key -> MPNMonitorFigures.Application in
            let parts = key.split(separator: "/", maxSplits: 1).map(String.init)
            let c = admin.counts[key] ?? MPNAdminState.Counts()
            return .init(
                platform: parts.first ?? "", appId: parts.count > 1 ? parts[1] : "", sent: c.sent, failed: c.failed,
                suspended: admin.suspended.contains(key))
        }
        return MPNMonitorFigures(
            devices: devices.count, activeSubscriptions: running.count,
            triggeredSubscriptions: admin.triggered, applications: Array(apps))
    }

    /// Deletes a device from the store and forgets what runs for it. False when the store has none.
    func adminDeleteDevice(id: String) async throws -> Bool {
        guard try await store.deleteDevice(id: id) else { return false }
        for (sid, r) in running where r.record.deviceId == id {
            await stopTable(sid)
            running.removeValue(forKey: sid)
        }
        devices.removeValue(forKey: id)
        queues.removeValue(forKey: id)?.timer?.cancel()
        internalAdapter.remove(deviceId: id)
        return true
    }

    /// While an application is suspended its paced notifications are dropped (counted in
    /// `Statistics.dropped`) and its triggered ones stay in the outbox, read again and sent on
    /// resume. False for an unknown platform.
    func adminSetSuspended(platform: String, appId: String, suspended: Bool) async -> Bool {
        guard let p = MPNPlatform(rawValue: platform), !appId.isEmpty, appId.utf8.count <= 256 else { return false }
        let key = MPNAdminState.key(p, appId)
        if suspended {
            guard admin.suspended.count < MPNAdminState.maxApplications || admin.suspended.contains(key) else { return false }
            admin.suspended.insert(key)
        } else if admin.suspended.remove(key) != nil {
            // Triggered notifications held in the outbox go now.
            await resendOutbox()
        }
        return true
    }
}

/// The MPN Module as the server's `MPNAdminHook`.
struct MPNAdminBridge: MPNAdminHook {
    let module: MPNModule

    func monitorFigures() async -> MPNMonitorFigures {
        await module.adminFigures()
    }

    func deleteDevice(id: String) async throws -> Bool {
        try await module.adminDeleteDevice(id: id)
    }

    func setApplicationSuspended(platform: String, appId: String, suspended: Bool) async throws -> Bool {
        await module.adminSetSuspended(platform: platform, appId: appId, suspended: suspended)
    }
}
