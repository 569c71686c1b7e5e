import TLCP

@usableFromInline struct FieldRowHeader {
    /// Fields in the row.
    @usableFromInline var count: Int
}

/// The values of one item after one update and their changed flags, in one allocation of
/// trivial bytes: freeing it costs no per-value work (a `[String?]` is destroyed by the
/// runtime's generic per-element code), and values are `String`s only when read.
///
/// Layout of the tail bytes for `n` fields: `n` little-endian `UInt32` end offsets (the high bit
/// marks null), `n` changed flags (0 or 1), then the values' UTF-8 bytes back to back; field
/// `i` spans from the end of field `i - 1` (or from `5n`) to its own end. Immutable once made,
/// so shared freely between the engine's item state, the `ItemUpdate` and the subscription.
/// (`FieldBytes`, the CLI's SPI, reads the same layout.)
///
/// `@unchecked Sendable`: the bytes are written once, before the row is shared, and only read after.
@usableFromInline struct FieldRow: @unchecked Sendable {
    private static let nullBit: UInt32 = 0x8000_0000

    @usableFromInline final class Buffer: ManagedBuffer<FieldRowHeader, UInt8> {}

    @usableFromInline let buffer: Buffer
    /// Fields in the row (also in the buffer's header; kept here so that reading it costs no
    /// exclusivity check on the buffer).
    @usableFromInline let count: Int

    @inline(__always)
    private func withUnsafeMutablePointerToElements<R>(_ body: (UnsafeMutablePointer<UInt8>) -> R) -> R {
        buffer.withUnsafeMutablePointerToElements(body)
    }

    /// A row with room for `n` fields and `dataBytes` bytes of values, to be filled in.
    @inline(__always)
    private static func make(fields n: Int, dataBytes: Int) -> FieldRow {
        let made = Buffer.create(minimumCapacity: 5 * n + dataBytes) { _ in FieldRowHeader(count: n) }
        return FieldRow(buffer: unsafeDowncast(made, to: Buffer.self), count: n)
    }

    /// The byte range of field `i` in the tail, nil when the value is null (or `i` is out of range).
    @inline(__always)
    private static func bounds(_ p: UnsafeMutablePointer<UInt8>, _ n: Int, _ i: Int) -> Range<Int>? {
        guard i >= 0, i < n else { return nil }
        let raw = UnsafeRawPointer(p)
        let end = raw.loadUnaligned(fromByteOffset: 4 * i, as: UInt32.self)
        if end & nullBit != 0 { return nil }
        let start = i == 0 ? 5 * n : Int(raw.loadUnaligned(fromByteOffset: 4 * (i - 1), as: UInt32.self) & ~nullBit)
        return start..<Int(end)
    }

    @inline(__always)
    private static func setEnd(_ p: UnsafeMutablePointer<UInt8>, _ i: Int, _ end: Int, null: Bool) {
        UnsafeMutableRawPointer(p).storeBytes(
            of: UInt32(truncatingIfNeeded: end) | (null ? nullBit : 0), toByteOffset: 4 * i, as: UInt32.self)
    }

    /// Calls `body` with the UTF-8 bytes of field `i` (0-based), nil when null or out of range.
    @inline(__always)
    func withValue<R>(_ i: Int, _ body: (UnsafeBufferPointer<UInt8>?) -> R) -> R {
        let n = count
        return withUnsafeMutablePointerToElements { p in
            guard let r = Self.bounds(p, n, i) else { return body(nil) }
            return body(UnsafeBufferPointer(start: p + r.lowerBound, count: r.count))
        }
    }

    /// The value of field `i` (0-based); nil when null or out of range.
    func string(_ i: Int) -> String? {
        withValue(i) { bytes in bytes.map { String(decoding: $0, as: UTF8.self) } }
    }

    /// Whether field `i` (0-based) changed with the update that made this row.
    func isChanged(_ i: Int) -> Bool {
        let n = count
        guard i >= 0, i < n else { return false }
        return withUnsafeMutablePointerToElements { $0[4 * n + i] != 0 }
    }

    var values: [String?] {
        var out: [String?] = []
        out.reserveCapacity(count)
        for i in 0..<count { out.append(string(i)) }
        return out
    }

    var changedFlags: [Bool] {
        var out: [Bool] = []
        out.reserveCapacity(count)
        for i in 0..<count { out.append(isChanged(i)) }
        return out
    }

    /// A row holding `values` with the `changed` flags (missing flags are false).
    static func make(values: [String?], changed: [Bool]) -> FieldRow {
        var size = 0
        for v in values { size += v?.utf8.count ?? 0 }
        let n = values.count
        let row = make(fields: n, dataBytes: size)
        row.withUnsafeMutablePointerToElements { p in
            var out = 5 * n
            for (i, v) in values.enumerated() {
                if var v {
                    v.withUTF8 { b in
                        if let base = b.baseAddress { (p + out).update(from: base, count: b.count) }
                        out += b.count
                    }
                }
                setEnd(p, i, out, null: values[i] == nil)
                p[4 * n + i] = i < changed.count && changed[i] ? 1 : 0
            }
        }
        return row
    }

    /// Why `applying` refused an update (the message of error 61 to the subscription).
    struct Refusal: Error {
        var message: String
        init(_ message: String) { self.message = message }
    }

    /// The row after the tokens of one `U` line (`line` is the line the tokens were scanned
    /// from) are applied to `previous` (nil for the item's first update), with the JSON Patches
    /// received by field index. Same rules, checks in the same order and same messages as
    /// `UpdateCodec.apply`.
    static func applying(
        _ t: UpdateLineTokens, line: UnsafeBufferPointer<UInt8>, to previous: FieldRow?, width n: Int
    ) -> Result<(FieldRow, [Int: String]), Refusal> {
        guard let previous else { return applying(t, line: line, previous: nil, previousCount: 0, width: n) }
        // The previous row's bytes are read through one pointer, valid while the closure runs.
        return previous.withUnsafeMutablePointerToElements { p in
            applying(t, line: line, previous: UnsafePointer(p), previousCount: previous.count, width: n)
        }
    }

    /// `applying` with the previous row's tail bytes (nil before the first update).
    private static func applying(
        _ t: UpdateLineTokens, line: UnsafeBufferPointer<UInt8>, previous prev: UnsafePointer<UInt8>?,
        previousCount pn: Int, width n: Int
    ) -> Result<(FieldRow, [Int: String]), Refusal> {
        let isFirst = prev == nil
        @inline(__always)
        func previousRange(_ f: Int) -> Range<Int>? {
            guard let prev else { return nil }
            return bounds(UnsafeMutablePointer(mutating: prev), pn, f)
        }
        func previousString(_ f: Int) -> String? {
            guard let prev, let r = previousRange(f) else { return nil }
            return String(decoding: UnsafeBufferPointer(start: prev + r.lowerBound, count: r.count), as: UTF8.self)
        }
        // First pass: checks, and the size of the new values.
        var size = 0
        var field = 0
        var computed: [Int: String] = [:]
        var patches: [Int: String] = [:]
        let tokens = t.tokens
        for tok in tokens {
            let w = tok.count
            guard w <= n - field else { return .failure(Refusal("Update has more fields than the schema's \(n)")) }
            switch tok.kind {
            case .unchanged:
                if isFirst { return .failure(Refusal("Unchanged marker in the first update of an item")) }
                for f in field..<(field + w) { size += previousRange(f)?.count ?? 0 }
            case .null: break
            case .literal: size += tok.end - tok.start
            case .decoded:
                switch t.decoded[tok.start] {
                case .value(let v): size += v.utf8.count
                case .jsonPatch(let patch):
                    guard !isFirst, let base = previousString(field) else {
                        return .failure(Refusal("JSON Patch on a null or missing value"))
                    }
                    do {
                        let v = try JSONPatch.apply(patch: patch, to: base)
                        computed[field] = v
                        patches[field] = patch
                        size += v.utf8.count
                    } catch {
                        return .failure(Refusal("Cannot apply JSON Patch to field \(field + 1): \(error.message)"))
                    }
                case .tlcpDiff(let diff):
                    guard !isFirst, let base = previousString(field) else {
                        return .failure(Refusal("TLCP-diff on a null or missing value"))
                    }
                    do {
                        let v = try TLCPDiff.apply(diff, to: base)
                        computed[field] = v
                        size += v.utf8.count
                    } catch {
                        return .failure(Refusal("Cannot apply TLCP-diff to field \(field + 1): \(error.message)"))
                    }
                case .unchanged, .unchangedRun, .null: break // not produced by the scan
                }
            }
            field += w
        }
        guard field == n else { return .failure(Refusal("Update has \(field) fields, the schema has \(n)")) }
        guard 5 * n + size < Int(nullBit) else { return .failure(Refusal("Update too large")) }
        // Second pass: the bytes.
        let row = make(fields: n, dataBytes: size)
        row.withUnsafeMutablePointerToElements { p in
            let flags = p + 4 * n
            var out = 5 * n
            var field = 0
            @inline(__always)
            func write(_ from: UnsafePointer<UInt8>?, _ count: Int) {
                if let from, count > 0 { (p + out).update(from: from, count: count) }
                out += count
            }
            for tok in tokens {
                switch tok.kind {
                case .unchanged:
                    for f in field..<(field + tok.count) {
                        if let prev, let r = previousRange(f) {
                            write(prev + r.lowerBound, r.count)
                            setEnd(p, f, out, null: false)
                        } else {
                            setEnd(p, f, out, null: true)
                        }
                        flags[f] = 0
                    }
                case .null:
                    setEnd(p, field, out, null: true)
                    flags[field] = isFirst || previousRange(field) != nil ? 1 : 0
                case .literal:
                    let count = tok.end - tok.start
                    let from = line.baseAddress.map { $0 + tok.start }
                    var same = false
                    if let prev, let r = previousRange(field), let from {
                        same = sameText(
                            UnsafeBufferPointer(start: prev + r.lowerBound, count: r.count), UnsafeBufferPointer(start: from, count: count))
                    }
                    write(from, count)
                    setEnd(p, field, out, null: false)
                    flags[field] = same ? 0 : 1
                case .decoded:
                    var value: String
                    var changed: Bool
                    switch t.decoded[tok.start] {
                    case .value(let v):
                        value = v
                        changed = isFirst || previousString(field) != v
                    case .jsonPatch, .tlcpDiff:
                        value = computed[field] ?? ""
                        changed = previousString(field) != value
                    case .unchanged, .unchangedRun, .null:
                        setEnd(p, field, out, null: true)
                        flags[field] = 0
                        field += tok.count
                        continue
                    }
                    value.withUTF8 { write($0.baseAddress, $0.count) }
                    setEnd(p, field, out, null: false)
                    flags[field] = changed ? 1 : 0
                }
                field += tok.count
            }
        }
        return .success((row, patches))
    }

    /// Whether two UTF-8 texts are equal as `String`s compare them.
    @inline(__always)
    private static func sameText(_ old: UnsafeBufferPointer<UInt8>, _ new: UnsafeBufferPointer<UInt8>) -> Bool {
        if old.count == new.count {
            var k = 0
            while k < old.count, old[k] == new[k] { k += 1 }
            if k == old.count { return true }
        }
        // Different bytes are different strings unless non-ASCII text is involved
        // (canonically equivalent forms compare equal).
        var ascii = true
        for b in old where b >= 0x80 { ascii = false }
        for b in new where b >= 0x80 { ascii = false }
        if ascii { return false }
        return String(decoding: old, as: UTF8.self) == String(decoding: new, as: UTF8.self)
    }
}
