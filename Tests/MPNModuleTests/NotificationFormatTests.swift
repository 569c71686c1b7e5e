import Foundation
import TLCP
import Testing

@testable import MPNModule

@Suite("Notification formats")
struct NotificationFormatTests {
    let fields = ["stock_name", "last_price", "time"]

    func code(_ text: String, platform: MPNPlatform = .apple, limits: MPNLimits = MPNLimits()) -> Int? {
        do {
            _ = try NotificationFormat(text, fields: fields, platform: platform, limits: limits)
            return nil
        } catch {
            return error.code
        }
    }

    @Test("named and indexed arguments, subscription id, JSON escaping")
    func substitution() throws {
        let f = try NotificationFormat(
            #"{"aps":{"alert":"Stock ${stock_name} is now $[2]","sound":"default"},"sub":"${LS_MPN_subscription_ID}","t":"$[3]"}"#,
            fields: fields, platform: .apple)
        let json = f.renderText(values: ["Acme \"Q\"\n\\", "12.5", nil], subscriptionId: "abc", badge: nil) ?? ""
        #expect(json == #"{"aps":{"alert":"Stock Acme \"Q\"\n\\ is now 12.5","sound":"default"},"sub":"abc","t":""}"#)
        // The payload stays valid JSON whatever the values contain.
        #expect((try? JSONValue.parse(json)) != nil)
        #expect(
            f.normalizedText
                == #"{"aps":{"alert":"Stock $[1] is now $[2]","sound":"default"},"sub":"${LS_MPN_subscription_ID}","t":"$[3]"}"#)
        #expect(!f.usesAutoBadge)
    }

    @Test("AUTO badge becomes the counter, as a number for aps.badge")
    func autoBadge() throws {
        let f = try NotificationFormat(#"{"aps":{"alert":"x","badge":"AUTO"}}"#, fields: fields, platform: .apple)
        #expect(f.usesAutoBadge)
        #expect(f.renderText(values: [], subscriptionId: "s", badge: 7) == #"{"aps":{"alert":"x","badge":7}}"#)
        let g = try NotificationFormat(#"{"aps":{"badge":"$[2]"}}"#, fields: fields, platform: .apple)
        #expect(g.renderText(values: ["a", "3", nil], subscriptionId: "s", badge: nil) == #"{"aps":{"badge":3}}"#)
        let fcm = try NotificationFormat(
            #"{"android":{"notification":{"notification_count":"AUTO","body":"b"}}}"#,
            fields: fields, platform: .google)
        #expect(fcm.usesAutoBadge)
        #expect(
            fcm.renderText(values: [], subscriptionId: "s", badge: 2)
                == #"{"android":{"notification":{"notification_count":2,"body":"b"}}}"#)
    }

    @Test("empty is 53, invalid JSON is 52")
    func validity() {
        #expect(code("") == 53)
        #expect(code("   ") == 53)
        #expect(code("{}") == 53)
        #expect(code("{\"aps\":") == 52)
        #expect(code("[1,2]") == 52)
        #expect(code("{\"a\": $[1]}") == 52, "placeholders must be inside strings")
        #expect(code("{\"a\":1} x") == 52)
    }

    @Test("bad argument names are 47")
    func arguments() {
        #expect(code(#"{"a":"${nope}"}"#) == 47)
        #expect(code(#"{"a":"$[4]"}"#) == 47)
        #expect(code(#"{"a":"$[0]"}"#) == 47)
        #expect(code(#"{"a":"costs $5 or ${"}"#) == nil, "text that is not a placeholder stays literal")
    }

    @Test("size limits: 49 over 8192 characters, 51 over the platform payload")
    func limits() {
        let long = "{\"a\":\"" + String(repeating: "x", count: 8200) + "\"}"
        #expect(code(long) == 49)
        let big = "{\"a\":\"" + String(repeating: "x", count: 4100) + "\"}"
        #expect(code(big) == 51)
        #expect(code(big, platform: .google) == 51)
        var limits = MPNLimits()
        limits.applePayload = 5000
        #expect(code(big, limits: limits) == nil)
        #expect(throws: MPNError.self) {
            try MPNLimits().checkSubscription(
                adapterSet: "DEMO", dataAdapter: "QUOTE", group: "item1",
                schema: "last_price", items: ["item1"], fields: ["f"],
                format: "{}", trigger: String(repeating: "1", count: 256))
        }
        #expect((try? MPNLimits().checkDevice(applicationId: String(repeating: "a", count: 129), token: "t")) == nil)
    }

    @Test("argument normalization")
    func normalize() throws {
        #expect(try MPNArguments.normalize("${time} ${stock_name} $[2]", fields: fields) == "$[3] $[1] $[2]")
    }
}

@Suite("Notification formats: bounded rendering")
struct BoundedRenderingTests {
    @Test("10,000 placeholders × a 100 KB field: refused after at most the limit's worth of output")
    func hugeExpansion() throws {
        var limits = MPNLimits()
        limits.notificationFormat = 100_000
        let placeholders = String(repeating: "$[1]", count: 10_000)
        let f = try NotificationFormat(#"{"aps":{"alert":"\#(placeholders)"}}"#, fields: ["f"], platform: .apple, limits: limits)
        let field = String(repeating: "x", count: 100_000)
        let (text, built) = f.renderBounded(values: [field], subscriptionId: "s", badge: nil)
        #expect(text == nil)
        #expect(built <= limits.applePayload, "stopped at the limit (\(built) bytes built), not after 1 GB")
        #expect(f.renderText(values: [field], subscriptionId: "s", badge: nil) == nil)
        #expect(f.render(values: [field], subscriptionId: "s", badge: nil) == nil)
        // Escapes count: 2,100 quotes become 4,200 bytes, over 4,096.
        let g = try NotificationFormat(#"{"a":"$[1]"}"#, fields: ["f"], platform: .google)
        #expect(g.renderText(values: [String(repeating: "\"", count: 2_100)], subscriptionId: "s", badge: nil) == nil)
        #expect(g.renderText(values: [String(repeating: "\"", count: 2_000)], subscriptionId: "s", badge: nil) != nil)
        // A smaller limit given by the caller applies too.
        #expect(g.renderText(values: ["abcdef"], subscriptionId: "s", badge: nil, limit: 10) == nil)
        #expect(g.renderText(values: ["abcdef"], subscriptionId: "s", badge: nil, limit: 14) == #"{"a":"abcdef"}"#)
    }

    @Test("multi-byte text is counted in UTF-8 bytes")
    func utf8() throws {
        let f = try NotificationFormat(#"{"a":"$[1]"}"#, fields: ["f"], platform: .google)
        // 1,400 × 3 bytes = 4,200 > 4,096.
        #expect(f.renderText(values: [String(repeating: "€", count: 1_400)], subscriptionId: "s", badge: nil) == nil)
        #expect(f.renderText(values: [String(repeating: "€", count: 1_300)], subscriptionId: "s", badge: nil) != nil)
    }
}

@Suite("APNs device tokens")
struct DeviceTokenTests {
    @Test("hex, even length, at most 200 digits")
    func validation() {
        #expect(MPNDeviceToken.isValidApple(String(repeating: "ab", count: 32)))
        #expect(MPNDeviceToken.isValidApple(String(repeating: "AB", count: 100)))
        #expect(!MPNDeviceToken.isValidApple(String(repeating: "ab", count: 101)))
        for bad in ["", "a", "abc", "0g", "../", "0a/b", "0a%2F", "0a 1", "０a"] { #expect(!MPNDeviceToken.isValidApple(bad), "\(bad)") }
    }

    @Test("registration refuses an Apple token that is not hex with 65; Google tokens are opaque")
    func registration() async throws {
        let h = EngineHarness()
        defer { h.cleanUp() }
        let (mpn, _) = try await h.startModule()
        for bad in ["../../etc", "0a1", "xyz", String(repeating: "0", count: 202)] {
            #expect(
                await mpnCode {
                    _ = try await mpn.register(
                        MPNRegisterParameters(platform: .apple, applicationId: "com.example.app", deviceToken: bad),
                        context: h.context)
                } == 65, "\(bad)")
        }
        #expect(
            await mpnCode {
                _ = try await mpn.register(
                    MPNRegisterParameters(
                        platform: .apple, applicationId: "com.example.app", deviceToken: "0a01",
                        newDeviceToken: "0a/1"), context: h.context)
            } == 65)
        #expect(
            await mpnCode {
                _ = try await mpn.register(
                    MPNRegisterParameters(
                        platform: .google, applicationId: "com.example.app",
                        deviceToken: "fcm:token-with/odd_chars"), context: h.context)
            } == nil)
        #expect(
            await mpnCode {
                _ = try await mpn.register(
                    MPNRegisterParameters(platform: .apple, applicationId: "com.example.app", deviceToken: "0A01"),
                    context: h.context)
            } == nil)
        await mpn.shutdown()
    }
}

@Suite("MPN subscriptions per device")
struct SubscriptionLimitTests {
    @Test("beyond limits.subscriptionsPerDevice a new activation is refused with 49; modifications still pass")
    func limit() async throws {
        let h = EngineHarness { $0.limits.subscriptionsPerDevice = 3 }
        defer { h.cleanUp() }
        let (mpn, store) = try await h.startModule()
        let dev = try await mpn.register(
            MPNRegisterParameters(platform: .apple, applicationId: "com.example.app", deviceToken: "0a01"),
            context: h.context
        ).deviceId
        var ids: [String] = []
        for i in 0..<3 { ids.append(try await mpn.activate(activation(device: dev, group: "item\(i)"), context: h.context)) }
        var refusal: MPNError?
        do { _ = try await mpn.activate(activation(device: dev, group: "item9"), context: h.context) } catch { refusal = error }
        #expect(refusal?.code == 49 && refusal?.message.contains("maximum of 3") == true)
        #expect(try await store.subscriptions(deviceId: dev, status: nil).count == 3)
        // Modifying one is not a new one.
        #expect(try await mpn.activate(activation(device: dev, group: "item0", id: ids[0]), context: h.context) == ids[0])
        // Room again after a deactivation.
        _ = try await mpn.deactivate(deviceId: dev, target: .subscription(ids[1]), context: h.context)
        #expect(await mpnCode { _ = try await mpn.activate(activation(device: dev, group: "item9"), context: h.context) } == nil)
        #expect(MPNLimits().subscriptionsPerDevice == 100)
        let decoded = try JSONDecoder().decode(MPNLimits.self, from: Data(#"{"subscriptionsPerDevice": 7}"#.utf8))
        #expect(decoded.subscriptionsPerDevice == 7)
        await mpn.shutdown()
    }
}
