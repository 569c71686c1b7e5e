@testable import LightstreamerServer

// Conveniences the tests use to make and read engine events; the server itself works on
// `EngineEvent` and the encoding's bytes in place.

extension QueuedTableEvent {
    init(sink: any QueuedTableSink, event: TableEvent, shared: SharedUpdateEncoding?) {
        self.init(sink: sink, payload: .event(event, shared))
    }

    /// The event (for `EngineEvent.shared`, made with the encoding's row).
    var event: TableEvent { payload.tableEvent }
    /// The encoding the event may share.
    var shared: SharedUpdateEncoding? { payload.encoding }
}

extension SharedUpdateEncoding {
    /// A copy of the encoded values for a session that last sent `previous`, now sends
    /// `values` and accepts `diffs`, or nil when this encoding does not apply to it.
    func encodedValues(previous: [String?]?, values: [String?], diffs: Set<DiffFormat>) -> [UInt8]? {
        guard applies(previous: previous.map(SentRow.values), values: values), let bytes = encodedBytes(mask: Self.mask(diffs)) else {
            return nil
        }
        return Array(bytes)
    }
}
