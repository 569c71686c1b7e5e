/// Waits until `condition` holds, checking it every 10 ms, for at most `seconds` on the
/// continuous clock. Returns whether it held; the caller checks what it waited for with an
/// expectation of its own, which then names what was missing.
///
/// A deadline rather than a count of sleeps: a loop of N sleeps of 10 ms waited anywhere from
/// N × 10 ms to much longer, depending on how late each sleep woke, so its bound said little,
/// and short ones (a second or two) were what a loaded machine could miss. A generous bound
/// costs nothing when the condition holds: the wait ends at the first check that finds it.
@discardableResult
func waitUntil(seconds: Double = 10, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(min(max(seconds, 0), 3_600) * 1_000))
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        do { try await Task.sleep(for: .milliseconds(10)) } catch { return condition() }
    }
    return true
}
