import Foundation
import Testing

@testable import LightstreamerClient

@Suite struct MPNBuilderTests {
    @Test func apnsBuildHasStableOrder() {
        let b = MPNBuilder()
            .sound("default").badge(with: "AUTO").title("T").body("Stock ${name} is ${price}").subtitle("S")
            .bodyLocKey("k").bodyLocArguments(["a", "b"]).titleLocKey("tk").titleLocArguments(["x"])
            .locActionKey("view").launchImage("img.png").category("cat").threadId("th")
            .contentAvailable(with: 1).mutableContent(with: "1")
            .customData(["z": 1, "a": ["x": "y"]])
        let expected =
            #"{"a":{"x":"y"},"z":1,"aps":{"alert":{"title":"T","subtitle":"S","body":"Stock ${name} is ${price}","title-loc-key":"tk","title-loc-args":["x"],"loc-key":"k","loc-args":["a","b"],"action-loc-key":"view","launch-image":"img.png"},"badge":"AUTO","sound":"default","thread-id":"th","category":"cat","content-available":1,"mutable-content":"1"}}"#
        #expect(b.build() == expected)
        #expect(b.build() == b.build())
    }

    @Test func apnsGettersAndRemoval() {
        let b = MPNBuilder().alert("hello").badge(with: 3).contentAvailable(with: "1")
        #expect(b.alert == "hello")
        #expect(b.body == nil)
        #expect(b.badgeAsInt == 3)
        #expect(b.badgeAsString == "3")
        #expect(b.contentAvailableAsInt == 1)
        #expect(b.contentAvailableAsString == "1")
        b.body("B") // a dictionary alert replaces the string
        #expect(b.alert == nil)
        #expect(b.body == "B")
        b.body(nil).badge(with: nil).contentAvailable(with: nil)
        #expect(b.build() == #"{"aps":{}}"#)
        #expect(b.customData == nil)
    }

    @Test func apnsParsesAnExistingFormat() throws {
        let b = try #require(MPNBuilder(notificationFormat: #"{"aps":{"alert":{"body":"x","title":"t"},"badge":2,"sound":"s"},"k":"v"}"#))
        #expect(b.body == "x")
        #expect(b.title == "t")
        #expect(b.badgeAsInt == 2)
        #expect(b.sound == "s")
        #expect(b.customData?["k"] as? String == "v")
        #expect(b.build() == #"{"k":"v","aps":{"alert":{"title":"t","body":"x"},"badge":2,"sound":"s"}}"#)
        #expect(MPNBuilder(notificationFormat: "[1]") == nil)
        #expect(MPNBuilder(notificationFormat: "not json") == nil)
    }

    @Test func apnsEscapesStrings() {
        #expect(MPNBuilder().alert("a\"b\\c\n").build() == #"{"aps":{"alert":"a\"b\\c\n"}}"#)
    }

    @Test func firebaseBuildHasStableOrder() {
        let b = FirebaseMPNBuilder().body("B").title("T").clickAction("OPEN").icon("i").color("#fff").sound("s").tag("t")
            .channelId("c").image("u").titleLocKey("tk").titleLocArguments(["1"]).bodyLocKey("bk").bodyLocArguments(["2"])
            .data(["z": "1", "a": "${price}"]).collapseKey("ck").priority("HIGH").timeToLive(60)
        let expected =
            ##"{"android":{"collapse_key":"ck","priority":"HIGH","ttl":"60s","notification":{"title":"T","body":"B","icon":"i","color":"#fff","sound":"s","tag":"t","click_action":"OPEN","channel_id":"c","image":"u","title_loc_key":"tk","title_loc_args":["1"],"body_loc_key":"bk","body_loc_args":["2"]},"data":{"a":"${price}","z":"1"}}}"##
        #expect(b.build() == expected)
        #expect(b.timeToLive == 60)
        #expect(b.data?["a"] == "${price}")
    }

    @Test func firebaseRoundTrip() throws {
        let text = FirebaseMPNBuilder().title("T").data(["k": "v"]).priority("NORMAL").build()
        let b = try #require(FirebaseMPNBuilder(notificationFormat: text))
        #expect(b.title == "T")
        #expect(b.priority == "NORMAL")
        #expect(b.data == ["k": "v"])
        #expect(b.build() == text)
        b.title(nil).data(nil).priority(nil)
        #expect(b.build() == #"{"android":{}}"#)
    }

    @Test func apnsReadsAFormatWithKeysSortedAndIntegralNumbersAsIntegers() throws {
        let b = try #require(MPNBuilder(notificationFormat: #"{"z":1.0,"a":{"y":2,"b":1e2},"aps":{"badge":3.0,"alert":"x"}}"#))
        #expect(b.build() == #"{"a":{"b":100,"y":2},"z":1,"aps":{"alert":"x","badge":3}}"#)
        #expect(b.badgeAsString == "3" && b.badgeAsInt == 3)
        #expect(b.customData?["z"] as? Double == 1.0)
        #expect((b.customData?["a"] as? [String: Any])?["y"] as? Int == 2)
    }
}
