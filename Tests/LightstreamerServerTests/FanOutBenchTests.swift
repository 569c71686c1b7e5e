import Testing

@_spi(Benchmarks) @testable import LightstreamerServer

/// The benchmark's set-up (`FanOutBench`, measured by Benchmarks/server-callgrind.sh) must
/// deliver what it claims: every session writes one `U` line per subscribed item per tick, so
/// that its instructions are divided by real updates.
@Suite struct FanOutBenchTests {
    @Test func everySessionWritesOneLinePerItemPerTick() async throws {
        let bench = try await FanOutBench(sessions: 30, items: 12, itemsPerSession: 4)
        #expect(bench.tick() == 30 * 4)
        #expect(bench.tick() == 30 * 4)
    }
}
