import TLCP

/// A data notification's line (without its line end) on its way into the `NotificationLog`,
/// whose page the session's output then writes it from: either text, or the parts of a `U` line
/// whose values another session already encoded (`SharedUpdateEncoding`). The parts are written
/// into the log page as bytes, with no `String` made for the line (making one cost about 600
/// instructions per update with its release, Benchmarks/server-callgrind.sh).
enum DataLine {
    case text(String)
    /// `U,<subscriptionId>,<item>,` followed by `encoded` (valid UTF-8: the encoder's output),
    /// borrowed from a `SharedUpdateEncoding` that the caller holds while the line is
    /// emitted: a line is written into the log and dropped, never kept.
    case update(subscriptionId: Int, item: Int, encoded: UnsafeBufferPointer<UInt8>)

    /// The line's length in bytes.
    var byteCount: Int {
        switch self {
        case .text(let text):
            return text.utf8.count
        case .update(let id, let item, let encoded):
            return UpdateNotification.headLength(subscriptionId: id, item: item) + encoded.count
        }
    }

    /// At least `byteCount`, and found without counting the head's digits: `maxHeadBytes` for
    /// the head of a `U` line (`NotificationLog.append` counts them only when a page has less
    /// room than this; counting them for every line was some 20 instructions per update,
    /// Benchmarks/server-callgrind-functions.sh).
    var maxByteCount: Int {
        switch self {
        case .text(let text): text.utf8.count
        case .update(_, _, let encoded): UpdateNotification.maxHeadBytes + encoded.count
        }
    }

    /// Writes the line's bytes at the start of `out`, which has room for `byteCount` of them;
    /// returns how many it wrote (`byteCount`, or fewer if `out` is shorter).
    func write(into out: UnsafeMutableBufferPointer<UInt8>) -> Int {
        switch self {
        case .text(let text):
            var text = text
            return text.withUTF8 { utf8 in
                let n = min(utf8.count, out.count)
                if n > 0, let source = utf8.baseAddress, let target = out.baseAddress { target.update(from: source, count: n) }
                return n
            }
        case .update(let id, let item, let encoded):
            // The head's bound first: counting its digits costs more than comparing.
            guard let target = out.baseAddress,
                out.count >= UpdateNotification.maxHeadBytes + encoded.count || out.count >= byteCount
            else { return 0 }
            let head = UpdateNotification.writeHead(subscriptionId: id, item: item, into: out)
            if let source = encoded.baseAddress { (target + head).update(from: source, count: encoded.count) }
            return head + encoded.count
        }
    }
}

extension Array where Element == UInt8 {
    /// Appends the UTF-8 of `text` in one copy (`append(contentsOf: text.utf8)` goes through
    /// the generic sequence path, byte by byte).
    mutating func appendUTF8(_ text: String) {
        let copied: Void? = text.utf8.withContiguousStorageIfAvailable { append(contentsOf: $0) }
        if copied == nil { append(contentsOf: text.utf8) }
    }
}
