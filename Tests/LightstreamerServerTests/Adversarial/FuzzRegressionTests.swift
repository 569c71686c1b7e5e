import Testing

@testable import LightstreamerServer

/// Inputs FuzzHTTPFront found that once trapped the server, replayed over a real socket.
@Suite(.timeLimit(.minutes(1))) struct FuzzRegressionTests {
    /// A WebSocket upgrade request with mangled headers followed at once by a pipelined POST.
    static let upgradeThenPipelined: [UInt8] = [
        71, 69, 84, 32, 47, 108, 105, 103, 104, 116, 115, 116, 114, 101, 97, 109, 101, 114, 32, 72, 84, 84, 80, 47, 49, 46, 49, 13, 10, 72,
        111, 115, 116, 58, 32, 120, 13, 10, 85, 112, 103, 114, 97, 100, 101, 58, 32, 119, 101, 98, 115, 111, 99, 107, 101, 116, 13, 10, 67,
        111, 73, 110, 110, 101, 99, 116, 105, 111, 110, 58, 32, 85, 112, 103, 114, 97, 100, 255, 101, 13, 10, 83, 101, 99, 45, 87, 101, 98,
        83, 111, 99, 107, 101, 116, 45, 75, 101, 121, 58, 32, 100, 71, 104, 108, 73, 72, 78, 104, 98, 88, 66, 115, 90, 83, 66, 117, 98, 50,
        53, 106, 90, 81, 61, 61, 13, 10, 83, 101, 99, 45, 87, 101, 98, 83, 111, 99, 107, 101, 116, 45, 86, 101, 114, 115, 105, 111, 110, 58,
        32, 49, 51, 13, 10, 83, 73, 110, 116, 101, 99, 45, 87, 111, 99, 111, 108, 58, 32, 84, 76, 67, 80, 45, 50, 46, 53, 46, 48, 46, 108,
        105, 103, 104, 116, 115, 116, 114, 101, 97, 109, 101, 114, 108, 105, 103, 104, 116, 115, 116, 114, 101, 97, 109, 101, 112, 67, 32,
        72, 84, 84, 80, 47, 49, 46, 49, 13, 10, 72, 111, 115, 116, 58, 32, 120, 13, 10, 13, 10, 80, 79, 83, 84, 32, 47, 108, 105, 103, 104,
        116, 115, 116, 114, 101, 97, 109, 101, 114, 47, 109, 115, 103, 46, 116, 120, 116, 63, 76, 83, 95, 112, 114, 111, 116, 111, 99, 111,
        108, 61, 84, 76, 67, 80, 45, 50, 46, 53, 46, 48, 32, 72, 84, 84, 80, 47, 49, 46, 49, 13, 10, 67, 111, 110, 116, 101, 110, 116, 45,
        76, 101, 110, 103, 116, 104, 58, 32, 52, 48, 13, 10, 13, 10, 76, 83, 95, 114, 101, 114, 46, 99, 111, 109, 13, 10, 13, 10, 129, 132,
        1, 2, 3, 4, 118, 113, 104, 107,
    ]

    @Test func upgradeThenPipelinedRequest() async throws {
        try await FrontIntegrationTests.withServer { server, group in
            let port = try #require(server.port)
            let c = try await RawTestConnection.connect(port: port, group: group)
            try await c.send(Self.upgradeThenPipelined)
            _ = await c.waitFor("HTTP/1.1", seconds: 5)
            await c.close()
            // Still serving.
            let ws = try await RawTestConnection.webSocket(port: port, group: group)
            try await ws.wsText("create_session\r\nLS_adapter_set=DEMO&LS_cid=x&LS_send_sync=false")
            #expect(await ws.waitFor("CONOK,", seconds: 10))
            await ws.close()
        }
    }
}
