import Testing

@testable import LightstreamerClient

@Suite struct SubscriptionRequestTests {
    typealias Request = SubscriptionRequest<Subscription.RequestedBufferSize, Subscription.RequestedMaxFrequency>

    @Test func itemsAndGroupAreExclusive() {
        var r = Request()
        r.setItems(["a", "b"])
        #expect(r.group == "a b" && r.itemGroup == nil)
        r.setItemGroup("g")
        #expect(r.items == nil && r.group == "g")
        r.setItems(["c"])
        #expect(r.itemGroup == nil && r.items == ["c"])
    }

    @Test func fieldsAndSchemaAreExclusive() {
        var r = Request()
        r.setFields(["x", "y"])
        #expect(r.schema == "x y" && r.fieldSchema == nil)
        r.setFieldSchema("s")
        #expect(r.fields == nil && r.schema == "s")
        #expect(r.fieldsDescription?.description == "s")
        r.setFields(["z"])
        #expect(r.fieldSchema == nil && r.fieldsDescription?.description == #"["z"]"#)
    }

    @Test func bothAPIsKeepTheirOwnItemNameRules() {
        #expect(!Subscription.rules.isValidItemName("12"))
        #expect(!MPNSubscription.rules.isValidItemName("12"))
        // "+5" is not all digits, but it reads as an integer.
        #expect(Subscription.rules.isValidItemName("+5"))
        #expect(!MPNSubscription.rules.isValidItemName("+5"))
    }

    @Test func realTimeAndMPNShareTheRequestFields() {
        let s = Subscription(subscriptionMode: .MERGE, items: ["a", "b"], fields: ["x"])
        s.dataAdapter = "QUOTES"
        s.requestedBufferSize = .limited(3)
        s.requestedMaxFrequency = .limited(2)
        let m = MPNSubscription(subscription: s)
        #expect(m.items == ["a", "b"] && m.itemGroup == nil && m.fields == ["x"] && m.fieldSchema == nil)
        #expect(m.dataAdapter == "QUOTES" && m.requestedBufferSize == .limited(3) && m.requestedMaxFrequency == .limited(2))
        #expect(m.request.group == "a b" && m.request.schema == "x")
        m.itemGroup = "g"
        #expect(m.items == nil && m.request.group == "g")
    }

    @Test func trapsKeepEachAPIsMessage() async {
        let sub = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            Subscription(subscriptionMode: .MERGE).items = []
        }
        #expect(sub.map { String(decoding: $0.standardErrorContent, as: UTF8.self).contains("Item List is empty") } ?? false)
        let mpn = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            MPNSubscription(subscriptionMode: .MERGE).items = []
        }
        #expect(mpn.map { String(decoding: $0.standardErrorContent, as: UTF8.self).contains("Item list is empty") } ?? false)
    }
}
