import NIOCore
import NIOPosix
import Testing

@testable import LightstreamerServer

/// Bounds on open connections, per client address and in all: one too many is closed at
/// accept, and a closed one makes room again.
@Suite(.timeLimit(.minutes(1))) struct FrontConnectionLimitTests {
    @Test func limiterCountsPerAddressAndInAll() {
        let limiter = ConnectionLimiter(maxConnections: 3, maxPerAddress: 2)
        #expect(limiter.admit("a"))
        #expect(limiter.admit("a"))
        #expect(!limiter.admit("a"))
        #expect(limiter.admit("b"))
        #expect(!limiter.admit("c"), "the total is reached")
        limiter.release("a")
        #expect(limiter.admit("c"))
        #expect(!limiter.admit("a"))
        #expect(limiter.open == 3)
    }

    /// Opens `count` connections and checks each answers a request (so it was admitted).
    static func openServed(_ count: Int, port: Int, group: any EventLoopGroup) async throws -> [RawTestConnection] {
        var list: [RawTestConnection] = []
        for _ in 0..<count {
            let c = try await RawTestConnection.connect(port: port, group: group)
            try await c.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await c.waitFor("Lightstreamer Swift Server"))
            list.append(c)
        }
        return list
    }

    @Test func connectionsBeyondThePerAddressBoundAreClosedAtOnce() async throws {
        try await FrontIntegrationTests.withServer(configure: { $0.front.maxConnectionsPerAddress = 3 }) { server, group in
            let port = try #require(server.port)
            let admitted = try await Self.openServed(3, port: port, group: group)
            let extra = try await RawTestConnection.connect(port: port, group: group)
            try? await extra.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await extra.waitClosed())
            #expect(!extra.text.contains("200"))
            #expect(admitted.allSatisfy { !$0.isClosed })
            // Counted down on close: room for one more.
            await admitted[0].close()
            var servedAgain = false
            for _ in 0..<50 where !servedAgain {
                let c = try await RawTestConnection.connect(port: port, group: group)
                try? await c.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                servedAgain = await c.waitFor("Lightstreamer Swift Server", seconds: 1)
                if !servedAgain { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(servedAgain)
        }
    }

    @Test func connectionsBeyondTheGlobalBoundAreClosedAtOnce() async throws {
        try await FrontIntegrationTests.withServer(configure: { $0.front.maxConnections = 2 }) { server, group in
            let port = try #require(server.port)
            let admitted = try await Self.openServed(2, port: port, group: group)
            let extra = try await RawTestConnection.connect(port: port, group: group)
            try? await extra.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await extra.waitClosed())
            #expect(!extra.text.contains("200"))
            #expect(admitted.allSatisfy { !$0.isClosed })
        }
    }
}

@Suite struct FileDescriptorBudgetTests {
    @Test func theCapStaysUnderTheOpenFilesLimit() {
        #expect(FileDescriptorBudget.connectionCap(configured: 16_000, openFilesLimit: 1_024) == 1_024 - FileDescriptorBudget.headroom)
        #expect(FileDescriptorBudget.connectionCap(configured: 100, openFilesLimit: 1_024) == 100)
        #expect(FileDescriptorBudget.connectionCap(configured: 16_000, openFilesLimit: nil) == 16_000)
        #expect(FileDescriptorBudget.connectionCap(configured: 16_000, openFilesLimit: 10) == 1)
        #expect(FileDescriptorBudget.openFilesSoftLimit.map { $0 > 0 } ?? true)
    }
}
