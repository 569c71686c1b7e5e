/// Parsing over contiguous UTF-8 bytes. Indexing a `Substring.UTF8View` goes through the
/// standard library's index validation on every step; the hot paths (U lines, request lines)
/// scan an `UnsafeBufferPointer` instead.
typealias Bytes = UnsafeBufferPointer<UInt8>

extension Substring {
    /// Runs `body` over the substring's UTF-8 bytes without copying when they are contiguous
    /// (always, for native strings).
    @inline(__always)
    func withUTF8Bytes<R>(_ body: (Bytes) -> R) -> R {
        if let r = utf8.withContiguousStorageIfAvailable(body) { return r }
        var copy = String(self)
        return copy.withUTF8(body)
    }
}

extension String {
    /// Makes a string from bytes already known to be valid UTF-8 (taken from a Swift string).
    @inline(__always)
    init(validUTF8 bytes: Bytes) {
        self = String(decoding: bytes, as: UTF8.self)
    }
}

extension UnsafeBufferPointer where Element == UInt8 {
    /// The sub-range `lo..<hi` as a buffer (no copy).
    @inline(__always)
    func slice(_ lo: Int, _ hi: Int) -> Bytes {
        Bytes(rebasing: self[lo..<hi])
    }

    @inline(__always)
    func firstIndex(of byte: UInt8, from: Int, to: Int) -> Int? {
        var i = from
        while i < to {
            if self[i] == byte { return i }
            i += 1
        }
        return nil
    }

    /// `firstIndex(of:from:to:)` eight bytes at a time, for scans that usually go far (the end
    /// of a line): each word is tested for a byte equal to `byte` with the classic zero-byte
    /// test on `word ^ pattern`, whose lowest flagged byte is the first match (bytes above a
    /// match may be flagged falsely, never those below). Public for ARI's line framer and
    /// tokenizer.
    @inline(__always)
    public func firstIndexScanningWords(of byte: UInt8, from: Int, to: Int) -> Int? {
        var i = from
        if let base = baseAddress {
            let ones: UInt64 = 0x0101_0101_0101_0101
            let pattern = ones &* UInt64(byte)
            while to - i >= 8 {
                let word = UInt64(littleEndian: UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)) ^ pattern
                let zeros = (word &- ones) & ~word & 0x8080_8080_8080_8080
                if zeros != 0 { return i + zeros.trailingZeroBitCount >> 3 }
                i += 8
            }
        }
        return firstIndex(of: byte, from: i, to: to)
    }
}
