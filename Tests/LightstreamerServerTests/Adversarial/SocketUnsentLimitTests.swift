import Foundation
import NIOCore
import Testing

@testable import LightstreamerServer

/// A client that stops reading is noticed after a bounded number of bytes
/// (`FrontOptions.maxSocketUnsentBytes`, `SocketUnsentLimit`), not once the kernel's send
/// buffer is full: the kernel grows that buffer with the connection, to megabytes on loopback,
/// and until it is full the session streams on as if the client kept up.
///
/// Each case floods a MERGE item (8 KB values, 1,000 a second) to a client that never reads,
/// over a real socket, and waits for the bytes the server has written to stop growing (the
/// session then holds the item's latest row). With the default limit they stop within the
/// limit, the client's receive window and NIO's 4 KiB; with the limit off (0) the same flood
/// goes into the kernel for megabytes first, which shows the bound comes from the option.
@Suite(.timeLimit(.minutes(2))) struct SocketUnsentLimitTests {
    @Test(arguments: FrontBackpressureTests.StreamTransport.allCases)
    func aClientThatStopsReadingIsHeldWithinTheLimit(transport: FrontBackpressureTests.StreamTransport) async throws {
        let written = try await bytesWrittenUntilHeld(transport: transport, maxSocketUnsentBytes: FrontOptions().maxSocketUnsentBytes)
        #expect(FrontOptions().maxSocketUnsentBytes == 16 * 1024)
        #expect(written < 1 << 20, "\(written) bytes written to a client that reads nothing")
    }

    @Test func withoutTheLimitTheKernelTakesMegabytesFirst() async throws {
        let written = try await bytesWrittenUntilHeld(transport: .webSocket, maxSocketUnsentBytes: 0)
        #expect(written > 1 << 20, "\(written) bytes: the kernel itself stopped early, this test shows nothing here")
    }

    @Test func theConfigurationReadsAndBoundsTheLimit() throws {
        let parse = { (json: String) throws -> FrontOptions in
            var o = FrontOptions()
            try JSONDecoder().decode(ServerConfiguration.Front.self, from: Data(json.utf8)).apply(to: &o)
            return o
        }
        #expect(try parse(#"{"maxSocketUnsentBytes": 65536}"#).maxSocketUnsentBytes == 65_536)
        #expect(try parse(#"{"maxSocketUnsentBytes": 0}"#).maxSocketUnsentBytes == 0)
        #expect(try parse("{}").maxSocketUnsentBytes == 16 * 1024)
        #expect(throws: (any Error).self) { try parse(#"{"maxSocketUnsentBytes": -1}"#) }
        #expect(throws: (any Error).self) { try parse(#"{"maxSocketUnsentBytes": 67108865}"#) }
        let file = try ServerConfiguration.decode(Data(#"{"demo": true, "front": {"maxSocketUnsentBytes": 4096}}"#.utf8))
        #expect(ServerOptions(configuration: file).front.maxSocketUnsentBytes == 4_096)
        #expect(SocketUnsentLimit.value(for: 0) == nil)
        #expect(SocketUnsentLimit.value(for: .max) == SocketOptionValue(SocketUnsentLimit.maximumBytes))
    }

    /// Floods a mute client and returns the server's `bytesSent` once it has not grown for 2 s.
    private func bytesWrittenUntilHeld(
        transport: FrontBackpressureTests.StreamTransport, maxSocketUnsentBytes: Int
    ) async throws -> Int {
        let rig = try await FrontBackpressureTests.MuteFlood.start(mode: "MERGE", transport: transport) {
            $0.sessions.maxUndrainedMillis = 120_000
            $0.sessions.maxBacklogBytes = 64 << 20
            $0.front.maxSocketUnsentBytes = maxSocketUnsentBytes
        }
        let (held, m) = try await rig.waitForWritesToStop(within: .seconds(60))
        await rig.stop()
        #expect(held, "bytes written \(m.bytesSent), still growing after 60 s or the connection closed")
        #expect(m.slowClientsClosed == 0)
        return m.bytesSent
    }
}
