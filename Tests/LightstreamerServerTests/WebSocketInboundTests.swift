import NIOCore
import NIOWebSocket
import Testing

@testable import LightstreamerServer

/// `WebSocketInbound`, RFC 6455's rules on a client's frames, without a socket: messages
/// joined from fragments with control frames between, and each violation's close code.
@Suite struct WebSocketInboundTests {
    /// A client frame: masked (with a zero key, so the payload reads as given).
    static func frame(_ opcode: WebSocketOpcode, _ bytes: [UInt8], fin: Bool = true, masked: Bool = true) -> WebSocketFrame {
        WebSocketFrame(
            fin: fin, opcode: opcode, maskKey: masked ? WebSocketMaskingKey([0, 0, 0, 0]) : nil,
            data: ByteBuffer(bytes: bytes))
    }

    static func text(_ s: String, fin: Bool = true) -> WebSocketFrame { frame(.text, Array(s.utf8), fin: fin) }
    static func more(_ s: String, fin: Bool = true) -> WebSocketFrame { frame(.continuation, Array(s.utf8), fin: fin) }

    @Test func wholeAndFragmentedMessagesWithControlFramesBetween() {
        var inbound = WebSocketInbound(maxMessageBytes: 100)
        #expect(inbound.receive(Self.text("wsok")) == .text("wsok"))
        #expect(inbound.receive(Self.text("create_", fin: false)) == .nothing)
        #expect(inbound.receive(Self.frame(.ping, [1, 2, 3])) == .ping(ByteBuffer(bytes: [1, 2, 3])))
        #expect(inbound.receive(Self.frame(.pong, [])) == .nothing)
        #expect(inbound.receive(Self.more("sess", fin: false)) == .nothing)
        #expect(inbound.receive(Self.more("ion")) == .text("create_session"))
        // A character split between two fragments: only the whole message must be UTF-8.
        let e = Array("é".utf8)
        #expect(inbound.receive(Self.frame(.text, [0x61, e[0]], fin: false)) == .nothing)
        #expect(inbound.receive(Self.frame(.continuation, [e[1]])) == .text("aé"))
        #expect(inbound.receive(Self.frame(.binary, [0, 1], fin: false)) == .nothing)
        #expect(inbound.receive(Self.frame(.continuation, [2])) == .binary)
        #expect(inbound.receive(Self.frame(.connectionClose, [0x03, 0xE8, 0x62, 0x79, 0x65])) == .close)
        #expect(!inbound.failed)
    }

    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let frames: @Sendable () -> [WebSocketFrame]
        let code: WebSocketErrorCode
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "unmasked", frames: { [frame(.text, [0x61], masked: false)] }, code: .protocolError),
        Case(name: "continuation without a start", frames: { [more("x")] }, code: .protocolError),
        Case(name: "text inside a message", frames: { [text("a", fin: false), text("b")] }, code: .protocolError),
        Case(name: "fragmented ping", frames: { [frame(.ping, [1], fin: false)] }, code: .protocolError),
        Case(name: "ping of 126 bytes", frames: { [frame(.ping, Array(repeating: 0, count: 126))] }, code: .protocolError),
        Case(name: "close with code 1005", frames: { [frame(.connectionClose, [0x03, 0xED])] }, code: .protocolError),
        Case(name: "close with one byte", frames: { [frame(.connectionClose, [0x03])] }, code: .protocolError),
        Case(
            name: "close reason not UTF-8", frames: { [frame(.connectionClose, [0x03, 0xE8, 0xC3, 0x28])] },
            code: .dataInconsistentWithMessage),
        Case(name: "text not UTF-8", frames: { [frame(.text, [0x61, 0xC3, 0x28])] }, code: .dataInconsistentWithMessage),
        Case(
            name: "first fragment over the limit", frames: { [frame(.binary, Array(repeating: 0, count: 11), fin: false)] },
            code: .messageTooLarge),
        Case(
            name: "fragments adding up over the limit",
            frames: {
                [frame(.text, Array(repeating: 0x61, count: 6), fin: false), frame(.continuation, Array(repeating: 0x61, count: 5))]
            },
            code: .messageTooLarge),
        Case(
            name: "more fragments than allowed",
            frames: { [text("a", fin: false), more("b", fin: false), more("c", fin: false), more("d")] }, code: .messageTooLarge),
    ]

    /// Each violation fails at its last frame with its code, and nothing after counts.
    @Test(arguments: cases)
    func aViolationFailsWithItsCode(_ c: Case) {
        var inbound = WebSocketInbound(maxMessageBytes: 10, maxFragments: 3)
        let frames = c.frames()
        for f in frames.dropLast() { #expect(inbound.receive(f) == .nothing) }
        #expect(inbound.receive(frames[frames.count - 1]) == .fail(c.code))
        #expect(inbound.failed)
        #expect(inbound.receive(Self.text("wsok")) == .nothing)
        #expect(inbound.receive(Self.frame(.ping, [1])) == .nothing)
    }

    /// The limits hold exactly at their value, and a message's count starts again after it.
    @Test func limitsHoldAtTheirValue() {
        var inbound = WebSocketInbound(maxMessageBytes: 10, maxFragments: 3)
        for _ in 0..<3 {
            #expect(inbound.receive(Self.text("abcd", fin: false)) == .nothing)
            #expect(inbound.receive(Self.more("efg", fin: false)) == .nothing)
            #expect(inbound.receive(Self.more("hij")) == .text("abcdefghij"))
        }
    }
}
