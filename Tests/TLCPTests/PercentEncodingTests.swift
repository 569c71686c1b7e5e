import Testing

@testable import TLCP

@Suite struct PercentEncodingTests {
    @Test func officialFieldDecoderFixture() throws {
        // docs/protocol/TLCP.md §1.6: mixed-case hex, multi-byte UTF-8, and the specials.
        let tokens = try FieldDelta.parseValues("bar%c3%a0%C3%A8%25%23%24%5E")
        #expect(tokens == [.value("baràè%#$^")])
    }

    @Test func requestValuesEncodeEverythingButUnreserved() {
        #expect(PercentEncoding.encodeRequestValue("mgQkwtwdysogQz2BJ4Ji kOj2Bg") == "mgQkwtwdysogQz2BJ4Ji%20kOj2Bg")
        #expect(PercentEncoding.encodeRequestValue("a+b&c=d%e\r\n") == "a%2Bb%26c%3Dd%25e%0D%0A")
        #expect(PercentEncoding.encodeRequestValue("item1 item2") == "item1%20item2")
        #expect(PercentEncoding.encodeRequestValue("ñ") == "%C3%B1")
        #expect(PercentEncoding.encodeRequestValue("a-b_c.d~e") == "a-b_c.d~e")
    }

    @Test func requestValuesDecodePlusAsSpaceOnlyWhenAsked() throws {
        #expect(try PercentEncoding.decodeRequestValue("a+b%2Bc") == "a b+c")
        #expect(try PercentEncoding.decodeRequestValue("a+b", plusAsSpace: false) == "a+b")
    }

    @Test func badEscapesAreErrors() {
        #expect(throws: PercentEncoding.DecodeError.badEscape(offset: 1)) { try PercentEncoding.decodeRequestValue("a%2") }
        #expect(throws: PercentEncoding.DecodeError.badEscape(offset: 0)) { try PercentEncoding.decodeRequestValue("%zz") }
        #expect(throws: PercentEncoding.DecodeError.invalidUTF8) { try PercentEncoding.decodeRequestValue("%C3%28") }
    }

    @Test func responseArgumentsKeepPlusAndEncodeCommaPercentNewlines() throws {
        let encoded = PercentEncoding.encodeResponseArgument("a,b%c+d\r\ne")
        #expect(encoded == "a%2Cb%25c+d%0D%0Ae")
        #expect(try PercentEncoding.decodeResponseArgument(Substring(encoded)) == "a,b%c+d\r\ne")
        #expect(try PercentEncoding.decodeResponseArgument("text=nick+242+I%C3%B1") == "text=nick+242+Iñ")
    }

    @Test func fieldValuesEncodeSpecialsOnlyAtTheStart() {
        #expect(PercentEncoding.encodeFieldValue("#a#") == "%23a#")
        #expect(PercentEncoding.encodeFieldValue("$5$") == "%245$")
        #expect(PercentEncoding.encodeFieldValue("^P") == "%5EP")
        #expect(PercentEncoding.encodeFieldValue("a|b%c") == "a%7Cb%25c")
        #expect(PercentEncoding.encodeFieldValue("a,b") == "a,b")
    }
}
