import NIOCore
import NIOPosix
import Testing

/// Memory comes back: WebSocket clients that never read a fast item are closed for their
/// backlog, their sessions end, and the server's resident memory returns near where it was.
/// RAW, whose every update a session owes its client: an unbound MERGE session keeps only the
/// item's latest row and lives on to its timeout (SlowReaderTests covers both modes).
@Suite(.serialized, .timeLimit(.minutes(3))) struct AdversarialMemoryTests {
    /// One item, `flood`: 40 fields of 9-decimal random walks, 1,000 updates a second.
    static let floodSet: String = {
        let fields = (1...40).map { #""f\#($0)": {"start": 100, "step": 10, "min": 0, "max": 1000, "decimals": 9}"# }
        return #"""
            [{"name": "FLOOD", "metadata": {"allowedModes": ["MERGE", "RAW"]},
              "dataAdapters": [{"name": "DEFAULT", "items": [
                {"name": "flood", "behavior": "randomWalk", "updatesPerSecond": 1000, "walkFields": {\#(fields.joined(separator: ","))}}
              ]}]}]
            """#
    }()

    static let clients = 12

    @Test func clientsThatNeverReadAreClosedAndTheirMemoryComesBack() async throws {
        try await SpawnedServer.with(limits: #"{"maxBacklogBytes": 500000}"#, adapterSets: Self.floodSet) { server, group in
            try await server.assertHealthy(after: "start", group: group)
            let baseline = server.residentBytes
            let schema = (1...40).map { "f\($0)" }.joined(separator: "%20")
            var channels: [any Channel] = []
            for _ in 0..<Self.clients {
                let channel = try await FrontBackpressureTests.muteWebSocket(
                    port: server.port, group: group, adapterSet: "FLOOD",
                    control: "LS_reqId=1&LS_op=add&LS_subId=1&LS_mode=RAW&LS_group=flood&LS_schema=\(schema)&LS_ack=false")
                channels.append(channel)
            }
            var peak = 0
            let started = ContinuousClock.now
            // 25–30 s on a quiet machine; one CI run on a loaded one needed more than 90 s.
            let deadline = ContinuousClock.now + .seconds(180)
            while ContinuousClock.now < deadline {
                peak = max(peak, server.residentBytes ?? 0)
                let closed = try await server.metric("lightstreamer_sessions_closed_for_backlog_total", group: group)
                if let closed, closed >= Double(Self.clients) { break }
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(try await server.metric("lightstreamer_slow_clients_closed_total", group: group) == Double(Self.clients))
            #expect(try await server.metric("lightstreamer_sessions_closed_for_backlog_total", group: group) == Double(Self.clients))
            // Only the health check's session (its socket closed, waiting for recovery) is left.
            #expect(try await server.metric("lightstreamer_sessions_active", group: group) ?? 99 <= 1)
            for c in channels { try? await c.close() }
            // Trimmed within seconds of the sessions' end.
            try await Task.sleep(for: .seconds(7))
            let after = server.residentBytes
            print(
                "adversarial memory: closed after \(ContinuousClock.now - started); baseline \((baseline ?? 0) >> 20) MB, peak \(peak >> 20) MB, after \((after ?? 0) >> 20) MB"
            )
            if let baseline, let after {
                #expect(
                    after < baseline + 64 << 20,
                    "resident memory stayed at \(after >> 20) MB (baseline \(baseline >> 20) MB, peak \(peak >> 20) MB)")
                #expect(peak < 400 << 20, "peak \(peak >> 20) MB")
            }
            try await server.assertHealthy(after: "\(Self.clients) clients that never read", group: group)
        }
    }
}
