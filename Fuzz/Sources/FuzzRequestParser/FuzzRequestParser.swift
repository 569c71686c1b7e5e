import TLCP

/// libFuzzer entry point: the server-side request parser, over WS messages and HTTP bodies.
/// Any trap is a bug; whatever parses must encode and parse back to the same request.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequestParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let text = String(decoding: bytes, as: UTF8.self)
    if let batch = try? TLCPRequestParser.parseWebSocketMessage(text) {
        for case .success(let request) in batch.requests {
            let again = try? TLCPRequestParser.parseWebSocketMessage(TLCPRequestEncoder.webSocketMessage(request))
            guard let again, case .success(let same)? = again.requests.first, same == request else {
                fatalError("round trip failed for \(text.debugDescription): \(request)")
            }
        }
    }
    for name in ["control.txt", "create_session.txt", "bind_session.txt", "msg.txt", "heartbeat.txt"] {
        _ = try? TLCPRequestParser.parseHTTP(
            fileName: Substring(name), query: "LS_protocol=TLCP-2.5.0&LS_session=S", body: bytes,
            contentType: size % 2 == 0 ? "text/plain; charset=utf-8" : "application/x-www-form-urlencoded")
    }
    // The query string is attacker-controlled too.
    _ = try? TLCPRequestParser.parseHTTP(fileName: "control.txt", query: Substring(text), body: [UInt8]())
    return 0
}
