import NIOHTTP1

/// The headers of a WebSocket upgrade request, kept for as long as the WebSocket lives (a
/// `create_session` on it hands them to the Metadata Adapter's `notifyUser`) in one string
/// instead of a dictionary of separately allocated strings: about 300 bytes less per idle
/// WebSocket session. Names are lowercased; a repeated name keeps its last value, as the
/// dictionary did. A header containing NUL, which no valid field carries (RFC 9110 §5.5), is
/// left out.
struct UpgradeHeaders: Sendable {
    /// `name NUL value NUL` per header.
    private let packed: String

    /// No headers: what a WebSocket keeps when no Metadata Adapter reads them
    /// (`MetadataAdapter.readsHTTPHeaders`). An empty string allocates nothing.
    init() {
        packed = ""
    }

    init(_ headers: HTTPHeaders) {
        // Gathered as bytes with the exact capacity, then made a string of just that size:
        // appending to a `String` doubles its capacity as it grows, and the spare room stayed
        // allocated for the WebSocket's whole life (336 bytes for some 180 of headers).
        let kept = headers.filter { !$0.name.utf8.contains(0) && !$0.value.utf8.contains(0) }
            .map { (name: $0.name.lowercased(), value: $0.value) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(kept.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 2 })
        for (name, value) in kept {
            bytes.append(contentsOf: name.utf8)
            bytes.append(0)
            bytes.append(contentsOf: value.utf8)
            bytes.append(0)
        }
        packed = String(decoding: bytes, as: UTF8.self)
    }

    /// The headers by lowercased name.
    var dictionary: [String: String] {
        var map: [String: String] = [:]
        var parts = packed.split(separator: "\u{0}", omittingEmptySubsequences: false).makeIterator()
        while let name = parts.next(), let value = parts.next() {
            map[String(name)] = String(value)
        }
        return map
    }
}
