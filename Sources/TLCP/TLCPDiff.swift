/// TLCP-diff (docs/protocol/TLCP.md §1.7): instructions cycling COPY, ADD, DEL, COPY…, starting
/// with COPY. Counts are base-26 letter numbers (capitals A=0…Z=25 for every digit but the last,
/// which is lower case a=0…z=25). Characters are counted in UTF-16 units.
public enum TLCPDiff {
    public struct Error: Swift.Error, Sendable, Hashable, CustomStringConvertible {
        public var message: String
        public var description: String { "TLCP-diff: \(message)" }
    }

    /// Applies `diff` to `base`. Unlike JSON Patch this cannot blow up: COPY and DEL may not go
    /// past the end of the base and ADD may not go past the end of the diff, so the result is
    /// never longer than `base` and `diff` together, and a count of more than 2^40 is an error
    /// before any arithmetic could overflow.
    public static func apply(_ diff: String, to base: String) throws(Error) -> String {
        // Texts without characters outside the Basic Multilingual Plane (all but a few field
        // values) have one UTF-16 unit per character: their UTF-8 bytes are read in place, a
        // count of units is a count of characters, and the result is written into its string's
        // storage, which base and diff together bound.
        var diff = diff
        var base = base
        let inPlace: Result<String, Error>? = diff.withUTF8 { d in
            base.withUTF8 { b in
                let ascii = isASCII(d) && isASCII(b)
                guard ascii || (isBMP(d) && isBMP(b)) else { return nil }
                var failure: Error?
                let result = String(unsafeUninitializedCapacity: b.count + d.count) { out in
                    do throws(Error) {
                        return try applyUnits(d, to: b, into: out, multiByte: !ascii)
                    } catch {
                        failure = error
                        return 0
                    }
                }
                if let failure { return .failure(failure) }
                return .success(result)
            }
        }
        if let inPlace { return try inPlace.get() }
        return try applyUTF16(diff, to: base)
    }

    /// `apply` for any text, counting UTF-16 units.
    static func applyUTF16(_ diff: String, to base: String) throws(Error) -> String {
        let baseUnits = Array(base.utf16)
        let diffUnits = Array(diff.utf16)
        let out = try [UInt16](unsafeUninitializedCapacity: baseUnits.count + diffUnits.count) { (out, count) throws(Error) in
            count = 0
            count = try diffUnits.withUnsafeBufferPointer { d throws(Error) in
                try baseUnits.withUnsafeBufferPointer { b throws(Error) in try applyUnits(d, to: b, into: out, multiByte: false) }
            }
        }
        return String(decoding: out, as: UTF16.self)
    }

    /// Applies the diff to the base, writing the result into `out` (at least as long as both
    /// together); returns its length. The units are UTF-16 units or the bytes of ASCII text,
    /// one per character, or (`multiByte`) the UTF-8 bytes of text within the BMP, where a
    /// character is a byte that starts one and the continuation bytes after it.
    static func applyUnits<Unit: FixedWidthInteger>(
        _ diff: UnsafeBufferPointer<Unit>, to base: UnsafeBufferPointer<Unit>, into out: UnsafeMutableBufferPointer<Unit>,
        multiByte: Bool
    ) throws(Error) -> Int {
        var written = 0
        var cursor = 0
        var pos = 0
        var step = 0 // 0 copy, 1 add, 2 del
        while pos < diff.count {
            let n = try readNumber(diff, &pos)
            switch step {
            case 0:
                guard let end = end(of: n, in: base, from: cursor, multiByte: multiByte) else {
                    throw Error(message: "COPY(\(n)) past the end of the base")
                }
                for i in cursor..<end {
                    out[written] = base[i]
                    written += 1
                }
                cursor = end
            case 1:
                guard let end = end(of: n, in: diff, from: pos, multiByte: multiByte) else {
                    throw Error(message: "ADD(\(n)) past the end of the diff")
                }
                for i in pos..<end {
                    out[written] = diff[i]
                    written += 1
                }
                pos = end
            default:
                guard let end = end(of: n, in: base, from: cursor, multiByte: multiByte) else {
                    throw Error(message: "DEL(\(n)) past the end of the base")
                }
                cursor = end
            }
            step = (step + 1) % 3
        }
        return written
    }

    /// Where `n` characters from `start` (the start of one) end in `units`; nil past the end.
    static func end<Unit: FixedWidthInteger>(of n: Int, in units: UnsafeBufferPointer<Unit>, from start: Int, multiByte: Bool) -> Int? {
        guard multiByte else { return n <= units.count - start ? start + n : nil }
        var at = start
        for _ in 0..<n {
            guard at < units.count else { return nil }
            at += 1
            while at < units.count, isContinuation(units[at]) { at += 1 }
        }
        return at
    }

    static func readNumber<Unit: FixedWidthInteger>(_ units: UnsafeBufferPointer<Unit>, _ pos: inout Int) throws(Error) -> Int {
        var n = 0
        while pos < units.count {
            let u = units[pos]
            pos += 1
            if u >= 0x41 && u <= 0x5A {
                n = n * 26 + Int(u - 0x41)
                guard n < 1 << 40 else { throw Error(message: "count too large") }
            } else if u >= 0x61 && u <= 0x7A {
                return n * 26 + Int(u - 0x61)
            } else {
                throw Error(message: "unexpected character in a count")
            }
        }
        throw Error(message: "count not terminated by a lower-case letter")
    }

    /// Whether a string may take part in a TLCP-diff (no surrogate pairs, as the protocol
    /// guarantees to clients).
    public static func isDiffable(_ s: String) -> Bool {
        s.unicodeScalars.allSatisfy { $0.value < 0x10000 }
    }

    /// Produces a diff turning `base` into `target`: COPY the common prefix, ADD the new middle,
    /// DEL the old middle, COPY the common suffix. Nil when either string has characters outside
    /// the Basic Multilingual Plane.
    public static func make(from base: String, to target: String) -> String? {
        // Worked out on the strings' UTF-8 bytes in place, and written into the result's own
        // storage (the tests compare it with a reference that works on arrays of UTF-16 units).
        var base = base
        var target = target
        return base.withUTF8 { a in target.withUTF8 { b in makeUTF8(from: a, to: b) } }
    }

    /// `make` on UTF-8 bytes. In text without characters outside the Basic Multilingual Plane
    /// (nil otherwise) each character is one UTF-16 unit, so a count of units is a count of
    /// the bytes that start a character; the common prefix and suffix are cut back to whole
    /// characters.
    static func makeUTF8(from a: UnsafeBufferPointer<UInt8>, to b: UnsafeBufferPointer<UInt8>) -> String? {
        // In ASCII (most field values) every byte is a character, and no count is needed.
        let ascii = isASCII(a) && isASCII(b)
        guard ascii || (isBMP(a) && isBMP(b)) else { return nil }
        func characters(_ bytes: UnsafeBufferPointer<UInt8>) -> Int { ascii ? bytes.count : TLCPDiff.characters(bytes) }
        var prefix = 0
        while prefix < a.count, prefix < b.count, a[prefix] == b[prefix] { prefix += 1 }
        while prefix > 0, (prefix < a.count && isContinuation(a[prefix])) || (prefix < b.count && isContinuation(b[prefix])) {
            prefix -= 1
        }
        var suffix = 0
        while suffix < a.count - prefix, suffix < b.count - prefix, a[a.count - 1 - suffix] == b[b.count - 1 - suffix] {
            suffix += 1
        }
        // The common end's bytes are the same in both texts: it starts a character in both or
        // in neither.
        while suffix > 0, isContinuation(a[a.count - suffix]) { suffix -= 1 }
        let added = UnsafeBufferPointer(rebasing: b[prefix..<(b.count - suffix)])
        let plan = Plan(
            prefix: characters(UnsafeBufferPointer(rebasing: a[..<prefix])), added: characters(added),
            deleted: characters(UnsafeBufferPointer(rebasing: a[prefix..<(a.count - suffix)])),
            suffix: characters(UnsafeBufferPointer(rebasing: a[(a.count - suffix)...])))
        return String(unsafeUninitializedCapacity: plan.length(addedBytes: added.count)) { out in
            var at = 0
            plan.write(into: out, at: &at) { out, at in
                for byte in added {
                    out[at] = byte
                    at += 1
                }
            }
            return at
        }
    }

    /// Whether UTF-8 text has no character outside the Basic Multilingual Plane (no 4-byte
    /// sequence, whose first byte is 0xF0 or above).
    static func isBMP(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        for byte in bytes where byte >= 0xF0 { return false }
        return true
    }

    /// Whether a UTF-8 byte continues a character rather than starting one.
    @inline(__always)
    static func isContinuation<Unit: FixedWidthInteger>(_ byte: Unit) -> Bool { byte & 0xC0 == 0x80 }

    /// Characters in UTF-8 text: the bytes that start one.
    static func characters(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var n = 0
        for byte in bytes where !isContinuation(byte) { n += 1 }
        return n
    }

    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var any: UInt8 = 0
        for byte in bytes { any |= byte }
        return any < 0x80
    }

    /// The instructions of a diff made of one change: COPY(prefix), then ADD(added) and the
    /// added text, DEL(deleted) and COPY(suffix), each left out when it and everything after
    /// it are empty.
    struct Plan {
        var prefix: Int
        var added: Int
        var deleted: Int
        var suffix: Int

        /// How many of the four instructions the diff writes.
        var instructions: Int {
            if suffix > 0 { return 4 }
            if deleted > 0 { return 3 }
            return added > 0 ? 2 : 1
        }

        /// Bytes of the diff when the added text takes `addedBytes`.
        func length(addedBytes: Int) -> Int {
            let n = instructions
            var length = TLCPDiff.numberWidth(prefix)
            if n > 1 { length += TLCPDiff.numberWidth(added) + addedBytes }
            if n > 2 { length += TLCPDiff.numberWidth(deleted) }
            if n > 3 { length += TLCPDiff.numberWidth(suffix) }
            return length
        }

        /// Writes the diff's counts, and the added text through `addedText`, at `at`.
        func write(
            into out: UnsafeMutableBufferPointer<UInt8>, at: inout Int,
            addedText: (UnsafeMutableBufferPointer<UInt8>, inout Int) -> Void
        ) {
            TLCPDiff.writeNumber(prefix, into: out, at: &at)
            guard instructions > 1 else { return }
            TLCPDiff.writeNumber(added, into: out, at: &at)
            addedText(out, &at)
            guard instructions > 2 else { return }
            TLCPDiff.writeNumber(deleted, into: out, at: &at)
            if instructions > 3 { TLCPDiff.writeNumber(suffix, into: out, at: &at) }
        }
    }

    /// Letters a count takes (see `writeNumber`).
    static func numberWidth(_ n: Int) -> Int {
        var width = 1
        var v = n / 26
        while v > 0 {
            width += 1
            v /= 26
        }
        return width
    }

    /// Writes a count in the diff's base-26 letters at `at` (`numberWidth(n)` bytes).
    static func writeNumber(_ n: Int, into out: UnsafeMutableBufferPointer<UInt8>, at: inout Int) {
        let width = numberWidth(n)
        var v = n
        var i = at + width - 1
        out[i] = 0x61 + UInt8(v % 26)
        while i > at {
            v /= 26
            i -= 1
            out[i] = 0x41 + UInt8(v % 26)
        }
        at += width
    }
}
