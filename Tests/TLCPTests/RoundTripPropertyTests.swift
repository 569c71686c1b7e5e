import PropertyBased
import TLCP
import Testing

@Suite struct RoundTripPropertyTests {
    @Test func everyRequestRoundTripsOverWebSocket() async {
        await propertyCheck(count: 3000, input: Gens.wsRequests) { request in
            let message = TLCPRequestEncoder.webSocketMessage(request)
            let batch = try TLCPRequestParser.parseWebSocketMessage(message)
            #expect(batch.name == request.name)
            #expect(batch.requests.count == 1)
            #expect(try batch.requests[0].get() == request, "\(message)")
        }
    }

    @Test func everyRequestRoundTripsOverHTTP() async {
        await propertyCheck(count: 2000, input: Gens.httpRequests) { request in
            guard request != .wsok else { return }
            let target = TLCPRequestEncoder.httpTarget(name: request.name, session: "S1")
            let parts = target.split(separator: "?", maxSplits: 1)
            let fileName = try #require(parts.first?.split(separator: "/").last)
            let body = TLCPRequestEncoder.httpBody([request])
            let batch = try TLCPRequestParser.parseHTTP(
                fileName: fileName, query: parts[1], body: Array(body.utf8), contentType: "text/plain; charset=utf-8")
            var expected = request
            // The query's LS_session is the default of every request line.
            switch expected {
            case .bindSession(var b):
                b.session = "S1"
                expected = .bindSession(b)
            case .control(var c):
                c.session = "S1"
                expected = .control(c)
            case .message(var m):
                m.session = "S1"
                expected = .message(m)
            case .heartbeat(var h):
                h.session = "S1"
                expected = .heartbeat(h)
            default: break
            }
            #expect(try batch.requests[0].get() == expected, "\(body)")
        }
    }

    @Test func batchesKeepEveryLine() async {
        await propertyCheck(
            count: 300,
            input: Gens.make { r in (0..<r.int(1...6)).map { _ in ControlRequest(requestId: r.word(), operation: r.operation()) } }
        ) { controls in
            let message = TLCPRequestEncoder.webSocketMessage(controls.map(TLCPRequest.control))
            let batch = try TLCPRequestParser.parseWebSocketMessage(message)
            let parsed = try batch.requests.map { try $0.get() }
            #expect(parsed == controls.map(TLCPRequest.control))
        }
    }

    @Test func everyNotificationRoundTrips() async {
        await propertyCheck(count: 5000, input: Gens.notifications) { n in
            let line = n.encoded()
            #expect(!line.utf8.contains(0x0A) && !line.utf8.contains(0x0D), "\(line)")
            let parsed = try TLCPNotification.parse(line)
            #expect(parsed == n, "\(line)")
        }
    }

    @Test func parsersNeverTrapOnArbitraryInput() async {
        await propertyCheck(count: 3000, input: Gens.bytes) { bytes in
            let text = String(decoding: bytes, as: UTF8.self)
            _ = try? TLCPNotification.parse(text)
            _ = try? TLCPRequestParser.parseWebSocketMessage(text)
            _ = try? TLCPRequestParser.parseHTTP(fileName: "control.txt", query: "LS_protocol=TLCP-2.5.0&LS_session=s", body: bytes)
            _ = try? JSONValue.parse(text)
            _ = try? TLCPDiff.apply(text, to: "base text")
        }
        await propertyCheck(count: 3000, input: Gens.wireText) { text in
            if case .update(let u)? = try? TLCPNotification.parse(text) {
                var values = [String?](repeating: "x", count: 3)
                _ = try? UpdateCodec.apply(u.values, to: &values, isFirst: false)
            }
            _ = try? TLCPRequestParser.parseWebSocketMessage(text)
            _ = try? JSONPatch.apply(patch: text, to: #"{"a":[1,2]}"#)
        }
    }

    @Test func updateEncoderAlwaysDecodesBackToTheNewRow() async {
        let rows = Gens.make { r -> ([String?], [String?]) in
            let width = r.int(1...12)
            let old: [String?] = (0..<width).map { _ in r.maybe { $0.text(0...30) } }
            let new: [String?] = old.map { v in r.int(0...2) == 0 ? v : r.maybe { $0.text(0...30) } }
            return (old, new)
        }
        await propertyCheck(count: 3000, input: rows) { pair in
            let (old, new) = pair
            let tokens = UpdateCodec.encode(previous: old, current: new, diffs: [.tlcpDiff, .jsonPatch])
            let line = UpdateNotification(subscriptionId: 1, item: 1, values: tokens).encoded()
            guard case .update(let u) = try TLCPNotification.parse(line) else {
                Issue.record("not U: \(line)")
                return
            }
            var values = old
            try UpdateCodec.apply(u.values, to: &values, isFirst: false)
            #expect(values == new, "\(line)")
            // Never longer than sending every field literally.
            let literal = UpdateNotification(subscriptionId: 1, item: 1, values: new.map { $0.map(FieldDelta.value) ?? .null }).encoded()
            #expect(line.utf8.count <= literal.utf8.count)
        }
    }
}
