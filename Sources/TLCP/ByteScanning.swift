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
}
