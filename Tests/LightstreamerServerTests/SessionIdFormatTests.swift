import Testing

@testable import LightstreamerServer

struct SessionIdFormatTests {
    /// Decodes a base-62 run of the id's alphabet.
    static func value(_ digits: Substring) -> UInt64? {
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
        var v: UInt64 = 0
        for c in digits {
            guard let d = alphabet.firstIndex(of: c) else { return nil }
            let (m, o1) = v.multipliedReportingOverflow(by: 62)
            let (s, o2) = m.addingReportingOverflow(UInt64(d))
            guard !o1, !o2 else { return nil }
            v = s
        }
        return v
    }

    /// `S`, nine digits that decode to the random bits, `M`, digits that decode to the counter;
    /// at most 15 bytes (kept inline by `String`) up to 62^4 − 1 sessions.
    @Test(arguments: [UInt64(0), 1, 61, 62, 3_843, 238_328, 14_776_335, 14_776_336, .max])
    func carriesItsRandomBitsAndCounter(_ counter: UInt64) {
        var rng = SystemRandomNumberGenerator()
        for random in [UInt64(0), .max, rng.next(), rng.next()] {
            let id = SessionIdFormat.make(random: random, counter: counter)
            #expect(id.first == "S")
            let body = id.dropFirst()
            // "M" is also a digit: the separator is the character after the nine random digits.
            let randomPart = body.prefix(SessionIdFormat.randomDigits)
            #expect(body.dropFirst(SessionIdFormat.randomDigits).first == "M", "\(id)")
            let counterPart = body.dropFirst(SessionIdFormat.randomDigits + 1)
            #expect(Self.value(randomPart) == random & ((1 << 53) - 1), "\(id)")
            #expect(Self.value(counterPart) == counter, "\(id)")
            if counter < 14_776_336 { #expect(id.utf8.count <= 15, "\(id)") }
        }
    }

    @Test func idsDiffer() {
        var rng = SystemRandomNumberGenerator()
        let ids = (0..<10_000).map { SessionIdFormat.make(random: rng.next(), counter: UInt64($0)) }
        #expect(Set(ids).count == ids.count)
    }
}
