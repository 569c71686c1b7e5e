import Foundation
import LightstreamerClient
import NIOConcurrencyHelpers

/// One soak client's checker: its `counter` subscription (MERGE, unfiltered) must deliver
/// strictly consecutive counts for as long as the session lasts, across any number of
/// recoveries. A snapshot (first one, or after a new session re-subscribed) starts a new run.
/// Also counts the client's status changes, sessions and the updates of its stock item.
/// `@unchecked Sendable`: its figures are only read and written under `lock`.
final class CounterProbe: ClientDelegate, SubscriptionDelegate, @unchecked Sendable {
    struct Figures: Sendable {
        var updates = 0
        var stockUpdates = 0
        var lost = 0
        var duplicated = 0
        var lostReportedByServer = 0
        var snapshots = 0
        var sessions = 0
        var recoveryAttempts = 0
        var recovered = 0
        var willRetry = 0
        var serverErrors: [Int] = []
        var subscriptionErrors: [Int] = []
        var connected = false
        var lastUpdate: ContinuousClock.Instant?
        var lastCount: Int?
        /// Gaps and repeats seen (first few), for the report: "session from→to".
        var anomalies: [String] = []
    }

    let index: Int
    private let lock = NSLock()
    private var figures = Figures()
    private var sessionIds: Set<String> = []
    private var recovering = false
    private weak var client: LightstreamerClient?

    init(index: Int) { self.index = index }

    func attach(to client: LightstreamerClient) { self.client = client }

    var snapshot: Figures { lock.withLock { figures } }

    // MARK: ClientDelegate

    func clientDidRemoveDelegate(_ client: LightstreamerClient) {}
    func clientDidAddDelegate(_ client: LightstreamerClient) {}

    func client(_ client: LightstreamerClient, didReceiveServerError errorCode: Int, withMessage errorMessage: String) {
        lock.withLock { figures.serverErrors.append(errorCode) }
    }

    func client(_ client: LightstreamerClient, didChangeStatus status: LightstreamerClient.Status) {
        lock.withLock {
            switch status {
            case .DISCONNECTED_TRYING_RECOVERY:
                figures.recoveryAttempts += 1
                recovering = true
                figures.connected = false
            case .DISCONNECTED_WILL_RETRY, .DISCONNECTED:
                if status == .DISCONNECTED_WILL_RETRY { figures.willRetry += 1 }
                recovering = false
                figures.connected = false
            case .CONNECTED_WS_STREAMING, .CONNECTED_HTTP_STREAMING, .CONNECTED_WS_POLLING, .CONNECTED_HTTP_POLLING:
                figures.connected = true
                if recovering { figures.recovered += 1 }
                recovering = false
            default:
                break
            }
        }
    }

    func client(_ client: LightstreamerClient, didChangeProperty property: String) {
        guard property == "sessionId", let id = client.connectionDetails.sessionId else { return }
        lock.withLock {
            if sessionIds.insert(id).inserted { figures.sessions += 1 }
        }
    }

    // MARK: SubscriptionDelegate

    func subscription(_ subscription: Subscription, didUpdateItem itemUpdate: ItemUpdate) {
        guard itemUpdate.itemName == "counter" else {
            lock.withLock { figures.stockUpdates += 1 }
            return
        }
        let value = itemUpdate.value(withFieldName: "count").flatMap { Int($0) }
        let now = ContinuousClock.now
        lock.withLock {
            figures.updates += 1
            figures.lastUpdate = now
            guard let count = value else {
                note("unreadable count in session \(currentSession)")
                return
            }
            defer { figures.lastCount = count }
            if itemUpdate.isSnapshot {
                figures.snapshots += 1
                return
            }
            guard let last = figures.lastCount else {
                note("update \(count) before any snapshot")
                return
            }
            if count == last + 1 { return }
            if count > last + 1 {
                figures.lost += count - last - 1
                note("gap \(last)→\(count) in session \(currentSession)")
            } else {
                figures.duplicated += 1
                note("repeat \(last)→\(count) in session \(currentSession)")
            }
        }
    }

    private var currentSession: String { client?.connectionDetails.sessionId ?? "?" }

    private func note(_ s: String) {
        if figures.anomalies.count < 10 { figures.anomalies.append(s) }
        // Also at once on standard error (the first 200 of the run), with what the client is doing.
        if Self.reported.withLockedValue({ n -> Bool in
            n += 1
            return n <= 200
        }) {
            let status = client.map { "\($0.status)" } ?? "?"
            log(
                "anomaly: client \(index) \(s); status \(status); sessions so far \(figures.sessions), "
                    + "recovery attempts \(figures.recoveryAttempts), recovered \(figures.recovered)")
        }
    }

    private static let reported = NIOLockedValueBox(0)

    func subscription(_ subscription: Subscription, didLoseUpdates lostUpdates: UInt, forItemName itemName: String?, itemPos: UInt) {
        lock.withLock { figures.lostReportedByServer += Int(lostUpdates) }
    }

    func subscription(_ subscription: Subscription, didFailWithErrorCode code: Int, message: String?) {
        lock.withLock { figures.subscriptionErrors.append(code) }
    }

    func subscription(_ subscription: Subscription, didClearSnapshotForItemName itemName: String?, itemPos: UInt) {}
    func subscription(_ subscription: Subscription, didLoseUpdates lostUpdates: UInt, forCommandSecondLevelItemWithKey key: String) {}
    func subscription(
        _ subscription: Subscription, didFailWithErrorCode code: Int, message: String?, forCommandSecondLevelItemWithKey key: String
    ) {}
    func subscription(_ subscription: Subscription, didEndSnapshotForItemName itemName: String?, itemPos: UInt) {}
    func subscriptionDidRemoveDelegate(_ subscription: Subscription) {}
    func subscriptionDidAddDelegate(_ subscription: Subscription) {}
    func subscriptionDidSubscribe(_ subscription: Subscription) {}
    func subscriptionDidUnsubscribe(_ subscription: Subscription) {}
    func subscription(_ subscription: Subscription, didReceiveRealFrequency frequency: RealMaxFrequency?) {}
}
