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

    init(_ headers: HTTPHeaders) {
        var text = ""
        for (name, value) in headers where !name.utf8.contains(0) && !value.utf8.contains(0) {
            text += name.lowercased()
            text += "\u{0}"
            text += value
            text += "\u{0}"
        }
        packed = text
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
