/// The `U` value codec both ways: applying tokens to the previous values (client) and
/// choosing the shortest tokens for new values (server).
public enum UpdateCodec {
    /// Applies the tokens of one `U` line to the item's values. `values` holds the previous
    /// values (all nil and `isFirst` true before the first update) and must have the schema's
    /// width. Returns, per field, whether it changed. A token count that does not cover the
    /// schema exactly, an "unchanged" marker in the first update, or a diff that does not apply
    /// is a `TLCPLineError` (client error 61).
    @discardableResult
    public static func apply(_ deltas: [FieldDelta], to values: inout [String?], isFirst: Bool) throws(TLCPLineError) -> [Bool] {
        // Not `[Bool](repeating:count:)`: its allocation goes through the runtime's generic
        // path (a metadata lookup per call), several times the cost of this.
        var changed: [Bool] = []
        changed.reserveCapacity(values.count)
        for _ in 0..<values.count { changed.append(false) }
        var i = 0
        for d in deltas {
            let width = d.width
            guard width <= values.count - i else {
                throw TLCPLineError("Update has more fields than the schema's \(values.count)")
            }
            switch d {
            case .unchanged, .unchangedRun:
                if isFirst { throw TLCPLineError("Unchanged marker in the first update of an item") }
            case .null:
                changed[i] = isFirst || values[i] != nil
                values[i] = nil
            case .value(let v):
                changed[i] = isFirst || values[i] != v
                values[i] = v
            case .jsonPatch(let patch):
                guard !isFirst, let base = values[i] else { throw TLCPLineError("JSON Patch on a null or missing value") }
                do {
                    let v = try JSONPatch.apply(patch: patch, to: base)
                    changed[i] = v != base
                    values[i] = v
                } catch {
                    throw TLCPLineError("Cannot apply JSON Patch to field \(i + 1): \(error.message)")
                }
            case .tlcpDiff(let diff):
                guard !isFirst, let base = values[i] else { throw TLCPLineError("TLCP-diff on a null or missing value") }
                do {
                    let v = try TLCPDiff.apply(diff, to: base)
                    changed[i] = v != base
                    values[i] = v
                } catch {
                    throw TLCPLineError("Cannot apply TLCP-diff to field \(i + 1): \(error.message)")
                }
            }
            i += width
        }
        guard i == values.count else {
            throw TLCPLineError("Update has \(i) fields, the schema has \(values.count)")
        }
        return changed
    }

    /// Chooses tokens for `current` given what the client last saw (`previous`, nil before the
    /// first update of the item): unchanged fields become empty tokens, runs of four or more
    /// become `^N`, and a changed field takes the shortest of its literal, a `^T` TLCP-diff and a
    /// `^P` JSON Patch among the `diffs` the client accepts.
    public static func encode(previous: [String?]?, current: [String?], diffs: Set<DiffFormat> = []) -> [FieldDelta] {
        var out: [FieldDelta] = []
        out.reserveCapacity(current.count)
        var run = 0
        func flushRun() {
            guard run > 0 else { return }
            // Empty tokens cost run-1 separators; ^N costs 1 + digits and no separator.
            if run - 1 > 1 + decimalWidth(run) {
                out.append(.unchangedRun(run))
            } else {
                for _ in 0..<run { out.append(.unchanged) }
            }
            run = 0
        }
        for (i, value) in current.enumerated() {
            if let previous, i < previous.count, previous[i] == value {
                run += 1
                continue
            }
            flushRun()
            out.append(bestToken(old: previous.flatMap { i < $0.count ? $0[i] : nil }, new: value, diffs: diffs))
        }
        flushRun()
        return out
    }

    /// Values up to this many encoded bytes are always sent literally.
    static let diffThreshold = 16

    /// The shortest token for a changed field.
    static func bestToken(old: String?, new: String?, diffs: Set<DiffFormat>) -> FieldDelta {
        guard let new else { return .null }
        let literal = FieldDelta.value(new)
        guard let old, !diffs.isEmpty else { return literal }
        let literalLength = literal.encodedLength
        // A useful diff token needs a prefix, counts and the new text: for short values the
        // literal is as short, so do not spend the time (this is the server's hot path).
        guard literalLength > diffThreshold else { return literal }
        var best = literal
        var bestLength = literalLength
        if diffs.contains(.tlcpDiff), let d = TLCPDiff.make(from: old, to: new) {
            let candidate = FieldDelta.tlcpDiff(d)
            let length = candidate.encodedLength
            if length < bestLength {
                best = candidate
                bestLength = length
            }
        }
        // A JSON Patch costs at least ~30 bytes (`[{"op":"replace","path":…}]`): when the
        // TLCP-diff is already shorter than that, skip parsing both documents.
        if diffs.contains(.jsonPatch), bestLength > 30, let patch = jsonPatch(from: old, to: new) {
            let candidate = FieldDelta.jsonPatch(patch)
            if candidate.encodedLength < bestLength { best = candidate }
        }
        return best
    }

    /// A JSON Patch text from `old` to `new` when both are JSON and applying the patch to `old`
    /// reproduces `new` byte for byte (so a client serializing compactly gets the same text).
    static func jsonPatch(from old: String, to new: String) -> String? {
        guard let f = new.utf8.first, f == UInt8(ascii: "{") || f == UInt8(ascii: "["),
            let a = try? JSONValue.parse(old), let b = try? JSONValue.parse(new),
            b.serialized == new
        else { return nil }
        let patch = JSONPatch.make(from: a, to: b)
        // The patch applied to `a` must give `b` itself, so its serialization is `new` too
        // (serializing is a function of the value; compared as values, not serialized again).
        guard let result = try? JSONPatch.apply(patch, to: a), result == b else { return nil }
        return patch.serialized
    }

    static func decimalWidth(_ n: Int) -> Int {
        var w = 1
        var v = n
        while v >= 10 {
            v /= 10
            w += 1
        }
        return w
    }
}

extension FieldDelta {
    /// Bytes the token takes on the wire.
    var encodedLength: Int {
        // Counted over the text's contiguous bytes (`escapedLength`): iterating
        // `utf8.enumerated()` cost some 80 instructions a byte (tlcp-callgrind.sh, `encode-json`).
        switch self {
        case .unchanged: return 0
        case .unchangedRun(let n): return 1 + UpdateCodec.decimalWidth(n)
        case .null: return 1
        case .value(let v): return v.isEmpty ? 1 : FieldDelta.escapedLength(v, leadingSpecials: true)
        case .jsonPatch(let p): return 2 + FieldDelta.escapedLength(p, leadingSpecials: false)
        case .tlcpDiff(let d): return 2 + FieldDelta.escapedLength(d, leadingSpecials: false)
        }
    }
}
