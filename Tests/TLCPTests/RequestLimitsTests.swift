import Testing

@testable import TLCP

/// Parameter counts and the merging of query and body parameters (hostile sizes).
@Suite struct RequestLimitsTests {
    static func body(parameters n: Int) -> [UInt8] {
        var s = "LS_reqId=1&LS_op=add"
        for i in 0..<n { s += "&p\(i)=\(i)" }
        return Array(s.utf8)
    }

    @Test func aLineAtTheParameterLimitParses() throws {
        let line = (0..<RequestParameters.maxCount).map { "p\($0)=\($0)" }.joined(separator: "&")
        let params = try RequestParameters.parse(line: Substring(line))
        #expect(params.pairs.count == RequestParameters.maxCount)
        #expect(params["p255"] == "255")
    }

    @Test func oneParameterMoreIsMalformed() {
        let line = (0...RequestParameters.maxCount).map { "p\($0)=\($0)" }.joined(separator: "&")
        #expect(throws: RequestParameters.tooMany) { try RequestParameters.parse(line: Substring(line)) }
    }

    /// 100,000 parameters after a query with `LS_session` (the merge that used to be quadratic).
    @Test func aHugeBodyAfterAQueryIsRefusedPerLine() throws {
        let batch = try TLCPRequestParser.parseHTTP(
            fileName: "control.txt", query: "LS_protocol=TLCP-2.5.0&LS_session=S1",
            body: Self.body(parameters: 100_000))
        #expect(batch.requests.count == 1)
        guard case .failure(let e)? = batch.requests.first else {
            Issue.record("expected a refusal")
            return
        }
        #expect(e.code == 67)
        #expect(e.message.contains("Too many parameters"))
    }

    @Test func queryAndLineTogetherCountTowardTheLimit() throws {
        let query = "LS_protocol=TLCP-2.5.0&" + (0..<200).map { "q\($0)=1" }.joined(separator: "&")
        let batch = try TLCPRequestParser.parseHTTP(
            fileName: "control.txt", query: Substring(query),
            body: Self.body(parameters: 100))
        guard case .failure(let e)? = batch.requests.first else {
            Issue.record("expected a refusal")
            return
        }
        #expect(e.code == 67)
    }

    @Test func theLineOverridesTheQuery() throws {
        let batch = try TLCPRequestParser.parseHTTP(
            fileName: "control.txt", query: "LS_protocol=TLCP-2.5.0&LS_session=S1&LS_reqId=9",
            body: Array("LS_reqId=2&LS_op=destroy\r\nLS_op=destroy".utf8))
        guard case .success(.control(let first))? = batch.requests.first,
            case .success(.control(let second))? = batch.requests.last
        else {
            Issue.record("expected two controls: \(batch.requests)")
            return
        }
        #expect(first.requestId == "2")
        #expect(first.session == "S1")
        #expect(second.requestId == "9")
    }
}
