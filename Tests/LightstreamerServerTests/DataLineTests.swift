import TLCP
import Testing

@testable import LightstreamerServer

/// A shared encoding's `U` line goes into the log and the output as parts (`DataLine.update`):
/// its bytes and its length must be those of the line `UpdateNotification.line` makes.
@Suite struct DataLineTests {
    static let numbers = [0, 1, 9, 10, 99, 100, 12_345, Int.max, -1, -10, Int.min]

    @Test(arguments: numbers)
    func anUpdateLineInPartsIsTheLineItStandsFor(id: Int) {
        for item in Self.numbers {
            for encoded in [[], Array("a|#|$|^P1|é€".utf8), Array(repeating: UInt8(ascii: "x"), count: 300)] {
                let line = DataLine.update(subscriptionId: id, item: item, encoded: encoded)
                var bytes: [UInt8] = [7]
                line.append(to: &bytes)
                let expected = Array(UpdateNotification.line(subscriptionId: id, item: item, encodedValues: encoded).utf8)
                #expect(Array(bytes.dropFirst()) == expected)
                #expect(line.byteCount == expected.count)
            }
        }
    }

    @Test func textIsCopiedAsItsUTF8() {
        for text in ["", "PROBE", "U,1,1,é€😀", String(repeating: "ab", count: 500)] {
            var bytes: [UInt8] = []
            DataLine.text(text).append(to: &bytes)
            #expect(bytes == Array(text.utf8))
            #expect(DataLine.text(text).byteCount == text.utf8.count)
        }
    }
}
