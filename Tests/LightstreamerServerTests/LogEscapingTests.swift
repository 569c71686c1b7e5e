import LightstreamerServer
import Testing

@Suite struct LogEscapingTests {
    @Test func lineBreaksCannotForgeALine() {
        let forged = "alice\n2026-11-23T00:00:00+0000 info lightstreamer.server: session closed"
        let escaped = forged.logEscaped()
        #expect(!escaped.contains("\n"))
        #expect(escaped.hasPrefix("alice\\n2026"))
    }

    @Test func controlCharactersAndSeparatorsAreEscaped() {
        #expect("a\rb\tc\u{1B}[31md\u{2028}e\u{85}f\\".logEscaped() == "a\\rb\\tc\\u{1B}[31md\\u{2028}e\\u{85}f\\\\")
        #expect("say \"hi\"".logEscaped() == "say \\\"hi\\\"")
        #expect("plain ñ text".logEscaped() == "plain ñ text")
    }

    @Test func longValuesAreCut() {
        let long = String(repeating: "x", count: 10_000)
        #expect(long.logEscaped(limit: 10) == "xxxxxxxxxx…")
        #expect("short".logEscaped(limit: 10) == "short")
    }
}
