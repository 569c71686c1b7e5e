import TLCP

/// TLCP-diffs made the plain way, on arrays of UTF-16 units (the units the format counts):
/// the reference `TLCPDiff.make`, which works on UTF-8 bytes in place, must agree with.
enum ReferenceTLCPDiff {
    /// COPY the common prefix, ADD the new middle, DEL the old middle, COPY the common suffix,
    /// leaving out the instructions that are empty to the end. Nil outside the BMP.
    static func make(from base: String, to target: String) -> String? {
        guard TLCPDiff.isDiffable(base), TLCPDiff.isDiffable(target) else { return nil }
        let a = Array(base.utf16)
        let b = Array(target.utf16)
        var prefix = 0
        while prefix < a.count, prefix < b.count, a[prefix] == b[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < a.count - prefix, suffix < b.count - prefix, a[a.count - 1 - suffix] == b[b.count - 1 - suffix] {
            suffix += 1
        }
        let added = b[prefix..<(b.count - suffix)]
        let deleted = a.count - prefix - suffix
        var out = number(prefix)
        if added.isEmpty && deleted == 0 && suffix == 0 { return out }
        out += number(added.count) + String(decoding: added, as: UTF16.self)
        if deleted == 0 && suffix == 0 { return out }
        out += number(deleted)
        if suffix > 0 { out += number(suffix) }
        return out
    }

    /// A count in base-26 letters: capitals for every digit but the last, which is lower case.
    static func number(_ n: Int) -> String {
        var digits: [UInt8] = []
        var v = n
        repeat {
            digits.append(UInt8(v % 26))
            v /= 26
        } while v > 0
        let letters = digits.reversed().enumerated().map { i, d in (i == digits.count - 1 ? 0x61 : 0x41) + d }
        return String(decoding: letters, as: UTF8.self)
    }
}
