/// A `UD3` update: the item, the id of the SUB that opened its subscription, the snapshot flag
/// and the field map in the adapter's order (docs/ARI.md, "Methods", `UD3`).
public struct ARIUpdate: Sendable, Hashable {
    public var item: String
    public var subscriptionId: String
    public var isSnapshot: Bool
    public var fields: [ARIField]

    public init(item: String, subscriptionId: String, isSnapshot: Bool, fields: [ARIField]) {
        self.item = item
        self.subscriptionId = subscriptionId
        self.isSnapshot = isSnapshot
        self.fields = fields
    }

    /// The fields as the server's listener takes them (a repeated name: the last one wins).
    public var fieldMap: [String: String?] {
        var map: [String: String?] = [:]
        map.reserveCapacity(fields.count)
        for f in fields { map[f.name] = .some(f.value.text) }
        return map
    }
}

/// One field of an update.
public struct ARIField: Sendable, Hashable {
    public var name: String
    public var value: ARIFieldValue

    public init(_ name: String, _ value: ARIFieldValue) {
        self.name = name
        self.value = value
    }
}

/// A field value: text (`S`), or bytes (`Y`, 1.8 senders).
public enum ARIFieldValue: Sendable, Hashable {
    case text(String?)
    case bytes([UInt8]?)

    /// The value as text. Bytes are read as ISO-8859-1, the only byte values the SDKs' API
    /// documents, so each byte is the character with that code (what 1.9 senders put in `S`).
    public var text: String? {
        switch self {
        case .text(let s): return s
        case .bytes(let b):
            guard let b else { return nil }
            var s = String.UnicodeScalarView()
            for byte in b { s.append(Unicode.Scalar(byte)) }
            return String(s)
        }
    }
}
