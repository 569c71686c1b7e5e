import TLCP

extension SessionEngine {
    /// A subscription as the engine needs it: a value copy taken when `subscribe` is called.
    struct SubscriptionSpec: Sendable, Equatable {
        var mode: SubscriptionMode
        var items: [String]?
        var itemGroup: String?
        var fields: [String]?
        var fieldSchema: String?
        var dataAdapter: String?
        var selector: String?
        var bufferSize: TLCP.RequestedBufferSize?
        var maxFrequency: RequestedFrequency?
        var snapshot: SnapshotRequest?
        var secondLevelFields: [String]?
        var secondLevelFieldSchema: String?
        var secondLevelDataAdapter: String?

        var group: String { itemGroup ?? (items ?? []).joined(separator: " ") }
        var schema: String { fieldSchema ?? (fields ?? []).joined(separator: " ") }
        var hasSecondLevel: Bool { mode == .command && (secondLevelFields != nil || secondLevelFieldSchema != nil) }
    }
}
