import NIOConcurrencyHelpers

/// The `MONITOR` Metadata Adapter: only the administrator logs in (`AdminAPI.monitorLoginAllowed`),
/// items and fields are space-separated literals.
final class MonitorMetadataAdapter: MetadataAdapter {
    /// The check inside a struct of its own. A closure stored straight in the generic box is
    /// converted to the box's representation and back by every `withLockedValue` (its `inout`
    /// writes the value back), each time inside one more pair of wrappers: every login attempt
    /// made the chain, and the next call, one level deeper, until the stack overflowed.
    private struct AccessCheck {
        let allows: @Sendable (String?, String?, String?) -> Bool
    }
    private let access = NIOLockedValueBox<AccessCheck?>(nil)

    func attach(_ check: @escaping @Sendable (String?, String?, String?) -> Bool) {
        access.withLockedValue { $0 = AccessCheck(allows: check) }
    }

    /// The administrator is checked by name, password and address.
    var readsHTTPHeaders: Bool { false }

    func notifyUser(user: String?, password: String?, headers: [String: String], clientIP: String?) async throws {
        guard let check = access.withLockedValue({ $0 }), check.allows(user, password, clientIP) else {
            throw MetadataError.access(code: 1, message: "The monitor is for the administrator")
        }
    }

    func items(user: String?, sessionId: String, group: String, dataAdapter: String) async throws -> [String] {
        let names = group.split(separator: " ").map(String.init)
        guard !names.isEmpty, names.allSatisfy(MonitorDataAdapter.items.contains) else {
            throw MetadataError.itemsNotFound(message: "MONITOR items: server sessions mpn_apps")
        }
        return names
    }

    func fields(user: String?, sessionId: String, group: String, dataAdapter: String, schema: String) async throws -> [String] {
        let names = schema.split(separator: " ").map(String.init)
        guard !names.isEmpty, names.count <= 64 else { throw MetadataError.schemaNotFound(message: "Bad field schema") }
        return names
    }

    /// Messages are not for the monitor.
    func notifyUserMessage(user: String?, sessionId: String, message: String) async throws -> String? {
        throw MetadataError.notification(message: "No messages to the monitor")
    }
}
