/// One event of a table on its way from the engine to its sink.
///
/// An update that every session of an item shares travels as `.shared`: its row is the
/// encoding's own `values`, so each session's event holds one reference to objects that all
/// the sessions share, where a `TableEvent` beside its encoding held two. Each reference is a
/// retain on the producer's thread and a release on the session's loop, on a counter that
/// every session's event touches (BENCHMARKS.md, "Shared updates carry one reference").
enum EngineEvent: Sendable {
    /// An event, with the encoding its update may share (nil: none).
    case event(TableEvent, SharedUpdateEncoding?)
    /// `TableEvent.update(item:values:isSnapshot:)` whose values are `encoding.values`.
    case shared(item: Int, isSnapshot: Bool, encoding: SharedUpdateEncoding)

    /// The event as a `TableEvent` and its encoding, moved out.
    consuming func split() -> (TableEvent, SharedUpdateEncoding?) {
        switch consume self {
        case .event(let event, let shared): return (event, shared)
        case .shared(let item, let isSnapshot, let encoding):
            return (.update(item: item, values: encoding.values, isSnapshot: isSnapshot), encoding)
        }
    }

    /// The event as a `TableEvent`.
    var tableEvent: TableEvent {
        switch self {
        case .event(let event, _): event
        case .shared(let item, let isSnapshot, let encoding): .update(item: item, values: encoding.values, isSnapshot: isSnapshot)
        }
    }

    /// The encoding the event may share.
    var encoding: SharedUpdateEncoding? {
        switch self {
        case .event(_, let shared): shared
        case .shared(_, _, let encoding): encoding
        }
    }

    /// The updates the event reports lost (`OV`), else 0.
    var lostUpdates: Int {
        if case .event(.overflow(_, let n), _) = self { return n }
        return 0
    }
}
