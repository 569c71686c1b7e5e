/// The form of session ids: `S`, nine base-62 digits carrying 53 random bits, `M`, and the
/// manager's counter in base 62 (`S0fK3vZq9xM1b`).
///
/// Up to 62^4 − 1 (14.7 million) sessions in one process an id has at most 15 bytes, which a
/// Swift string keeps inline: no allocation for it. The former form, 48 random bits and the
/// counter in hexadecimal, took 18 bytes or so and cost each session a 63-byte allocation
/// (heaptrack, BENCHMARKS.md "Session bookkeeping without allocations"). The counter makes ids
/// unique within a process; the random part makes them hard to guess and keeps ids of the
/// nodes of a cluster apart.
enum SessionIdFormat {
    /// Digits 0–61.
    private static let digits = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
    /// Random bits kept: 62^9 > 2^53.
    static let randomBits = 53
    static let randomDigits = 9

    /// The id of the session numbered `counter` with `random` (only its low `randomBits` bits
    /// are used).
    static func make(random: UInt64, counter: UInt64) -> String {
        var count = 0
        var n = counter
        repeat {
            count += 1
            n /= 62
        } while n > 0
        let start = randomDigits + 2
        // The exact length: `String` keeps the id inline only when asked for at most 15 bytes.
        return String(unsafeUninitializedCapacity: start + count) { buffer in
            buffer[0] = UInt8(ascii: "S")
            var r = random & ((1 << UInt64(randomBits)) - 1)
            for i in stride(from: randomDigits, through: 1, by: -1) {
                buffer[i] = digits[Int(r % 62)]
                r /= 62
            }
            buffer[randomDigits + 1] = UInt8(ascii: "M")
            n = counter
            for i in stride(from: start + count - 1, through: start, by: -1) {
                buffer[i] = digits[Int(n % 62)]
                n /= 62
            }
            return start + count
        }
    }
}
