import TLCP
import Testing

@Suite struct JSONValueAccessTests {
    @Test func integersBecomeTheirDecimalText() {
        #expect(JSONValue(42) == .number("42"))
        #expect(JSONValue(-7).serialized == "-7")
        #expect(JSONValue(0).serialized == "0")
    }

    @Test func accessorsAnswerOnlyForTheirKind() throws {
        let v = try JSONValue.parse(#"{"b":"x","a":[1,"y"],"c":{"d":null}}"#)
        let members = try #require(v.objectMembers)
        #expect(members.map(\.key) == ["b", "a", "c"])
        #expect(members[0].value.stringValue == "x")
        #expect(members[1].value.arrayValue == [.number("1"), .string("y")])
        #expect(members[2].value.objectMembers == [JSONMember(key: "d", value: .null)])
        #expect(v.stringValue == nil && v.arrayValue == nil)
        #expect(JSONValue.string("s").objectMembers == nil)
        #expect(JSONValue.number("1").stringValue == nil)
    }
}
