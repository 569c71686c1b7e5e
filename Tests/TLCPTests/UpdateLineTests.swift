import Testing

@testable import TLCP

/// `UpdateNotification.line(subscriptionId:item:encodedValues:)` writes into the string's
/// storage itself; the reference is the plain interpolation of the same parts (the values
/// decoded as `String(decoding:as:)` does, invalid UTF-8 repaired).
@Suite struct UpdateLineTests {
    static let numbers = [0, 1, 9, 10, 11, 99, 100, 12_345, 1_000_000_007, Int.max, -1, -10, Int.min]

    static func reference(_ id: Int, _ item: Int, _ values: [UInt8]) -> String {
        "U,\(id),\(item)," + String(decoding: values, as: UTF8.self)
    }

    @Test(arguments: numbers)
    func writesTheNumbersAsDecimal(id: Int) {
        for item in Self.numbers {
            let values = Array("a|b|#|$".utf8)
            #expect(UpdateNotification.line(subscriptionId: id, item: item, encodedValues: values) == Self.reference(id, item, values))
        }
    }

    @Test func copiesTheValuesWhateverTheirLength() {
        var generator = SystemRandomNumberGenerator()
        for length in [0, 1, 5, 15, 16, 40, 200, 5_000] {
            let text = String((0..<length).map { _ in "ab|é€😀^P,".randomElement(using: &generator) ?? "a" })
            let values = Array(text.utf8)
            let id = Int.random(in: 1...10_000, using: &generator)
            #expect(UpdateNotification.line(subscriptionId: id, item: 3, encodedValues: values) == Self.reference(id, 3, values))
        }
    }

    @Test func repairsInvalidUTF8AsDecodingDoes() {
        let values: [UInt8] = [0x61, 0xC3, 0x28, 0xFF, 0x62]
        #expect(UpdateNotification.line(subscriptionId: 1, item: 2, encodedValues: values) == Self.reference(1, 2, values))
    }
}

extension UpdateLineTests {
    @Test(arguments: numbers)
    func headLengthIsWhatWriteHeadWrites(id: Int) {
        for item in Self.numbers {
            let written = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: UpdateNotification.maxHeadBytes) {
                UpdateNotification.writeHead(subscriptionId: id, item: item, into: $0)
            }
            #expect(UpdateNotification.headLength(subscriptionId: id, item: item) == written)
            #expect(written == "U,\(id),\(item),".utf8.count)
        }
    }
}
