/// Cuts the byte stream of an ARI connection into lines. A line ends at LF, with or without a
/// CR before it (Node remotes send LF alone); a UTF-8 byte order mark at the very start of the
/// stream is dropped (1.9). A line past `limits.maxLineLength` is reported once as an error and
/// its bytes are dropped up to its end, so memory stays bounded whatever the peer sends.
public struct ARILineFramer: Sendable {
    public let limits: ARILimits
    private var pending: [UInt8] = []
    private var discarding = false
    private var atStreamStart = true

    public init(limits: ARILimits = .default) {
        self.limits = limits
    }

    /// Bytes held for a line not yet ended.
    public var pendingByteCount: Int { pending.count }

    /// Feeds bytes; returns each line they complete, or the error that line is.
    public mutating func append(_ bytes: some Sequence<UInt8>) -> [Result<String, ARIProtocolError>] {
        var lines: [Result<String, ARIProtocolError>] = []
        for b in bytes {
            if b == 0x0A {
                if discarding {
                    discarding = false
                } else {
                    if pending.last == 0x0D { pending.removeLast() }
                    lines.append(finishLine())
                }
                pending.removeAll(keepingCapacity: pending.count <= 4096)
                continue
            }
            if discarding { continue }
            // The terminator's CR does not count toward the limit.
            guard pending.count < limits.maxLineLength + 1 else {
                pending.removeAll()
                discarding = true
                lines.append(.failure(.lineTooLong(limit: limits.maxLineLength)))
                continue
            }
            pending.append(b)
        }
        return lines
    }

    private mutating func finishLine() -> Result<String, ARIProtocolError> {
        var bytes = pending[...]
        if atStreamStart {
            atStreamStart = false
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        }
        if bytes.count > limits.maxLineLength { return .failure(.lineTooLong(limit: limits.maxLineLength)) }
        guard let line = String(validating: bytes, as: UTF8.self) else { return .failure(.invalidUTF8) }
        return .success(line)
    }

    /// The bytes to write for `line` (CR-LF terminated; every SDK reads that).
    public static func frame(_ line: String) -> [UInt8] {
        var bytes = Array(line.utf8)
        bytes.append(0x0D)
        bytes.append(0x0A)
        return bytes
    }
}
