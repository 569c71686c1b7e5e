import TLCP
import Testing

@testable import LightstreamerServer

/// A shared encoding's `U` line goes into the log as parts (`DataLine.update`): its bytes and its
/// length must be those of the line `UpdateNotification.line` makes.
@Suite struct DataLineTests {
    static let numbers = [0, 1, 9, 10, 99, 100, 12_345, Int.max, -1, -10, Int.min]

    /// What `write(into:)` writes into a buffer of exactly `byteCount` bytes.
    static func written(_ line: DataLine) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: line.byteCount) { buffer, count in
            count = line.write(into: buffer)
        }
    }

    @Test(arguments: numbers)
    func anUpdateLineInPartsIsTheLineItStandsFor(id: Int) {
        for item in Self.numbers {
            for encoded in [[], Array("a|#|$|^P1|é€".utf8), Array(repeating: UInt8(ascii: "x"), count: 300)] {
                encoded.withUnsafeBufferPointer { borrowed in
                    let line = DataLine.update(subscriptionId: id, item: item, encoded: borrowed)
                    let bytes = [7] + Self.written(line)
                    let expected = Array(UpdateNotification.line(subscriptionId: id, item: item, encodedValues: encoded).utf8)
                    #expect(Array(bytes.dropFirst()) == expected)
                    #expect(line.byteCount == expected.count)
                }
            }
        }
    }

    @Test func textIsCopiedAsItsUTF8() {
        for text in ["", "PROBE", "U,1,1,é€😀", String(repeating: "ab", count: 500)] {
            #expect(Self.written(DataLine.text(text)) == Array(text.utf8))
            #expect(DataLine.text(text).byteCount == text.utf8.count)
        }
    }
}
