import Testing
import TLCP
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
        let json = f.render(values: ["Acme \"Q\"\n\\", "12.5", nil], subscriptionId: "abc", badge: nil)
        #expect(json.serialized == #"{"aps":{"alert":"Stock Acme \"Q\"\n\\ is now 12.5","sound":"default"},"sub":"abc","t":""}"#)
        // The payload stays valid JSON whatever the values contain.
        #expect((try? JSONValue.parse(json.serialized)) != nil)
        #expect(f.normalizedText == #"{"aps":{"alert":"Stock $[1] is now $[2]","sound":"default"},"sub":"${LS_MPN_subscription_ID}","t":"$[3]"}"#)
        #expect(!f.usesAutoBadge)
    }

    @Test("AUTO badge becomes the counter, as a number for aps.badge")
    func autoBadge() throws {
        let f = try NotificationFormat(#"{"aps":{"alert":"x","badge":"AUTO"}}"#, fields: fields, platform: .apple)
        #expect(f.usesAutoBadge)
        #expect(f.render(values: [], subscriptionId: "s", badge: 7).serialized == #"{"aps":{"alert":"x","badge":7}}"#)
        let g = try NotificationFormat(#"{"aps":{"badge":"$[2]"}}"#, fields: fields, platform: .apple)
        #expect(g.render(values: ["a", "3", nil], subscriptionId: "s", badge: nil).serialized == #"{"aps":{"badge":3}}"#)
        let fcm = try NotificationFormat(#"{"android":{"notification":{"notification_count":"AUTO","body":"b"}}}"#,
                                         fields: fields, platform: .google)
        #expect(fcm.usesAutoBadge)
        #expect(fcm.render(values: [], subscriptionId: "s", badge: 2).serialized
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
        #expect(throws: MPNError.self) { try MPNLimits().checkSubscription(adapterSet: "DEMO", dataAdapter: "QUOTE", group: "item1",
                                                                    schema: "last_price", items: ["item1"], fields: ["f"],
                                                                    format: "{}", trigger: String(repeating: "1", count: 256)) }
        #expect((try? MPNLimits().checkDevice(applicationId: String(repeating: "a", count: 129), token: "t")) == nil)
    }

    @Test("argument normalization")
    func normalize() throws {
        #expect(try MPNArguments.normalize("${time} ${stock_name} $[2]", fields: fields) == "$[3] $[1] $[2]")
    }
}
