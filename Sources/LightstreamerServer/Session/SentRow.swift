/// The row a session last sent for an item of a subscription, what its next update's
/// "unchanged" values refer to (`SessionTable.rows`).
///
/// A row that came with the engine's shared encoding is kept as that encoding, moved out of
/// the event that brought it: keeping its `values` instead cost a retain of the new row and a
/// release of the old one, and dropping the event a release of the encoding, on counters
/// that every session of the update touches, from the producer's thread and from every event
/// loop at once (BENCHMARKS.md, "Rows kept as their encodings").
enum SentRow: Sendable {
    /// Values the session encoded by itself.
    case values([String?])
    /// The `values` of an encoding the session shared.
    case shared(SharedUpdateEncoding)

    /// The row's values.
    var values: [String?] {
        switch self {
        case .values(let values): values
        case .shared(let encoding): encoding.values
        }
    }
}
