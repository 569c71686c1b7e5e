import Synchronization
import TLCP

/// The encoding of one update of one item for one field schema, shared by every session
/// that receives it on top of the same previous row.
///
/// A `U` line's values are a pure function of three things: the row the session last sent
/// for the item (`previous`), the row it sends now (`values`) and the diff formats the
/// session accepts. The engine projects an update once per field schema, so the sessions
/// subscribed to an item with the same fields usually receive the same `values` on top of
/// the same `previous`: the first of them encodes the values, the others reuse the bytes and
/// only write their own `U,<subId>,<item>,` head.
///
/// A session uses the shared bytes only when its own previous row and the row it sends are
/// equal to the ones they were computed for (`applies(previous:values:)` checks both); any
/// session whose history diverged (frequency limits, conflation, a snapshot, a late start, a
/// selector) falls back to its own encoding, so sharing never changes what a session receives.
///
/// `@unchecked Sendable`: its rows are immutable, and its only other state is the pointer to
/// the first encoding, published once with an atomic exchange to an object never changed
/// afterwards.
final class SharedUpdateEncoding: @unchecked Sendable {
    /// The row of the previous update of this item and schema (nil: there was none).
    let previous: [String?]?
    /// The row of this update.
    let values: [String?]

    /// The first encoding made (an `Encoded`, retained once here and released in `deinit`),
    /// with the diff formats it was made for: sessions almost always accept the same formats;
    /// others encode by themselves. Set once, then only read: every session of the update
    /// reads it, from every event loop, so it is an atomic pointer rather than a lock, whose
    /// every use wrote to a line all the loops share. A raw pointer rather than a reference:
    /// loading a reference retained the `Encoded` and its bytes for every session and
    /// released them again, atomic operations on counters that all the update's sessions
    /// touch (BENCHMARKS.md, "Encoded bytes read in place").
    /// Stored in the object (`Atomic`): a `ManagedAtomic` was an object of its own for every
    /// update, and reading it a call for every session.
    private let published = Atomic<UnsafeRawPointer?>(nil)

    /// Encoded values and the diff formats (`mask`) they were made for, in a buffer of their
    /// own that lives as long as this object.
    private final class Encoded {
        let mask: UInt8
        let bytes: UnsafeMutableBufferPointer<UInt8>
        init(mask: UInt8, bytes: [UInt8]) {
            self.mask = mask
            self.bytes = .allocate(capacity: bytes.count)
            _ = self.bytes.initialize(from: bytes)
        }
        deinit { bytes.deallocate() }
    }

    /// Where the elements of `values` and of `previous` are: a session's row kept as the
    /// encoding that brought it (`SentRow.shared`) is compared by these, read from the object
    /// without touching its rows' counts of references. Both buffers live as long as this
    /// object and never change, so two equal addresses are one buffer.
    private let valuesAddress: UnsafeRawPointer?
    private let previousAddress: UnsafeRawPointer?

    init(previous: [String?]?, values: [String?]) {
        self.previous = previous
        self.values = values
        valuesAddress = values.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
        previousAddress = previous?.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
    }

    deinit {
        if let p = published.load(ordering: .acquiring) { Unmanaged<Encoded>.fromOpaque(p).release() }
    }

    /// Whether this encoding applies to a session that last sent `previous` and now sends
    /// `values` (its formats aside, see `encodedBytes(mask:)`).
    ///
    /// Sessions that received the engine's rows hold these very buffers, so the check is two
    /// pointer comparisons (`==` on the arrays, which compares identity only after a call and
    /// a count check, cost about 50 instructions per update, Benchmarks/server-callgrind.sh).
    @inline(__always)
    func applies(previous sessionPrevious: SentRow?, values sessionValues: [String?]) -> Bool {
        Self.same(sessionValues, values) && applies(previous: sessionPrevious)
    }

    /// `applies(previous:values:)` for a session that sends this encoding's own `values`.
    @inline(__always)
    func applies(previous sessionPrevious: SentRow?) -> Bool {
        switch sessionPrevious {
        case nil:
            return previous == nil
        case .shared(let sent)?:
            // The usual case: the session's row is the previous update's encoding, whose
            // values are this one's `previous`.
            if let address = sent.valuesAddress, address == previousAddress { return true }
            return Self.same(sent.values, previous)
        case .values(let sent)?:
            return Self.same(sent, previous)
        }
    }

    /// The encoded values for sessions with the formats `mask(diffs)`, made on the first call,
    /// or nil when the first were made for other formats. The bytes stay valid, unchanged,
    /// as long as this object lives: the caller holds it while it reads them
    /// (`withExtendedLifetime`). Check `applies(previous:values:)` first.
    func encodedBytes(mask: UInt8) -> UnsafeBufferPointer<UInt8>? {
        let p = published.load(ordering: .acquiring) ?? publish(mask: mask)
        return Unmanaged<Encoded>.fromOpaque(p)._withUnsafeGuaranteedRef { encoded in
            encoded.mask == mask ? UnsafeBufferPointer(encoded.bytes) : nil
        }
    }

    #if DEBUG
    /// The published encoding, for tests that check it is freed with this object.
    var publishedEncoding: AnyObject? {
        published.load(ordering: .acquiring).map { Unmanaged<Encoded>.fromOpaque($0).takeUnretainedValue() }
    }
    #endif

    /// Encodes for `mask` and publishes the result unless another session did first (two may
    /// encode at once: the first stored wins, and a session with other formats than the
    /// winner's encodes by itself); returns what is published. The formats' set is one of the
    /// sessions' shared ones: made here, its two inserts cost some 2,900 instructions per
    /// update of an item (Benchmarks/server-callgrind.sh).
    private func publish(mask: UInt8) -> UnsafeRawPointer {
        let encoded = Encoded(
            mask: mask,
            bytes: UpdateNotification.encodedValues(
                UpdateCodec.encode(previous: previous, current: values, diffs: SessionStateMachine.diffSet(mask: mask))))
        let mine = UnsafeRawPointer(Unmanaged.passRetained(encoded).toOpaque())
        let (stored, winner) = published.compareExchange(expected: nil, desired: mine, ordering: .acquiringAndReleasing)
        // A failed exchange found the winner's pointer (only an exchange stores, and nothing
        // clears it).
        guard !stored, let winner else { return mine }
        Unmanaged<Encoded>.fromOpaque(mine).release()
        return winner
    }

    /// Whether two rows are equal: the same buffer, or else equal values.
    @inline(__always)
    static func same(_ a: [String?], _ b: [String?]) -> Bool {
        let identical = a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in a.baseAddress == b.baseAddress && a.count == b.count }
        }
        return identical || a == b
    }

    @inline(__always)
    static func same(_ a: [String?]?, _ b: [String?]?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case (let a?, let b?): same(a, b)
        default: false
        }
    }

    /// The formats as bits: comparing two sets costs hashing, which this path cannot afford.
    static func mask(_ diffs: Set<DiffFormat>) -> UInt8 {
        var mask: UInt8 = 0
        for format in diffs {
            switch format {
            case .jsonPatch: mask |= 1
            case .tlcpDiff: mask |= 2
            }
        }
        return mask
    }
}
