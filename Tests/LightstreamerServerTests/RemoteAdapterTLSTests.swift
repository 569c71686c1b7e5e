import Foundation
import Logging
import MPNTestSupport
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import Testing

@testable import LightstreamerServer

/// TLS on a remote adapter's port: the PEM files checked at start-up, a remote Data Adapter
/// (a scripted one in process, speaking ARI lines over NIOSSL) feeding a WebSocket client
/// through a TLS port, and a plain TCP remote on that port refused, logged and closed.
@Suite(.serialized, .timeLimit(.minutes(1))) struct RemoteAdapterTLSTests {
    /// Keeps the log lines at warning and above.
    struct RecordingLogHandler: LogHandler {
        let lines: NIOLockedValueBox<[String]>
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            guard event.level >= .warning else { return }
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            lines.withLockedValue { $0.append("\(event.message) \(all.keys.sorted().map { "\($0)=\(all[$0] ?? "")" })") }
        }
    }

    /// A throw-away CA, and its `localhost` certificate and key written as PEM files.
    struct Files {
        let dir: URL
        let ca: TestCertificateAuthority
        let cert: String
        let key: String

        init() throws {
            dir = FileManager.default.temporaryDirectory.appendingPathComponent("ls-remote-tls-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            ca = try TestCertificateAuthority(name: "Remote adapter TLS test CA")
            let leaf = try ca.issueServerCertificate(host: "localhost")
            cert = dir.appendingPathComponent("cert.pem").path
            key = dir.appendingPathComponent("key.pem").path
            try leaf.pem.write(toFile: cert, atomically: true, encoding: .utf8)
            try leaf.keyPEM.write(toFile: key, atomically: true, encoding: .utf8)
        }

        func write(_ text: String, _ name: String) throws -> String {
            let path = dir.appendingPathComponent(name).path
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }

        func remove() { try? FileManager.default.removeItem(at: dir) }

        /// A client context that trusts only the test CA (and checks the name `localhost`).
        func clientContext() throws -> NIOSSLContext {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates([try NIOSSLCertificate(bytes: Array(ca.pem.utf8), format: .pem)])
            return try NIOSSLContext(configuration: tls)
        }
    }

    static func filesError(_ tls: ServerConfiguration.TLS) -> TLSFilesError? {
        do {
            _ = try tls.makeServerContext()
            return nil
        } catch {
            return error
        }
    }

    @Test func startUpNamesTheFileAndTheProblem() throws {
        let files = try Files()
        defer { files.remove() }
        #expect(Self.filesError(.init(certificateChainPath: files.cert, privateKeyPath: files.key)) == nil)

        let missing = Self.filesError(
            .init(
                certificateChainPath: files.dir.appendingPathComponent("nope.pem").path,
                privateKeyPath: files.key))
        #expect(missing?.key == "certificateChainPath")
        #expect(missing?.reason == .unreadable)
        #expect(missing?.description.contains("nope.pem") == true)

        let notPEM = try files.write("this is not a certificate\n", "junk.pem")
        let badChain = Self.filesError(.init(certificateChainPath: notPEM, privateKeyPath: files.key))
        #expect(badChain?.key == "certificateChainPath")
        switch badChain?.reason {
        case .noCertificate?, .badPEM?: break
        default: Issue.record("a chain file without a certificate: \(String(describing: badChain))")
        }

        let badKey = Self.filesError(.init(certificateChainPath: files.cert, privateKeyPath: notPEM))
        #expect(badKey?.key == "privateKeyPath")
        if case .badPEM? = badKey?.reason {} else { Issue.record("a key file without a key: \(String(describing: badKey))") }

        // A key of another certificate.
        let other = try files.write(try TestCertificateAuthority(name: "other").issueServerCertificate().keyPEM, "other.pem")
        let mismatch = Self.filesError(.init(certificateChainPath: files.cert, privateKeyPath: other))
        if case .unusable? = mismatch?.reason {} else { Issue.record("a mismatched key: \(String(describing: mismatch))") }
    }

    @Test func configurationTakesTheTLSObject() throws {
        let config = try RemoteAdapterConfigTests.decode(
            #"""
            {"name":"R","dataAdapters":[{"remote":{"port":2,
             "tls":{"certificateChainPath":"/etc/c.pem","privateKeyPath":"/etc/k.pem"}}}]}
            """#)
        #expect(
            config.dataAdapters.first?.remote?.tls
                == ServerConfiguration.TLS(certificateChainPath: "/etc/c.pem", privateKeyPath: "/etc/k.pem"))
        #expect(throws: (any Error).self) { // both files are required
            try RemoteAdapterConfigTests.decode(#"{"name":"R","dataAdapters":[{"remote":{"port":2,"tls":{"certificateChainPath":"/c"}}}]}"#)
        }
    }

    /// A server whose remote port has a missing key file does not start, says which file, and
    /// leaves no remote port bound.
    @Test func aServerWithABadTLSFileDoesNotStart() async throws {
        let files = try Files()
        defer { files.remove() }
        var remote = RemoteAdapterConfiguration(port: 0)
        remote.tls = .init(certificateChainPath: files.cert, privateKeyPath: files.dir.appendingPathComponent("gone.pem").path)
        var metadata = MetadataConfiguration()
        metadata.remote = RemoteAdapterConfiguration(port: 0)
        let set = AdapterSetConfiguration(
            name: "REMOTE", metadata: metadata,
            dataAdapters: [.init(name: "DEFAULT", items: [:], remote: remote)]
        ).makeAdapterSet()
        let server = LightstreamerServer(options: ServerOptions(host: "127.0.0.1", port: 0), adapterSets: [set])
        await #expect(throws: TLSFilesError.self) { try await server.start() }
        #expect(server.port == nil)
        #expect(set.remoteEndpoints.count == 2)
        #expect(set.remoteEndpoints.allSatisfy { $0.boundPort == nil })
        await server.shutdown()
    }

    /// A connection that never starts the TLS handshake is closed after the handshake timeout.
    @Test func aSilentConnectionOnATLSPortIsClosedInTime() async throws {
        let files = try Files()
        defer { files.remove() }
        let lines = NIOLockedValueBox<[String]>([])
        let config = RemoteConnectionConfiguration(role: .data(name: "DEFAULT"), adapterSet: "REMOTE", handshakeTimeoutMillis: 300)
        let connection = RemoteAdapterConnection(configuration: config, logger: Logger(label: "test"))
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let context = try ServerConfiguration.TLS(certificateChainPath: files.cert, privateKeyPath: files.key).makeServerContext()
        let listener = try await RemoteAdapterListener.bind(
            host: "127.0.0.1", port: 0, connection: connection, sslContext: context,
            logger: Logger(label: "test") { _ in RecordingLogHandler(lines: lines) },
            group: group)
        // Timed from before the connect: the server's timer starts at accept, which a loaded
        // machine may report to the client well after it happened.
        let started = ContinuousClock.now
        let silent = try await RawTestConnection.connect(port: try #require(listener.port), group: group)
        #expect(await silent.waitClosed(seconds: 5))
        #expect(ContinuousClock.now - started >= .milliseconds(250))
        #expect(lines.withLockedValue { $0.contains { $0.contains("no TLS handshake in time") } }, "\(lines.withLockedValue { $0 })")
        await listener.close(reason: "test over")
        try await group.shutdownGracefully()
    }

    @Test func aRemoteDataAdapterOverTLSFeedsAClientAndAPlainRemoteIsRefused() async throws {
        let files = try Files()
        defer { files.remove() }
        let lines = NIOLockedValueBox<[String]>([])
        let logger = Logger(label: "test") { _ in RecordingLogHandler(lines: lines) }
        // A handshake timeout far past the test's steps: the in-process suite can stall for
        // seconds while it starts, and a timeout then closed the plain remote before its line
        // went out (a CI run on 2026-12-01: "I/O on closed channel").
        var remote = RemoteAdapterConfiguration(port: 0, handshakeTimeoutMillis: 30_000)
        remote.tls = .init(certificateChainPath: files.cert, privateKeyPath: files.key)
        let set = AdapterSetConfiguration(name: "REMOTE", dataAdapters: [.init(name: "DEFAULT", items: [:], remote: remote)])
            .makeAdapterSet(logger: logger)
        let server = LightstreamerServer(options: ServerOptions(host: "127.0.0.1", port: 0), adapterSets: [set])
        let starting = Task { try await server.start() }
        let endpoint = try #require(set.remoteEndpoints.first)
        var dataPort: Int?
        for _ in 0..<500 where dataPort == nil {
            dataPort = endpoint.boundPort
            if dataPort == nil { try await Task.sleep(for: .milliseconds(10)) }
        }
        let port = try #require(dataPort)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            // A remote speaking plain TCP to the TLS port: logged and closed, and it does not
            // take the port's remote slot.
            let plain = try await RawTestConnection.connect(port: port, group: group)
            try await plain.send("1|RAC|S|enableClosePacket|S|true\r\n")
            #expect(await plain.waitClosed(seconds: 5), "a plain TCP remote stays connected to a TLS port")
            #expect(!plain.text.contains("DPI"), "the plain remote got an ARI line: \(plain.text)")
            #expect(!endpoint.isConnected)
            for _ in 0..<200 where !lines.withLockedValue({ $0.contains { $0.contains("TLS handshake failed") } }) {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(lines.withLockedValue { $0.contains { $0.contains("TLS handshake failed") } }, "\(lines.withLockedValue { $0 })")

            // The TLS remote: handshake, then the server's start completes.
            typealias R = RemoteDataAdapterTests
            let (channel, stream) = try await R.ScriptedRemote.connect(
                port: port, group: group, tls: try files.clientContext(),
                tlsHostname: "localhost")
            var ari = stream.makeAsyncIterator()
            try await R.send("1|RAC|S|enableClosePacket|S|true|S|SDK|S|Test", on: channel)
            #expect(await ari.next()?.hasPrefix("10|DPI|") == true)
            try await R.send("10|DPI|S|ARI.version|S|1.8.3", on: channel)
            try await R.withTimeout(10) { try await starting.value }
            #expect(endpoint.isConnected)
            #expect(endpoint.counters.disconnections == 0)

            // A WebSocket client subscribes; the remote gets SUB and sends updates over TLS.
            let ws = try await RawTestConnection.webSocket(port: try #require(server.port), group: group)
            try await ws.wsText("create_session\r\nLS_adapter_set=REMOTE&LS_cid=mgQkwtwdysogQz2BJ4Ji%20kOj2Bg&LS_send_sync=false")
            try await ws.wsText(
                "control\r\nLS_reqId=1&LS_op=add&LS_subId=1&LS_mode=MERGE&LS_group=feed1&LS_schema=bid%20ask"
                    + "&LS_snapshot=true")
            let sub = try #require(await ari.next())
            #expect(sub == "11|SUB|S|feed1")
            try await R.send("11|SUB|V", on: channel)
            try await R.send("1|UD3|S|feed1|S|11|B|1|S|bid|S|10.5|S|ask|S|10.7", on: channel)
            try await R.send("1|EOS|S|feed1|S|11", on: channel)
            try await R.send("1|UD3|S|feed1|S|11|B|0|S|bid|S|10.6|S|ask|S|10.7", on: channel)
            // MERGE: the snapshot is the item's state when the subscription joins it, so a
            // slow join sees 10.6 as its snapshot; a quick one sees 10.5, then 10.6.
            #expect(await ws.waitFor("U,1,1,10.6|", seconds: 10), "received: \(ws.text)")
            let text = ws.text
            if let first = text.range(of: "U,1,1,10.5|10.7") {
                #expect(first.lowerBound < (text.range(of: "U,1,1,10.6|")?.lowerBound ?? text.startIndex), "received: \(text)")
            } else {
                #expect(text.contains("U,1,1,10.6|10.7"), "received: \(text)")
            }
            await ws.close()
            try await channel.close()
        } catch {
            starting.cancel()
            await server.shutdown()
            try? await group.shutdownGracefully()
            throw error
        }
        await server.shutdown()
        try await group.shutdownGracefully()
    }
}
