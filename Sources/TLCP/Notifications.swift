/// Typed server lines (docs/protocol/TLCP.md §3) and their encoding. Parsing is in
/// `NotificationParsing.swift`.

/// Every line a server may send.
public enum TLCPNotification: Sendable, Hashable {
    // 3.1 session creation and binding
    case conok(sessionId: String, requestLimit: Int, keepaliveMillis: Int, controlLink: String)
    case conerr(code: Int, message: String)
    case end(code: Int, message: String)
    case wsok
    // 3.2 control replies
    /// `REQOK,<reqId>`, or the bare `REQOK` answering an HTTP heartbeat (nil).
    case reqok(requestId: String?)
    case reqerr(requestId: String, code: Int, message: String)
    case error(code: Int, message: String)
    // 3.3 subscriptions (data)
    case subok(subscriptionId: Int, itemCount: Int, fieldCount: Int)
    case subcmd(subscriptionId: Int, itemCount: Int, fieldCount: Int, keyPosition: Int, commandPosition: Int)
    case unsub(subscriptionId: Int)
    case update(UpdateNotification)
    case endOfSnapshot(subscriptionId: Int, item: Int)
    case clearSnapshot(subscriptionId: Int, item: Int)
    case overflow(subscriptionId: Int, item: Int, lostCount: Int)
    case conf(subscriptionId: Int, maxFrequency: GrantedFrequency, filtered: Bool)
    // 3.4 messages (data)
    /// `sequence` nil is `*`. `response` is nil on a 2.4-style line with two arguments.
    case msgdone(sequence: String?, progressive: Int, response: String?)
    case msgfail(sequence: String?, progressive: Int, code: Int, message: String)
    // 3.5 session notifications
    case cons(BandwidthConstraint)
    case sync(seconds: Int)
    case clientip(String)
    case servname(String)
    case prog(Int)
    case noop(String)
    case probe
    case loop(delayMillis: Int)
    // 3.6 MPN (counted as data)
    case mpnreg(deviceId: String, adapterName: String)
    case mpnzero(deviceId: String)
    case mpnok(subscriptionId: Int, mpnSubscriptionId: String)
    case mpnconf(mpnSubscriptionId: String)
    case mpndel(mpnSubscriptionId: String)
    /// A tag this implementation does not know; clients ignore it.
    case unknown(tag: String, arguments: String)

    /// The tag that starts the line.
    public var tag: String {
        switch self {
        case .conok: return "CONOK"
        case .conerr: return "CONERR"
        case .end: return "END"
        case .wsok: return "WSOK"
        case .reqok: return "REQOK"
        case .reqerr: return "REQERR"
        case .error: return "ERROR"
        case .subok: return "SUBOK"
        case .subcmd: return "SUBCMD"
        case .unsub: return "UNSUB"
        case .update: return "U"
        case .endOfSnapshot: return "EOS"
        case .clearSnapshot: return "CS"
        case .overflow: return "OV"
        case .conf: return "CONF"
        case .msgdone: return "MSGDONE"
        case .msgfail: return "MSGFAIL"
        case .cons: return "CONS"
        case .sync: return "SYNC"
        case .clientip: return "CLIENTIP"
        case .servname: return "SERVNAME"
        case .prog: return "PROG"
        case .noop: return "NOOP"
        case .probe: return "PROBE"
        case .loop: return "LOOP"
        case .mpnreg: return "MPNREG"
        case .mpnzero: return "MPNZERO"
        case .mpnok: return "MPNOK"
        case .mpnconf: return "MPNCONF"
        case .mpndel: return "MPNDEL"
        case .unknown(let tag, _): return tag
        }
    }

    /// Whether the line counts toward the recovery progressive (docs/protocol/TLCP.md §5.5):
    /// subscription and message notifications, and the MPN ones as official clients count them.
    public var isDataNotification: Bool {
        switch self {
        case .subok, .subcmd, .unsub, .update, .endOfSnapshot, .clearSnapshot, .overflow, .conf,
            .msgdone, .msgfail, .mpnreg, .mpnzero, .mpnok, .mpnconf, .mpndel:
            return true
        default:
            return false
        }
    }

    /// The line without CR-LF, as a server speaking `version` writes it.
    public func encoded(version: TLCPVersion = .current) -> String {
        func s(_ v: String) -> String { PercentEncoding.encodeResponseArgument(v) }
        switch self {
        case .conok(let sid, let limit, let keepalive, let link):
            return "CONOK,\(s(sid)),\(limit),\(keepalive),\(s(link))"
        case .conerr(let code, let message): return "CONERR,\(code),\(s(message))"
        case .end(let code, let message): return "END,\(code),\(s(message))"
        case .wsok: return "WSOK"
        case .reqok(let id): return id.map { "REQOK,\(s($0))" } ?? "REQOK"
        case .reqerr(let id, let code, let message): return "REQERR,\(s(id)),\(code),\(s(message))"
        case .error(let code, let message): return "ERROR,\(code),\(s(message))"
        case .subok(let id, let items, let fields): return "SUBOK,\(id),\(items),\(fields)"
        case .subcmd(let id, let items, let fields, let key, let command):
            return "SUBCMD,\(id),\(items),\(fields),\(key),\(command)"
        case .unsub(let id): return "UNSUB,\(id)"
        case .update(let u): return u.encoded()
        case .endOfSnapshot(let id, let item): return "EOS,\(id),\(item)"
        case .clearSnapshot(let id, let item): return "CS,\(id),\(item)"
        case .overflow(let id, let item, let lost): return "OV,\(id),\(item),\(lost)"
        case .conf(let id, let freq, let filtered):
            return "CONF,\(id),\(freq.wireValue),\(filtered ? "filtered" : "unfiltered")"
        case .msgdone(let seq, let prog, let response):
            let head = "MSGDONE,\(seq.map(s) ?? "*"),\(prog)"
            if version.supports(.messageResponse) { return head + "," + s(response ?? "") }
            return head
        case .msgfail(let seq, let prog, let code, let message):
            return "MSGFAIL,\(seq.map(s) ?? "*"),\(prog),\(code),\(s(message))"
        case .cons(let bw): return "CONS,\(bw.wireValue)"
        case .sync(let secs): return "SYNC,\(secs)"
        case .clientip(let ip): return "CLIENTIP,\(s(ip))"
        case .servname(let name): return "SERVNAME,\(s(name))"
        case .prog(let p): return "PROG,\(p)"
        case .noop(let text): return "NOOP,\(s(text))"
        case .probe: return "PROBE"
        case .loop(let delay): return "LOOP,\(delay)"
        case .mpnreg(let dev, let adapter): return "MPNREG,\(s(dev)),\(s(adapter))"
        case .mpnzero(let dev): return "MPNZERO,\(s(dev))"
        case .mpnok(let id, let mpnId): return "MPNOK,\(id),\(s(mpnId))"
        case .mpnconf(let mpnId): return "MPNCONF,\(s(mpnId))"
        case .mpndel(let mpnId): return "MPNDEL,\(s(mpnId))"
        case .unknown(let tag, let args): return args.isEmpty ? tag : tag + "," + args
        }
    }

    /// The line with its CR-LF terminator.
    public func encodedLine(version: TLCPVersion = .current) -> String { encoded(version: version) + "\r\n" }
}

/// `U,<subId>,<item>,<values>`.
public struct UpdateNotification: Sendable, Hashable {
    public var subscriptionId: Int
    /// 1-based item position.
    public var item: Int
    /// One token per `|`-separated piece (an unchanged run covers several fields).
    public var values: [FieldDelta]

    public init(subscriptionId: Int, item: Int, values: [FieldDelta]) {
        self.subscriptionId = subscriptionId
        self.item = item
        self.values = values
    }

    /// How many fields the tokens cover.
    public var fieldCount: Int { values.reduce(0) { $0 + $1.width } }

    public func encoded() -> String {
        Self.line(subscriptionId: subscriptionId, item: item, encodedValues: Self.encodedValues(values))
    }

    /// The part of a `U` line after `U,<subId>,<item>,`: the tokens, escaped and joined by `|`.
    /// It depends only on the tokens, so sessions that send the same tokens for an item can
    /// share it and add their own head (`line(subscriptionId:item:encodedValues:)`).
    public static func encodedValues(_ values: [FieldDelta]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(values.count * 8)
        FieldDelta.append(values, to: &out)
        return out
    }

    /// `U,<subscriptionId>,<item>,` followed by `encodedValues`, written straight into the
    /// string's storage (no byte array in between: this runs once per update per session).
    public static func line(subscriptionId: Int, item: Int, encodedValues: [UInt8]) -> String {
        String(unsafeUninitializedCapacity: maxHeadBytes + encodedValues.count) { out in
            var i = writeHead(subscriptionId: subscriptionId, item: item, into: out)
            for byte in encodedValues {
                out[i] = byte
                i += 1
            }
            return i
        }
    }

    /// The most bytes `writeHead` writes: `U,`, two numbers of a sign and 20 digits, two commas.
    public static let maxHeadBytes = 2 + 21 + 1 + 21 + 1

    /// The length of `writeHead`'s output, without writing it.
    public static func headLength(subscriptionId: Int, item: Int) -> Int {
        func digits(_ value: Int) -> Int {
            var m = value.magnitude
            var n = value < 0 ? 2 : 1
            while m >= 10 {
                m /= 10
                n += 1
            }
            return n
        }
        return 4 + digits(subscriptionId) + digits(item)
    }

    /// Writes `U,<subscriptionId>,<item>,` at the start of `out` (room for `maxHeadBytes`);
    /// returns its length.
    @inlinable
    public static func writeHead(subscriptionId: Int, item: Int, into out: UnsafeMutableBufferPointer<UInt8>) -> Int {
        out[0] = UInt8(ascii: "U")
        out[1] = UInt8(ascii: ",")
        var i = writeDecimal(subscriptionId, into: out, at: 2)
        out[i] = UInt8(ascii: ",")
        i = writeDecimal(item, into: out, at: i + 1)
        out[i] = UInt8(ascii: ",")
        return i + 1
    }
}

/// Writes `value` in decimal into `out` from `start`; returns the index after the last digit.
/// `out` must have room for 21 bytes from `start` (a sign and 20 digits).
@usableFromInline
func writeDecimal(_ value: Int, into out: UnsafeMutableBufferPointer<UInt8>, at start: Int) -> Int {
    var i = start
    if value < 0 {
        out[i] = UInt8(ascii: "-")
        i += 1
    }
    var magnitude = value.magnitude
    if magnitude < 10 {
        out[i] = UInt8(truncatingIfNeeded: magnitude) &+ 0x30
        return i + 1
    }
    var digits = 0
    var m = magnitude
    while m > 0 {
        digits += 1
        m /= 10
    }
    var j = i + digits - 1
    while magnitude > 0 {
        out[j] = UInt8(truncatingIfNeeded: magnitude % 10) &+ 0x30
        magnitude /= 10
        j -= 1
    }
    return i + digits
}

/// Writes an integer in decimal.
@inline(__always)
func appendDecimal(_ value: Int, to out: inout [UInt8]) {
    if value >= 0 && value < 10 {
        out.append(UInt8(truncatingIfNeeded: value) + 0x30)
    } else {
        out.append(contentsOf: String(value).utf8) // small strings: no allocation
    }
}
