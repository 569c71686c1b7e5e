import Foundation
import NIOConcurrencyHelpers
import NIOPosix
import Testing

@testable import LightstreamerClient

/// The real client, over a real socket, against a server that sends values no well-behaved
/// server sends (docs/RELIABILITY.md, "Numbers from a server"): the bad value fails its own
/// subscription, and the session and the other subscriptions go on.
@Suite struct HostileServerEndToEndTests {
    /// A 99,999-member JSON object (100,000 values with the object itself, the most a document
    /// may hold by default), then a JSON Patch of 600 operations on it. Parsing the
    /// object is linear (its repeated-key check goes through a hash table), and the patch is
    /// charged the document's size per operation, so it is refused past `JSONPatch.Limits`'
    /// `maxWork` instead of running for as long as the server's line allows.
    @Test(arguments: [ScriptedTLCPServer.Transport.httpStreaming, .webSocket])
    func aLongPatchOnAWideObjectFailsItsSubscriptionOnly(transport: ScriptedTLCPServer.Transport) async throws {
        let wide = "{" + (0..<99_999).map { #""k\#($0)":0"# }.joined(separator: ",") + "}"
        let operation = #"{"op":"replace","path":"/k0","value":1}"#
        let patch = "^P[" + Array(repeating: operation, count: 600).joined(separator: ",") + "]"
        let group = MultiThreadedEventLoopGroup.singleton
        let plainSubId = NIOLockedValueBox<String?>(nil)
        let server = try await ScriptedTLCPServer.start(group: group, transport: transport) { request, stream in
            if request.path.contains("create_session") {
                return .init(lines: ["CONOK,S1,50000,5000,*", "LOOP,0"], open: false)
            }
            if request.path.contains("bind_session") {
                return .init(lines: ["CONOK,S1,50000,5000,*"], open: true)
            }
            var answers: [String] = []
            for r in request.requests {
                guard let reqId = r["LS_reqId"] else { continue }
                answers.append("REQOK,\(reqId)")
                guard r["LS_op"] == "add", let subId = r["LS_subId"] else { continue }
                if r["LS_group"] == "wide" {
                    stream.send(["SUBOK,\(subId),1,1", "U,\(subId),1,\(wide)", "U,\(subId),1,\(patch)"])
                } else {
                    plainSubId.withLockedValue { $0 = subId }
                    stream.send(["SUBOK,\(subId),1,1", "U,\(subId),1,first"])
                }
            }
            return .init(lines: answers, open: false)
        }
        defer { Task { await server.stop() } }

        let (client, events) = Self.client(of: server, on: transport.forced)
        let wideSub = Subscription(subscriptionMode: .MERGE, item: "wide", fields: ["value"])
        let wideUpdates = UpdateRecorder()
        wideSub.addDelegate(wideUpdates)
        let plainSub = Subscription(subscriptionMode: .MERGE, item: "plain", fields: ["value"])
        let plainUpdates = UpdateRecorder()
        plainSub.addDelegate(plainUpdates)
        client.subscribe(wideSub)
        client.subscribe(plainSub)
        client.connect()

        try await waitUntil(seconds: 60) { !wideUpdates.failures.isEmpty }
        let failure = wideUpdates.failures.first
        #expect(failure?.code == 61)
        #expect(
            failure?.message == "Cannot apply JSON Patch to field 1: the patch's operations would walk more than 50000000 values",
            "\(String(describing: failure))")
        #expect(wideUpdates.values("value").count == 1, "the object, and not the patched one")
        #expect(wideUpdates.values("value").first?.utf8.count == wide.utf8.count)

        // The session goes on: the other subscription gets what the server sends next.
        try await waitUntil { plainUpdates.values("value") == ["first"] }
        let subId = try #require(plainSubId.withLockedValue { $0 })
        server.stream.send(["U,\(subId),1,second"])
        try await waitUntil { plainUpdates.values("value") == ["first", "second"] }
        #expect(events.statuses.last == "CONNECTED:\(transport.forced.rawValue)", "\(events.statuses)")
        #expect(events.serverErrors.isEmpty)
        client.disconnect()
    }

    /// A line past the client's 16 MiB bound (`LineSplitter.maxLineLength`), sent without its
    /// end: the client gives the stream up and binds again, rather than holding the bytes while
    /// waiting for an LF that never comes.
    @Test func aLineLongerThanTheBoundEndsTheStream() async throws {
        let binds = NIOLockedValueBox(0)
        let server = try await ScriptedTLCPServer.start(group: MultiThreadedEventLoopGroup.singleton) { request, _ in
            if request.path.contains("create_session") {
                return .init(lines: ["CONOK,S1,50000,5000,*", "LOOP,0"], open: false)
            }
            if request.path.contains("bind_session") {
                binds.withLockedValue { $0 += 1 }
                // A keep-alive of a minute: the client does not take the stream as stalled
                // while the test runs, so only the line's bound can end it.
                return .init(lines: ["CONOK,S1,50000,60000,*"], open: true)
            }
            return .init(lines: request.requests.compactMap { $0["LS_reqId"].map { "REQOK,\($0)" } }, open: false)
        }
        defer { Task { await server.stop() } }
        let (client, events) = Self.client(of: server, on: .HTTP_STREAMING)
        client.connect()
        try await waitUntil { events.statuses.last == "CONNECTED:HTTP-STREAMING" && binds.withLockedValue { $0 } == 1 }

        // 16 MiB and one byte, in 1 MiB chunks, and no LF.
        let piece = String(repeating: "x", count: 1 << 20)
        for _ in 0..<16 { #expect(server.stream.send(unterminated: piece)) }
        #expect(server.stream.send(unterminated: "x"))
        try await waitUntil(seconds: 30) { binds.withLockedValue { $0 } >= 2 }
        #expect(events.statuses.contains("DISCONNECTED:TRYING-RECOVERY"), "\(events.statuses)")
        #expect(!events.statuses.contains("STALLED"), "\(events.statuses)")
        #expect(events.serverErrors.isEmpty)
        client.disconnect()
    }

    /// A client of `server` forced to `transport`, not connected yet, and its events.
    static func client(of server: ScriptedTLCPServer, on transport: TransportSelection) -> (LightstreamerClient, ClientRecorder) {
        let client = LightstreamerClient(serverAddress: "http://127.0.0.1:\(server.port)", adapterSet: "HOSTILE")
        client.connectionOptions.forcedTransport = transport
        let events = ClientRecorder()
        client.addDelegate(events)
        return (client, events)
    }

    /// How a WebSocket message past the client's bounds is sent: in 8 MiB frames past the
    /// 64 MiB a message may hold (`WebSocketLineHandler`), or as one frame past the 16 MiB a
    /// frame may hold (NIO's frame decoder, `maxFrameSize`).
    enum LongMessage: CaseIterable, Sendable {
        case fragmented
        case oneFrame
    }

    /// A WebSocket message past the client's bounds, never finished: the client gives the
    /// connection up rather than holding the bytes, recovers the session with an HTTP poll,
    /// and binds again on a new WebSocket.
    @Test(arguments: LongMessage.allCases)
    func aMessageLongerThanTheBoundEndsTheStream(shape: LongMessage) async throws {
        let binds = NIOLockedValueBox(0)
        let server = try await ScriptedTLCPServer.start(group: MultiThreadedEventLoopGroup.singleton, transport: .webSocket) { request, _ in
            if request.path == "create_session" {
                // A keep-alive of a minute: only the message's bound can end the stream.
                return .init(lines: ["CONOK,S1,50000,60000,*"], open: true)
            }
            if request.path.contains("bind_session") {
                // The recovery (an HTTP poll), then the new WebSocket's bind.
                let recovering = request.requests.first?["LS_recovery_from"] != nil
                binds.withLockedValue { $0 += 1 }
                return .init(lines: ["CONOK,S1,50000,60000,*"] + (recovering ? ["PROG,0", "LOOP,0"] : []), open: true)
            }
            return .init(lines: request.requests.compactMap { $0["LS_reqId"].map { "REQOK,\($0)" } }, open: false)
        }
        defer { Task { await server.stop() } }
        let (client, events) = Self.client(of: server, on: .WS_STREAMING)
        client.connect()
        try await waitUntil { events.statuses.last == "CONNECTED:WS-STREAMING" }

        switch shape {
        case .fragmented:
            // 64 MiB in eight frames, then one byte more, and no last frame.
            let piece = String(repeating: "x", count: 8 << 20)
            #expect(server.stream.send(frame: piece, first: true, fin: false))
            for _ in 1..<8 { #expect(server.stream.send(frame: piece, first: false, fin: false)) }
            #expect(server.stream.send(frame: "x", first: false, fin: false))
        case .oneFrame:
            #expect(server.stream.send(frame: String(repeating: "x", count: (16 << 20) + 1), first: true, fin: true))
        }
        try await waitUntil(seconds: 30) { binds.withLockedValue { $0 } >= 2 && events.statuses.last == "CONNECTED:WS-STREAMING" }
        #expect(events.statuses.contains("DISCONNECTED:TRYING-RECOVERY"), "\(events.statuses)")
        #expect(!events.statuses.contains("STALLED"), "\(events.statuses)")
        #expect(events.serverErrors.isEmpty)
        client.disconnect()
    }
}

extension ScriptedTLCPServer.Transport {
    /// The client's forced transport for this one.
    var forced: TransportSelection {
        switch self {
        case .httpStreaming: return .HTTP_STREAMING
        case .webSocket: return .WS_STREAMING
        }
    }
}
