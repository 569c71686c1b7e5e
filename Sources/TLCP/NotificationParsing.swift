/// Client-side parsing of server lines. Each tag has a fixed argument count, so the last
/// argument may hold commas. A line that cannot be read is a `TLCPLineError` (the client
/// reports it as error 61); an unknown tag is not an error but `.unknown`.

/// A server line the client cannot read (the official clients' error 61).
public struct TLCPLineError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The client-side error code for unreadable server lines.
    public static let code = 61

    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { "TLCP line error: \(message)" }
}

extension TLCPNotification {
    /// Parses one line (without its CR-LF; a trailing CR or LF is tolerated).
    public static func parse(_ line: Substring) throws(TLCPLineError) -> TLCPNotification {
        var trimmed = line.utf8[...]
        while let last = trimmed.last, last == 0x0D || last == 0x0A { trimmed = trimmed.dropLast() }
        let line = Substring(trimmed)
        let utf8 = line.utf8
        // Hot path: updates.
        if utf8.count >= 2, utf8.first == UInt8(ascii: "U"), utf8[utf8.index(after: utf8.startIndex)] == UInt8(ascii: ",") {
            return .update(try parseUpdate(line))
        }
        let comma = utf8.firstIndex(of: UInt8(ascii: ","))
        let tag = Substring(utf8[..<(comma ?? utf8.endIndex)])
        let rest: Substring? = comma.map { Substring(utf8[utf8.index(after: $0)...]) }
        var a = ArgumentReader(tag: tag, rest: rest)

        switch tag {
        case "CONOK":
            try a.expect(4)
            return .conok(
                sessionId: try a.string(0), requestLimit: try a.int(1), keepaliveMillis: try a.int(2),
                controlLink: try a.string(3))
        case "CONERR":
            try a.expect(2)
            return .conerr(code: try a.int(0), message: try a.string(1))
        case "END":
            try a.expect(2)
            return .end(code: try a.int(0), message: try a.string(1))
        case "WSOK":
            return .wsok
        case "REQOK":
            guard rest != nil else { return .reqok(requestId: nil) }
            try a.expect(1)
            return .reqok(requestId: try a.string(0))
        case "REQERR":
            try a.expect(3)
            return .reqerr(requestId: try a.string(0), code: try a.int(1), message: try a.string(2))
        case "ERROR":
            try a.expect(2)
            return .error(code: try a.int(0), message: try a.string(1))
        case "SUBOK":
            try a.expect(3)
            return .subok(subscriptionId: try a.int(0), itemCount: try a.int(1), fieldCount: try a.int(2))
        case "SUBCMD":
            try a.expect(5)
            return .subcmd(
                subscriptionId: try a.int(0), itemCount: try a.int(1), fieldCount: try a.int(2),
                keyPosition: try a.int(3), commandPosition: try a.int(4))
        case "UNSUB":
            try a.expect(1)
            return .unsub(subscriptionId: try a.int(0))
        case "EOS":
            try a.expect(2)
            return .endOfSnapshot(subscriptionId: try a.int(0), item: try a.int(1))
        case "CS":
            try a.expect(2)
            return .clearSnapshot(subscriptionId: try a.int(0), item: try a.int(1))
        case "OV":
            try a.expect(3)
            return .overflow(subscriptionId: try a.int(0), item: try a.int(1), lostCount: try a.int(2))
        case "CONF":
            try a.expect(3)
            let freqText = try a.string(1)
            guard let freq = GrantedFrequency(wireValue: freqText) else { throw a.bad("frequency '\(freqText.prefix(20))'") }
            let kind = try a.string(2)
            guard kind == "filtered" || kind == "unfiltered" else { throw a.bad("filter kind '\(kind.prefix(20))'") }
            return .conf(subscriptionId: try a.int(0), maxFrequency: freq, filtered: kind == "filtered")
        case "MSGDONE":
            // 2.5 has three arguments; a 2.4 line has two.
            try a.expect(3, orAtLeast: 2)
            let seq = try a.string(0)
            return .msgdone(
                sequence: seq == "*" ? nil : seq, progressive: try a.int(1),
                response: a.count > 2 ? try a.string(2) : nil)
        case "MSGFAIL":
            try a.expect(4)
            let seq = try a.string(0)
            return .msgfail(
                sequence: seq == "*" ? nil : seq, progressive: try a.int(1), code: try a.int(2),
                message: try a.string(3))
        case "CONS":
            try a.expect(1)
            let text = try a.string(0)
            guard let bw = BandwidthConstraint(wireValue: text) else { throw a.bad("bandwidth '\(text.prefix(20))'") }
            return .cons(bw)
        case "SYNC":
            try a.expect(1)
            return .sync(seconds: try a.int(0))
        case "CLIENTIP":
            try a.expect(1)
            return .clientip(try a.string(0))
        case "SERVNAME":
            try a.expect(1)
            return .servname(try a.string(0))
        case "PROG":
            try a.expect(1)
            return .prog(try a.int(0))
        case "NOOP":
            return .noop(rest.map { (try? PercentEncoding.decodeResponseArgument($0)) ?? String($0) } ?? "")
        case "PROBE":
            return .probe
        case "LOOP":
            try a.expect(1)
            return .loop(delayMillis: try a.int(0))
        case "MPNREG":
            try a.expect(2)
            return .mpnreg(deviceId: try a.string(0), adapterName: try a.string(1))
        case "MPNZERO":
            try a.expect(1)
            return .mpnzero(deviceId: try a.string(0))
        case "MPNOK":
            try a.expect(2)
            return .mpnok(subscriptionId: try a.int(0), mpnSubscriptionId: try a.string(1))
        case "MPNCONF":
            // Exactly one argument; like official clients, read the first of any others.
            try a.expect(Int.max, orAtLeast: 1)
            return .mpnconf(mpnSubscriptionId: try a.string(0))
        case "MPNDEL":
            try a.expect(1)
            return .mpndel(mpnSubscriptionId: try a.string(0))
        default:
            guard !tag.isEmpty, tag.utf8.count <= 8, tag.utf8.allSatisfy({ ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x30 && $0 <= 0x39) })
            else {
                throw TLCPLineError("Unreadable line '\(line.prefix(40))'")
            }
            return .unknown(tag: String(tag), arguments: rest.map(String.init) ?? "")
        }
    }

    public static func parse(_ line: String) throws(TLCPLineError) -> TLCPNotification {
        try parse(Substring(line))
    }

    /// The update of a `U` line, or nil for any other line (which `parse` then reads): the
    /// hot path of a client, without wrapping the update in a notification value.
    public static func parseIfUpdate(_ line: String) throws(TLCPLineError) -> UpdateNotification? {
        let utf8 = line.utf8
        guard utf8.count >= 2, utf8.first == UInt8(ascii: "U"),
            utf8[utf8.index(after: utf8.startIndex)] == UInt8(ascii: ",")
        else { return nil }
        var trimmed = utf8[...]
        while let last = trimmed.last, last == 0x0D || last == 0x0A { trimmed = trimmed.dropLast() }
        return try parseUpdate(Substring(trimmed))
    }

    static func parseUpdate(_ line: Substring) throws(TLCPLineError) -> UpdateNotification {
        try line.withUTF8Bytes { bytes -> Result<UpdateNotification, TLCPLineError> in
            var i = 2 // after "U,"
            func number() -> Int? {
                var v = 0
                let start = i
                while i < bytes.count, bytes[i] != UInt8(ascii: ",") {
                    let b = bytes[i]
                    guard b >= 0x30 && b <= 0x39, i - start < 12 else { return nil }
                    v = v * 10 + Int(b - 0x30)
                    i += 1
                }
                guard i > start, i < bytes.count else { return nil }
                i += 1
                return v
            }
            guard let sub = number(), let item = number() else {
                return .failure(TLCPLineError("Bad update line '\(line.prefix(40))'"))
            }
            return FieldDelta.parseValues(bytes.slice(i, bytes.count)).map {
                UpdateNotification(subscriptionId: sub, item: item, values: $0)
            }
        }.get()
    }
}

/// Splits a notification's arguments up to the tag's fixed count.
private struct ArgumentReader {
    let tag: Substring
    let rest: Substring?
    var args: [Substring] = []

    init(tag: Substring, rest: Substring?) {
        self.tag = tag
        self.rest = rest
    }

    var count: Int { args.count }

    func bad(_ what: String) -> TLCPLineError { TLCPLineError("Bad \(what) in \(tag) line") }

    /// Splits into exactly `n` arguments (the last one keeps any commas), or accepts between
    /// `minimum` and `n` arguments when `orAtLeast` is given.
    mutating func expect(_ n: Int, orAtLeast minimum: Int? = nil) throws(TLCPLineError) {
        guard let rest else { throw TLCPLineError("\(tag) without arguments") }
        args = rest.utf8.split(
            separator: UInt8(ascii: ","), maxSplits: n == Int.max ? Int.max : n - 1,
            omittingEmptySubsequences: false
        ).map { Substring($0) }
        let low = minimum ?? n
        guard args.count >= low, args.count <= n else {
            throw TLCPLineError("\(tag) expects \(n) arguments, got \(args.count)")
        }
    }

    func string(_ i: Int) throws(TLCPLineError) -> String {
        do {
            return try PercentEncoding.decodeResponseArgument(args[i])
        } catch {
            throw bad("argument \(i + 1) (\(error))")
        }
    }

    func int(_ i: Int) throws(TLCPLineError) -> Int {
        guard let v = Int(decimalDigits: args[i]) else { throw bad("number '\(args[i].prefix(20))'") }
        return v
    }
}
