import TLCP

/// The parts of a session's state that most sessions never use: a bandwidth limit (what the
/// client asked for, the Metadata Adapter's cap for the user, the token bucket) and client
/// messages (sequences, outcomes owed). Kept inline they were some 100 bytes of every
/// session, idle or not; out of line (`SessionRareStorage`) they cost a session that never
/// uses them one pointer (BENCHMARKS.md, "Smaller sessions; closed WebSockets freed").
struct SessionRareState: Sendable {
    var requestedBandwidth: RequestedBandwidth?
    /// The Metadata Adapter's bandwidth limit for the user (kbps).
    var allowedMaxBandwidth: Double?
    var limiter = BandwidthLimiter()
    var sequences: [String: MessageSequenceState] = [:]
    var pendingMessages: [Int: PendingMessage] = [:]
    var nextMessageId = 1
    /// Messages waiting in `sequences` for a missing progressive (all sequences together).
    var queuedMessageCount = 0
}

/// A `SessionRareState` in a box of its own, made on the first write (reads before that see
/// the defaults), copied on write like an array: a copy of the machine that holds it never
/// changes the original.
struct SessionRareStorage: Sendable {
    /// Mutated only through `value`'s `_modify`, after making sure this storage is its only
    /// owner (`isKnownUniquelyReferenced`): the same rule as the standard library's
    /// copy-on-write buffers, which is what makes the unchecked `Sendable` sound.
    private final class Box: @unchecked Sendable {
        /// Unchecked: the dynamic exclusivity check of a class's stored property, on every
        /// read of `isBandwidthUnlimited`, cost some 10 instructions per update
        /// (Benchmarks/server-callgrind.sh); the copy-on-write rule above already keeps each
        /// box to one owner, touched under its session's lock.
        @exclusivity(unchecked) var value: SessionRareState
        init(_ value: SessionRareState) { self.value = value }
    }

    private var box: Box?
    private static let defaults = SessionRareState()

    init() {}

    /// Whether the box was made (a test's view; reads never make it).
    var isAllocated: Bool { box != nil }

    /// Whether no bandwidth limit applies (read on every flush of a stream: a plain getter,
    /// where a `_read` accessor's coroutine allocated its frame, a `malloc` and a `free` per
    /// call, some 30 instructions per update, Benchmarks/server-callgrind.sh).
    var isBandwidthUnlimited: Bool { box?.value.limiter.isUnlimited ?? true }

    /// A copy of the state (the defaults until the first write).
    var value: SessionRareState {
        get { box?.value ?? Self.defaults }
        _modify {
            // Uniqueness is checked before `box` is bound to a local, which would be a second
            // reference.
            let owned: Box
            if isKnownUniquelyReferenced(&box), let box {
                owned = box
            } else {
                owned = Box(box?.value ?? Self.defaults)
                box = owned
            }
            yield &owned.value
        }
    }
}
