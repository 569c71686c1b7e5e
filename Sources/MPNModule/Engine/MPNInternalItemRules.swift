import LightstreamerServer
import NIOConcurrencyHelpers
import TLCP

/// Who may read the internal MPN items: a `DEV-<device>`, `SUBS-<device>` or `SUB-<subscription>`
/// item is served only to a session in which its device was registered (`MPNREG`), and the
/// application's Metadata Adapter is consulted for it like for any item (`notifyNewTable`, and
/// `notifyTableClosed` after). The application's mode, frequency and buffer rules are not applied:
/// they are written for the application's items, and the official clients subscribe these items
/// in fixed modes, unfiltered.
///
/// A refused item fails the subscription with REQERR 21 (the code of an item group the Metadata
/// Adapter refuses), the same whether the item does not exist or belongs to another session's
/// device, so that ids cannot be probed.
final class MPNInternalItemRules: MetadataAdapter {
    let application: any MetadataAdapter
    let access: MPNSessionDevices
    /// The device an internal item belongs to (nil: no such item).
    let owner: @Sendable (String) -> String?

    init(application: any MetadataAdapter, access: MPNSessionDevices, owner: @escaping @Sendable (String) -> String?) {
        self.application = application
        self.access = access
        self.owner = owner
    }

    func items(user: String?, sessionId: String, group: String, dataAdapter: String) async throws -> [String] {
        let names = group.split(separator: " ").map(String.init)
        guard !names.isEmpty else { throw MetadataError.itemsNotFound(message: "Empty item group") }
        for name in names {
            guard let device = owner(name), access.isRegistered(device: device, in: sessionId) else {
                throw MetadataError.itemsNotFound(message: "MPN item \(name) not available to this session")
            }
        }
        return names
    }

    func fields(user: String?, sessionId: String, group: String, dataAdapter: String, schema: String) async throws -> [String] {
        let names = schema.split(separator: " ").map(String.init)
        guard !names.isEmpty else { throw MetadataError.schemaNotFound(message: "Empty field schema") }
        return names
    }

    func notifyNewTable(user: String?, sessionId: String, table: TableInfo) async throws {
        try await application.notifyNewTable(user: user, sessionId: sessionId, table: table)
    }

    func notifyTableClosed(sessionId: String, table: TableInfo) {
        application.notifyTableClosed(sessionId: sessionId, table: table)
    }
}

/// The devices registered in each session, dropped when the server says the session closed
/// (`MPNRequestHandler.sessionClosed`). As a bound besides, at most the `maxSessions` most
/// recent sessions are kept (the oldest are forgotten first; a forgotten session re-registers
/// its device, as clients do on reconnection).
final class MPNSessionDevices: Sendable {
    static let maxSessions = 100_000

    private struct State {
        var devices: [String: Set<String>] = [:]
        var order: [String] = []
        var head = 0
    }

    private let state = NIOLockedValueBox(State())

    func register(device: String, in sessionId: String) {
        state.withLockedValue { s in
            if s.devices[sessionId] == nil {
                s.order.append(sessionId)
                while s.order.count - s.head > Self.maxSessions {
                    s.devices.removeValue(forKey: s.order[s.head])
                    s.head += 1
                }
                if s.head > 1024, s.head * 2 > s.order.count {
                    s.order.removeFirst(s.head)
                    s.head = 0
                }
            }
            s.devices[sessionId, default: []].insert(device)
        }
    }

    /// Drops a closed session (its place in `order` goes when it reaches the head).
    func forget(_ sessionId: String) {
        state.withLockedValue { _ = $0.devices.removeValue(forKey: sessionId) }
    }

    func isRegistered(device: String, in sessionId: String) -> Bool {
        state.withLockedValue { $0.devices[sessionId]?.contains(device) ?? false }
    }
}
