import NIOCore
import NIOPosix
import Testing

@testable import LightstreamerServer

/// RFC 6455 framing over a real socket, frames written byte by byte: each broken rule fails
/// the connection with a close frame carrying the code the RFC names, then the socket closes.
@Suite(.timeLimit(.minutes(1))) struct FrontWebSocketFramingTests {
    typealias F = RawWebSocketFrames

    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let bytes: [UInt8]
        let code: UInt16
        var testDescription: String { name }
    }

    static let invalidUTF8: [UInt8] = [0x77, 0x73, 0xC3, 0x28, 0x6F, 0x6B]

    static let cases: [Case] = [
        Case(name: "unmasked frame", bytes: F.frame(opcode: 0x1, payload: Array("wsok".utf8), masked: false), code: 1002),
        Case(name: "RSV1 set", bytes: F.frame(opcode: 0x1, payload: Array("wsok".utf8), rsv: 0b100), code: 1002),
        Case(name: "RSV3 set", bytes: F.frame(opcode: 0x1, payload: Array("wsok".utf8), rsv: 0b001), code: 1002),
        Case(name: "reserved data opcode 0x3", bytes: F.frame(opcode: 0x3, payload: [1, 2]), code: 1002),
        Case(name: "reserved control opcode 0xB", bytes: F.frame(opcode: 0xB, payload: []), code: 1002),
        Case(name: "ping of 126 bytes", bytes: F.frame(opcode: 0x9, payload: Array(repeating: 0x61, count: 126)), code: 1002),
        Case(name: "fragmented ping", bytes: F.frame(opcode: 0x9, payload: [1], fin: false), code: 1002),
        Case(name: "continuation without a start", bytes: F.frame(opcode: 0x0, payload: Array("wsok".utf8)), code: 1002),
        Case(
            name: "new text frame inside a fragmented message",
            bytes: F.text("ws", fin: false) + F.text("ok"), code: 1002),
        Case(name: "close frame with a one-byte body", bytes: F.frame(opcode: 0x8, payload: [0x03]), code: 1002),
        Case(name: "close frame with code 1005", bytes: F.frame(opcode: 0x8, payload: [0x03, 0xED]), code: 1002),
        Case(name: "text that is not UTF-8", bytes: F.frame(opcode: 0x1, payload: invalidUTF8), code: 1007),
        Case(
            name: "fragmented text that is not UTF-8",
            bytes: F.frame(opcode: 0x1, payload: Array(invalidUTF8[0..<3]), fin: false)
                + F.frame(opcode: 0x0, payload: Array(invalidUTF8[3...])), code: 1007),
        Case(name: "close reason that is not UTF-8", bytes: F.frame(opcode: 0x8, payload: [0x03, 0xE8, 0xC3, 0x28]), code: 1007),
        Case(name: "frame over the size limit", bytes: F.frame(opcode: 0x2, payload: Array(repeating: 0, count: 70_000)), code: 1009),
        Case(
            name: "fragments adding up over the size limit",
            bytes: F.frame(opcode: 0x2, payload: Array(repeating: 0, count: 40_000), fin: false)
                + F.frame(opcode: 0x0, payload: Array(repeating: 0, count: 40_000)), code: 1009),
        // A small message in more frames than `WebSocketInbound.maxFragments` (1,024) allows:
        // 1,025 one-byte fragments, far under the size limit.
        Case(
            name: "more fragments than a message may have",
            bytes: F.frame(opcode: 0x1, payload: [0x61], fin: false)
                + (0..<1_023).flatMap { _ in F.frame(opcode: 0x0, payload: [0x61], fin: false) }
                + F.frame(opcode: 0x0, payload: [0x61]), code: 1009),
    ]

    static func withServer(_ body: (Int, MultiThreadedEventLoopGroup) async throws -> Void) async throws {
        try await FrontIntegrationTests.withServer(configure: { $0.sessions.requestLimit = 65_536 }) { server, group in
            try await body(try #require(server.port), group)
        }
    }

    @Test(arguments: cases)
    func aBrokenRuleFailsTheConnection(_ c: Case) async throws {
        try await Self.withServer { port, group in
            let ws = try await RawTestConnection.webSocket(port: port, group: group)
            #expect(await ws.waitFor(" 101 "))
            try? await ws.send(c.bytes)
            #expect(await ws.waitClosed(), "not closed; received: \(ws.text)")
            #expect(F.closeCode(in: ws.bytes) == c.code)
        }
    }

    /// The fragment limit's other side: exactly 1,024 frames still make a message ("wsok" in
    /// four one-byte fragments and 1,020 empty ones).
    @Test func aMessageInAsManyFragmentsAsAllowedIsAnswered() async throws {
        try await Self.withServer { port, group in
            let ws = try await RawTestConnection.webSocket(port: port, group: group)
            #expect(await ws.waitFor(" 101 "))
            var bytes = F.text("w", fin: false)
            for c in "so".utf8 { bytes += F.frame(opcode: 0x0, payload: [c], fin: false) }
            for _ in 0..<1_020 { bytes += F.frame(opcode: 0x0, payload: [], fin: false) }
            bytes += F.frame(opcode: 0x0, payload: Array("k".utf8))
            try await ws.send(bytes)
            #expect(await ws.waitFor("WSOK"))
            #expect(!ws.isClosed)
            #expect(F.closeCode(in: ws.bytes) == nil)
        }
    }

    @Test func fragmentsWithAControlFrameBetweenMakeOneMessage() async throws {
        try await Self.withServer { port, group in
            let ws = try await RawTestConnection.webSocket(port: port, group: group)
            #expect(await ws.waitFor(" 101 "))
            // "wsok" in two fragments, a ping between them, then a UTF-8 text request.
            try await ws.send(
                F.text("ws", fin: false) + F.frame(opcode: 0x9, payload: [7])
                    + F.frame(opcode: 0x0, payload: Array("ok".utf8)))
            #expect(await ws.waitFor("WSOK"))
            try await ws.send(F.text("control\r\nLS_reqId=1&LS_op=add&LS_subId=1&LS_mode=MERGE&LS_group=é&LS_schema=count&LS_session=nope"))
            #expect(await ws.waitFor("REQERR,1,"))
            #expect(!ws.isClosed)
            #expect(F.closeCode(in: ws.bytes) == nil)
        }
    }
}
