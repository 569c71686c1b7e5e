import AsyncHTTPClient
import Foundation
import NIOCore
import TLCP

/// A minimal TLCP client over HTTP polling, for end-to-end tests of the server's MPN surface:
/// plain HTTP requests on loopback, replies and polled notifications as text lines.
final class PollingTLCPClient: Sendable {
    let base: String
    let client: HTTPClient
    let session: String

    private init(base: String, client: HTTPClient, session: String) {
        self.base = base
        self.client = client
        self.session = session
    }

    /// Creates a polling session on `adapterSet`; the first poll's lines are discarded.
    static func connect(port: Int, adapterSet: String, client: HTTPClient) async throws -> PollingTLCPClient {
        let base = "http://127.0.0.1:\(port)/lightstreamer"
        let lines = try await post(
            client, "\(base)/create_session.txt?LS_protocol=TLCP-2.5.0",
            "LS_polling=true&LS_polling_millis=0&LS_idle_millis=0&LS_adapter_set=\(adapterSet)&LS_cid=mgQkwtwdysogQz2BJ4Ji%20kOj2Bg")
        guard let conok = lines.first, conok.hasPrefix("CONOK,") else { throw PollingClientError.unexpected(lines) }
        let session = String(conok.split(separator: ",")[1])
        return PollingTLCPClient(base: base, client: client, session: session)
    }

    /// One control request (parameters given unencoded); the reply line (REQOK/REQERR).
    func control(_ parameters: KeyValuePairs<String, String>) async throws -> String {
        let body = parameters.map { "\($0.key)=\(PercentEncoding.encodeRequestValue($0.value))" }.joined(separator: "&")
        let lines = try await Self.post(client, "\(base)/control.txt?LS_protocol=TLCP-2.5.0&LS_session=\(session)", body)
        return lines.first ?? ""
    }

    /// One poll: the data lines it brought (CONOK, SERVNAME, CLIENTIP, CONS, LOOP, PROBE left out).
    func poll(idleMillis: Int = 500) async throws -> [String] {
        let lines = try await Self.post(
            client, "\(base)/bind_session.txt?LS_protocol=TLCP-2.5.0",
            "LS_session=\(session)&LS_polling=true&LS_polling_millis=0&LS_idle_millis=\(idleMillis)")
        let control = ["CONOK", "SERVNAME", "CLIENTIP", "CONS", "LOOP", "PROBE", "SYNC", "NOOP"]
        return lines.filter { line in !control.contains { line.hasPrefix($0 + ",") || line == $0 } }
    }

    /// Polls until a line satisfies `match` (all lines seen so far are returned), or fails after `seconds`.
    func pollUntil(seconds: Double = 20, _ match: (String) -> Bool) async throws -> [String] {
        var seen: [String] = []
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            seen += try await poll()
            if seen.contains(where: match) { return seen }
        }
        throw PollingClientError.timedOut(seen)
    }

    static func post(_ client: HTTPClient, _ url: String, _ body: String) async throws -> [String] {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.body = .bytes(ByteBuffer(string: body))
        let response = try await client.execute(request, timeout: .seconds(30))
        let buffer = try await response.body.collect(upTo: 4 << 20)
        return String(buffer: buffer).split(separator: "\r\n", omittingEmptySubsequences: true).map(String.init)
    }
}

enum PollingClientError: Error {
    case unexpected([String])
    case timedOut([String])
}

/// The fields of a `U` line (`U,<sub>,<item>,<v1>|<v2>…`), unencoded; nil if not one.
func updateValues(_ line: String, subscription: Int) -> [String]? {
    let prefix = "U,\(subscription),"
    guard line.hasPrefix(prefix) else { return nil }
    let rest = line.dropFirst(prefix.count)
    guard let comma = rest.firstIndex(of: ",") else { return nil }
    return rest[rest.index(after: comma)...].split(separator: "|", omittingEmptySubsequences: false).map {
        (try? PercentEncoding.decodeResponseArgument($0)) ?? String($0)
    }
}
