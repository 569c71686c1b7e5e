import PropertyBased
import TLCP

/// Random TLCP values for round-trip properties. Each generator draws one seed from the
/// property checker's generator and builds the value with a local SplitMix64, so a failing
/// case reproduces from the checker's seed.
struct Rand {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.upperBound - range.lowerBound + 1))
    }

    mutating func bool() -> Bool { next() & 1 == 1 }

    mutating func maybe<T>(_ make: (inout Rand) -> T) -> T? { bool() ? make(&self) : nil }

    mutating func pick<T>(_ items: [T]) -> T { items[int(0...(items.count - 1))] }

    /// Text with every character that needs care on the wire.
    static let palette: [String] = [
        "a", "Z", "0", "9", " ", "&", "=", "%", "+", ",", "|", "#", "$", "^", "\r", "\n", "\r\n",
        "é", "ñ", "😀", "\u{301}", "~", "_", ".", "-", "*", "\"", "\\", "{", "}", "\t", "/",
    ]

    mutating func text(_ length: ClosedRange<Int> = 0...12) -> String {
        var s = ""
        for _ in 0..<int(length) { s += pick(Self.palette) }
        return s
    }

    mutating func nonEmptyText() -> String { text(1...12) }

    mutating func word(_ length: ClosedRange<Int> = 1...8) -> String {
        let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        return String((0..<int(length)).map { _ in pick(letters) })
    }

    mutating func decimal() -> Double { Double(int(1...100_000)) / 100 }

    mutating func frequency() -> RequestedFrequency { pick([.unlimited, .unfiltered, .limited(decimal())]) }
    mutating func bufferSize() -> RequestedBufferSize { bool() ? .unlimited : .size(int(1...1000)) }
    mutating func bandwidth() -> RequestedBandwidth { bool() ? .unlimited : .kbps(decimal()) }
    mutating func snapshot() -> SnapshotRequest { pick([.yes, .no, .length(int(1...500))]) }
    mutating func mode() -> SubscriptionMode { pick(SubscriptionMode.allCases) }

    mutating func stream() -> StreamParameters {
        StreamParameters(
            contentLength: maybe { $0.int(0...50_000_000) }, polling: bool(), pollingMillis: maybe { $0.int(0...60000) },
            idleMillis: maybe { $0.int(0...60000) }, inactivityMillis: maybe { $0.int(0...60000) },
            keepaliveMillis: maybe { $0.int(0...60000) }, sendSync: maybe { $0.bool() },
            reduceHead: maybe { $0.bool() }, cause: maybe { $0.text() })
    }

    mutating func subscribe() -> SubscribeParameters {
        SubscribeParameters(
            subscriptionId: int(0...10000), mode: mode(), group: nonEmptyText(), schema: nonEmptyText(),
            dataAdapter: maybe { $0.text() }, selector: maybe { $0.text() }, bufferSize: maybe { $0.bufferSize() },
            maxFrequency: maybe { $0.frequency() }, snapshot: maybe { $0.snapshot() })
    }

    mutating func operation() -> ControlOperation {
        switch int(0...10) {
        case 0: return .add(subscribe())
        case 1: return .delete(subscriptionId: int(0...10000))
        case 2: return .reconf(subscriptionId: int(0...10000), maxFrequency: maybe { $0.frequency() })
        case 3: return .constrain(maxBandwidth: maybe { $0.bandwidth() })
        case 4: return .forceRebind(pollingMillis: maybe { $0.int(0...9999) }, closeSocket: maybe { $0.bool() })
        case 5:
            return .destroy(causeCode: maybe { $0.int(-100...100) }, causeMessage: maybe { $0.text() }, closeSocket: maybe { $0.bool() })
        case 6:
            return .mpnRegister(
                MPNRegisterParameters(
                    platform: pick(MPNPlatform.allCases), applicationId: nonEmptyText(),
                    deviceToken: nonEmptyText(), newDeviceToken: maybe { $0.text() }))
        case 7: return .mpnResetBadge(deviceId: nonEmptyText())
        case 8:
            return .mpnActivate(
                MPNActivateParameters(
                    subscriptionId: int(0...999), mode: mode(), group: nonEmptyText(), schema: nonEmptyText(),
                    dataAdapter: maybe { $0.text() },
                    bufferSize: maybe { $0.bufferSize() }, maxFrequency: maybe { $0.frequency() }, deviceId: nonEmptyText(),
                    notificationFormat: text(), trigger: maybe { $0.text() }, coalescing: maybe { $0.bool() },
                    mpnSubscriptionId: maybe { $0.text() }))
        case 9:
            return .mpnReconf(
                MPNReconfParameters(
                    deviceId: nonEmptyText(), mpnSubscriptionId: nonEmptyText(), mode: maybe { $0.mode() }, group: maybe { $0.text() },
                    schema: maybe { $0.text() }, dataAdapter: maybe { $0.text() }, maxFrequency: maybe { $0.frequency() },
                    notificationFormat: maybe { $0.text() }, trigger: maybe { $0.text() }))
        default:
            let target: MPNDeactivateTarget = pick([
                .all, .status(pick(MPNSubscriptionStatusFilter.allCases)), .subscription(nonEmptyText()),
            ])
            return .mpnDeactivate(deviceId: nonEmptyText(), target: target)
        }
    }

    /// A request; `http` leaves out what HTTP carries in the query string and requires sessions.
    mutating func request(http: Bool) -> TLCPRequest {
        let session: String? = http ? nil : maybe { $0.nonEmptyText() }
        switch int(0...4) {
        case 0:
            // Combo controls: the subscription kind, whose parameters cannot clash with the create's.
            let combo = (0..<int(0...2)).map { _ in ControlOperation.add(subscribe()) }
            return .createSession(
                CreateSessionRequest(
                    clientId: text(), user: maybe { $0.text() }, password: maybe { $0.text() }, adapterSet: maybe { $0.text() },
                    requestedMaxBandwidth: maybe { $0.bandwidth() },
                    supportedDiffs: maybe { r in (0..<r.int(0...2)).map { _ in r.pick(DiffFormat.allCases) } },
                    ttl: maybe { r in r.pick([RequestTTL.unknown, .unlimited, .millis(r.int(0...99999))]) },
                    oldSession: maybe { $0.text() },
                    stream: stream(), comboOperations: combo))
        case 1:
            return .bindSession(BindSessionRequest(session: session, recoveryFrom: maybe { $0.int(0...1_000_000) }, stream: stream()))
        case 2:
            return .control(
                ControlRequest(
                    requestId: word(), session: session, operation: operation(), ack: maybe { $0.bool() }, cause: maybe { $0.text() }))
        case 3:
            let sequence: String? = maybe { $0.word() }
            return .message(
                MessageRequest(
                    requestId: word(), session: session, message: text(), sequence: sequence,
                    progressive: sequence != nil ? int(1...999) : maybe { $0.int(1...999) },
                    maxWait: maybe { $0.int(0...9999) }, ack: maybe { $0.bool() }, outcome: maybe { $0.bool() }))
        default:
            return .heartbeat(HeartbeatRequest(session: session))
        }
    }

    mutating func delta() -> FieldDelta {
        switch int(0...5) {
        case 0: return .unchanged
        case 1: return .unchangedRun(int(1...20))
        case 2: return .null
        case 3: return .jsonPatch(text())
        case 4: return .tlcpDiff(text())
        default: return .value(text())
        }
    }

    mutating func notification() -> TLCPNotification {
        let code = int(-50...100)
        switch int(0...29) {
        case 0: return .conok(sessionId: text(), requestLimit: int(0...99999), keepaliveMillis: int(0...99999), controlLink: text())
        case 1: return .conerr(code: code, message: text())
        case 2: return .end(code: code, message: text())
        case 3: return .wsok
        case 4: return .reqok(requestId: maybe { $0.text() })
        case 5: return .reqerr(requestId: text(), code: code, message: text())
        case 6: return .error(code: code, message: text())
        case 7: return .subok(subscriptionId: int(0...999), itemCount: int(0...99), fieldCount: int(0...99))
        case 8:
            return .subcmd(
                subscriptionId: int(0...999), itemCount: int(0...99), fieldCount: int(0...99), keyPosition: int(1...9),
                commandPosition: int(1...9))
        case 9: return .unsub(subscriptionId: int(0...999))
        case 10:
            return .update(
                UpdateNotification(subscriptionId: int(0...999), item: int(1...99), values: (0..<int(1...12)).map { _ in delta() }))
        case 11: return .endOfSnapshot(subscriptionId: int(0...999), item: int(1...99))
        case 12: return .clearSnapshot(subscriptionId: int(0...999), item: int(1...99))
        case 13: return .overflow(subscriptionId: int(0...999), item: int(1...99), lostCount: int(0...9999))
        case 14: return .conf(subscriptionId: int(0...999), maxFrequency: bool() ? .unlimited : .limited(decimal()), filtered: bool())
        case 15: return .msgdone(sequence: maybe { $0.word() }, progressive: int(1...999), response: text())
        case 16: return .msgfail(sequence: maybe { $0.word() }, progressive: int(1...999), code: code, message: text())
        case 17: return .cons(pick([.unlimited, .unmanaged, .kbps(decimal())]))
        case 18: return .sync(seconds: int(0...99999))
        case 19: return .clientip(text())
        case 20: return .servname(text())
        case 21: return .prog(int(0...99999))
        case 22: return .noop(text())
        case 23: return .probe
        case 24: return .loop(delayMillis: int(0...99999))
        case 25: return .mpnreg(deviceId: text(), adapterName: text())
        case 26: return .mpnzero(deviceId: text())
        case 27: return .mpnok(subscriptionId: int(0...999), mpnSubscriptionId: text())
        case 28: return .mpnconf(mpnSubscriptionId: text())
        default: return .mpndel(mpnSubscriptionId: text())
        }
    }
}

enum Gens {
    static func make<T>(_ body: @Sendable @escaping (inout Rand) -> T) -> Generator<T, Shrink.None<T>> {
        Generator(run: { rng in
            var r = Rand(state: rng.next())
            return body(&r)
        })
    }

    static let wsRequests = make { $0.request(http: false) }
    static let httpRequests = make { $0.request(http: true) }
    static let notifications = make { $0.notification() }
    static let bytes = make { r in (0..<r.int(0...200)).map { _ in UInt8(truncatingIfNeeded: r.next()) } }
    /// Text made of wire-significant pieces, more likely to reach deep parser paths than raw bytes.
    static let wireText = make { r in
        let pieces = [
            "U,", "1", ",", "|", "^", "^P", "^T", "#", "$", "%", "%2", "%C3", "\r\n", "CONOK", "LS_op=", "&", "=", "add",
            "control", "create_session", "LS_reqId=1", "LS_subId=", "LS_mode=MERGE", "LS_group=a", "LS_schema=b", "Ba", "z", "{", "[", "\"",
        ]
        return (0..<r.int(0...30)).map { _ in r.pick(pieces) }.joined()
    }
}
