import Testing

@testable import LightstreamerServer

/// `PositionSet`, the per-subscription flags the fan-out reads: the same answers as a `Set`
/// of positions, inside and beyond the 64 positions kept inline.
@Suite struct PositionSetTests {
    @Test func matchesASetUnderRandomChanges() {
        var generator = SystemRandomNumberGenerator()
        var flags = PositionSet()
        var reference = Set<Int>()
        for _ in 0..<20_000 {
            let position = Int.random(in: -3..<300, using: &generator)
            let value = Bool.random(using: &generator)
            flags[position] = value
            if position >= 0 {
                if value { reference.insert(position) } else { reference.remove(position) }
            }
            let probe = Int.random(in: -3..<300, using: &generator)
            #expect(flags[probe] == reference.contains(probe))
        }
        for position in -3..<300 { #expect(flags[position] == reference.contains(position)) }
        #expect(flags.isEmpty == reference.isEmpty)
    }

    @Test func boundariesAndClearing() {
        var flags = PositionSet()
        #expect(flags.isEmpty)
        for position in [0, 63, 64, 127, 128, 1_000] { flags[position] = true }
        for position in [0, 63, 64, 127, 128, 1_000] { #expect(flags[position]) }
        for position in [1, 62, 65, 126, 129, 999, 1_001, Int.max, -1, Int.min] { #expect(!flags[position]) }
        // Clearing a position never set beyond the words held allocates nothing and changes nothing.
        flags[5_000] = false
        #expect(!flags[5_000])
        for position in [0, 63, 64, 127, 128, 1_000] { flags[position] = false }
        #expect(flags.isEmpty)
        flags[-1] = true
        #expect(flags.isEmpty)
    }
}
