import Foundation
import LightstreamerServer
import NIOConcurrencyHelpers
import NIOPosix
import Testing

@testable import LightstreamerClient

/// Our client against a server whose CONOK names a control link, over real sockets: the client
/// reaches the server through an "entry" proxy (the balancer's address) and the control link
/// names a second proxy (the node's own address). What each proxy forwarded tells where every
/// request went: the create through the entry, binds and HTTP controls through the link.
@Suite(.serialized, .timeLimit(.minutes(2))) struct ControlLinkEndToEndTests {
    struct Setup {
        let server: LightstreamerServer
        let entry: RecordingProxy
        let link: RecordingProxy
        let group: MultiThreadedEventLoopGroup

        func stop() async {
            await entry.stop()
            await link.stop()
            await server.shutdown()
            try? await group.shutdownGracefully()
        }
    }

    static func start() async throws -> Setup {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let serverPort = NIOLockedPort()
        let link = try await RecordingProxy.start(group: group) { serverPort.value }
        var options = ServerOptions(host: "127.0.0.1", port: 0)
        options.sessions.controlLink = "127.0.0.1:\(link.port)"
        options.sessions.nodeName = "node-1"
        let server = LightstreamerServer(options: options, adapterSets: [TestServer.demoSet()])
        try await server.start()
        serverPort.value = try #require(server.port)
        let entry = try await RecordingProxy.start(group: group) { serverPort.value }
        return Setup(server: server, entry: entry, link: link, group: group)
    }

    @Test(arguments: [TransportSelection.HTTP_STREAMING, .HTTP_POLLING])
    func httpBindsControlsAndMessagesGoToTheControlLink(transport: TransportSelection) async throws {
        let s = try await Self.start()
        do {
            let client = LightstreamerClient(serverAddress: "http://127.0.0.1:\(s.entry.port)", adapterSet: "DEMO")
            client.connectionOptions.forcedTransport = transport
            client.connectionOptions.retryDelay = 1000
            let events = ClientRecorder()
            client.addDelegate(events)
            let sub = Subscription(subscriptionMode: .MERGE, item: "counter", fields: ["count"])
            let updates = UpdateRecorder()
            sub.addDelegate(updates)
            client.subscribe(sub)
            client.connect()
            try await waitUntil(seconds: 20) { updates.counts.count >= 3 }
            let outcome = MessageRecorder()
            client.sendMessage("CHAT|via the control link", withSequence: "chat", delegate: outcome)
            try await waitUntil { outcome.outcomes == ["processed"] }
            #expect(client.connectionDetails.serverInstanceAddress == "http://127.0.0.1:\(s.link.port)")
            #expect(client.connectionDetails.serverSocketName == "Lightstreamer Swift Server (node-1)")
            let entry = s.entry.clientText, link = s.link.clientText
            #expect(entry.contains("/lightstreamer/create_session.txt"), "\(entry)")
            for request in ["bind_session.txt", "control.txt", "msg.txt"] {
                #expect(!entry.contains(request), "\(request) went to the entry address: \(entry)")
                #expect(link.contains("/lightstreamer/\(request)"), "\(request) did not reach the control link: \(link)")
            }
            #expect(events.serverErrors.isEmpty)
            client.disconnect()
        } catch {
            await s.stop()
            throw error
        }
        await s.stop()
    }

    @Test func webSocketRecoveryGoesToTheControlLink() async throws {
        let s = try await Self.start()
        do {
            let client = LightstreamerClient(serverAddress: "http://127.0.0.1:\(s.entry.port)", adapterSet: "DEMO")
            client.connectionOptions.forcedTransport = .WS_STREAMING
            client.connectionOptions.retryDelay = 1000
            let events = ClientRecorder()
            client.addDelegate(events)
            let sub = Subscription(subscriptionMode: .MERGE, item: "counter", fields: ["count"])
            sub.requestedMaxFrequency = .unfiltered
            let updates = UpdateRecorder()
            sub.addDelegate(updates)
            client.subscribe(sub)
            client.connect()
            try await waitUntil(seconds: 20) { updates.counts.count >= 3 }
            // The WebSocket carrying the create and the controls was opened through the entry
            // (its frames are masked: only the upgrade request is readable); nothing used the link.
            #expect(s.entry.clientText.hasPrefix("GET /lightstreamer HTTP/1.1"), "\(s.entry.clientText.prefix(200))")
            #expect(s.link.clientText.isEmpty, "\(s.link.clientText)")
            let session = client.connectionDetails.sessionId
            for _ in 0..<50 where !events.statuses.contains("DISCONNECTED:TRYING-RECOVERY") {
                client.core.breakStreamConnection()
                try await Task.sleep(for: .milliseconds(30))
            }
            let target = updates.counts.count + 10
            try await waitUntil(seconds: 20) { updates.counts.count >= target }
            #expect(client.connectionDetails.sessionId == session)
            // The recovery needed a new connection: it went to the control link.
            let link = s.link.clientText
            #expect(link.contains("/lightstreamer/bind_session.txt") && link.contains("LS_recovery_from"), "\(link)")
            #expect(!s.entry.clientText.contains("bind_session"), "\(s.entry.clientText)")
            // Then the stream went back to WebSocket, opened on the control link too.
            try await waitUntil(seconds: 10) { s.link.clientText.contains("GET /lightstreamer HTTP/1.1") }
            #expect(
                s.entry.clientText.components(separatedBy: "GET /lightstreamer HTTP/1.1").count == 2,
                "one WebSocket opened through the entry")
            client.disconnect()
        } catch {
            await s.stop()
            throw error
        }
        await s.stop()
    }
}

/// The server's port, set once it started (read by the proxies when a connection arrives).
final class NIOLockedPort: Sendable {
    private let box = NIOLockedValueBox(0)
    var value: Int {
        get { box.withLockedValue { $0 } }
        set { box.withLockedValue { $0 = newValue } }
    }
}
