import ARI
import Logging
import NIOConcurrencyHelpers
import TLCP
import Testing

@testable import LightstreamerServer
@testable import MPNModule

/// The MPN Module's hooks through a remote Metadata Adapter, end to end without sockets: the
/// module asks `RemoteMetadataAdapter`, which sends `MDA`/`MSA`/`MDC` lines (checked as they
/// would be on the wire, 1.8 dialect, id `9`) to a scripted remote; the remote's error replies
/// come back as the `MPNError` code the client's REQERR carries.
@Suite("MPN hooks over ARI")
struct RemoteMPNHooksTests {
    /// Answers each request line with the payload `answer` returns for it (nil: no reply in
    /// time), and keeps the lines.
    final class ScriptedRemote: RemoteRequester {
        let answer: @Sendable (String) -> String?
        let sent = NIOLockedValueBox<[String]>([])
        init(_ answer: @escaping @Sendable (String) -> String?) { self.answer = answer }

        func request(_ request: ARIRequest) async throws -> ARIReplyPayload {
            let line = request.encode(id: "9", dialect: .v1_8)
            sent.withLockedValue { $0.append(line) }
            guard let payload = answer(line) else { throw RemoteRequestFailure.timedOut }
            guard case .reply(let reply) = try ARIRemoteLine.decode("9|\(request.method.rawValue)|\(payload)") else {
                throw RemoteRequestFailure.malformedReply(payload)
            }
            switch reply.outcome {
            case .success(let p): return p
            case .failure(let e): throw RemoteRequestFailure.refused(e)
            }
        }

        func lines(_ method: String) -> [String] { sent.withLockedValue { $0 }.filter { $0.hasPrefix("9|\(method)|") } }
    }

    /// The remote: every device is accepted; groups and schemas are their space-separated
    /// names; the activation of a group starting with `denied` is refused with a credits error
    /// (-11), `silent` gets no reply, `broken` a notification error; a token change to a token
    /// starting with `0b` is refused (-12).
    static func remote() -> ScriptedRemote {
        ScriptedRemote { line in
            let t = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            switch t[1] {
            case "MDA": return "V"
            case "GIS": return t[5].split(separator: "%20").map { "S|\($0)" }.joined(separator: "|")
            case "GSC": return t[7].split(separator: "%20").map { "S|\($0)" }.joined(separator: "|")
            case "GIT", "GUI":
                // Per item: no snapshot/buffer limit, no frequency limit, every mode.
                let items = (t[1] == "GIT" ? t.count / 2 - 1 : t.count / 2 - 2)
                return Array(repeating: "I|0|D|0|M|RMDC", count: max(0, items)).joined(separator: "|")
            case "MSA":
                let group = t[11]
                if group.hasPrefix("denied") { return "EC|no+credits|-11|No+push+for+that" }
                if group.hasPrefix("silent") { return nil }
                if group.hasPrefix("broken") { return "EN|cannot+check" }
                return "V"
            case "MDC": return t.last?.hasPrefix("0b") == true ? "EC|locked|-12|Token+kept" : "V"
            default: return nil
            }
        }
    }

    @Test func activationAndTokenChangeGoToTheRemoteAndItsCodesReachTheClient() async throws {
        let remote = Self.remote()
        let metadata = RemoteMetadataAdapter(requester: remote, logger: Logger(label: "test"))
        let h = EngineHarness(metadata: metadata)
        defer { h.cleanUp() }
        let (mpn, store) = try await h.startModule()
        let register = MPNRegisterParameters(platform: .apple, applicationId: "com.example.app", deviceToken: "0a01")
        let device = try await mpn.register(register, context: h.context).deviceId
        #expect(remote.lines("MDA").first == "9|MDA|S|#|S|S1|P|A|S|com.example.app|S|0a01")

        // MSA accepted: the line carries the table (1.8: no selector; window index 0, as the
        // MPN Module names no client table), the device, the trigger and the normalized format.
        let id = try await mpn.activate(
            activation(
                device: device, format: #"{"aps":{"alert":"$[1]"}}"#,
                trigger: "Double.parseDouble($[2]) > 5"), context: h.context)
        #expect(try await store.subscription(id: id) != nil)
        let msa = try #require(remote.lines("MSA").first)
        #expect(
            msa == "9|MSA|S|#|S|S1|I|0|M|M|S|item1|S|stock_name%20last_price|I|1|I|1|P|A|S|com.example.app|S|0a01"
                + "|S|Double.parseDouble%28%24%5B2%5D%29%20%3E%205|S|%7B%22aps%22%3A%7B%22alert%22%3A%22%24%5B1%5D%22%7D%7D")

        // MSA refused: the adapter's code (≤ 0); nothing stored.
        let before = try await store.subscriptions(deviceId: device, status: nil).count
        #expect(await mpnCode { _ = try await mpn.activate(activation(device: device, group: "denied1"), context: h.context) } == -11)
        // A notification error, or no reply in time: the Metadata Adapter's generic code.
        #expect(await mpnCode { _ = try await mpn.activate(activation(device: device, group: "broken1"), context: h.context) } == 66)
        #expect(await mpnCode { _ = try await mpn.activate(activation(device: device, group: "silent1"), context: h.context) } == 66)
        #expect(try await store.subscriptions(deviceId: device, status: nil).count == before)
        #expect(remote.lines("MSA").count == 4)

        // MDC: accepted, then refused with the adapter's code (the device keeps its token).
        let moved = MPNRegisterParameters(platform: .apple, applicationId: "com.example.app", deviceToken: "0a01", newDeviceToken: "0a02")
        #expect(try await mpn.register(moved, context: h.context).deviceId == device)
        #expect(remote.lines("MDC") == ["9|MDC|S|#|S|S1|P|A|S|com.example.app|S|0a01|S|0a02"])
        let refused = MPNRegisterParameters(
            platform: .apple, applicationId: "com.example.app", deviceToken: "0a02",
            newDeviceToken: "0b03")
        #expect(await mpnCode { _ = try await mpn.register(refused, context: h.context) } == -12)
        #expect(remote.lines("MDC").count == 2)
        #expect(try await store.device(id: device)?.deviceToken == "0a02")
        await mpn.shutdown()
        await store.close()
    }
}
