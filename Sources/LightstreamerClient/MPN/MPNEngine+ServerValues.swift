import TLCP

extension MPNEngine {
    /// Values of an MPN subscription as the server reports them on its `SUB-<id>` item.
    struct ServerValues: Sendable, Equatable {
        var format: String?
        var trigger: String?
        var group: String?
        var schema: String?
        var adapter: String?
        var mode: String?
        var bufferSize: String?
        var maxFrequency: String?
    }
}
