/// WebSocket frames as raw bytes, rules or no rules, for the framing tests: any opcode, RSV
/// bits, FIN, masked or not, any payload length.
enum RawWebSocketFrames {
    static func frame(opcode: UInt8, payload: [UInt8], fin: Bool = true, rsv: UInt8 = 0, masked: Bool = true) -> [UInt8] {
        var out: [UInt8] = [(fin ? 0x80 : 0) | ((rsv & 0x7) << 4) | (opcode & 0x0F)]
        let maskBit: UInt8 = masked ? 0x80 : 0
        if payload.count < 126 {
            out.append(maskBit | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            out.append(maskBit | 126)
            out.append(UInt8(payload.count >> 8))
            out.append(UInt8(payload.count & 0xFF))
        } else {
            out.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((payload.count >> shift) & 0xFF)) }
        }
        if masked {
            let mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
            out.append(contentsOf: mask)
            for (i, b) in payload.enumerated() { out.append(b ^ mask[i % 4]) }
        } else {
            out.append(contentsOf: payload)
        }
        return out
    }

    static func text(_ s: String, fin: Bool = true) -> [UInt8] { frame(opcode: 0x1, payload: Array(s.utf8), fin: fin) }

    /// The status code of the first close frame (opcode 0x8, unmasked, from the server) found
    /// after the end of the HTTP upgrade response in `received`; nil if anything follows it.
    static func closeCode(in received: [UInt8]) -> UInt16? {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard var i = (0...(max(received.count - 4, 0))).first(where: { received[$0...].starts(with: separator) }) else {
            return nil
        }
        i += 4
        // Walk the server's frames.
        while i + 2 <= received.count {
            let opcode = received[i] & 0x0F
            var length = Int(received[i + 1] & 0x7F)
            var start = i + 2
            if length == 126 {
                guard start + 2 <= received.count else { return nil }
                length = Int(received[start]) << 8 | Int(received[start + 1])
                start += 2
            } else if length == 127 {
                guard start + 8 <= received.count else { return nil }
                length = received[start..<start + 8].reduce(0) { $0 << 8 | Int($1) }
                start += 8
            }
            if opcode == 0x8 {
                guard length >= 2, start + 2 <= received.count else { return nil }
                // Nothing may follow a close frame (RFC 6455 §5.5.1).
                guard start + length == received.count else { return nil }
                return UInt16(received[start]) << 8 | UInt16(received[start + 1])
            }
            i = start + length
        }
        return nil
    }
}
