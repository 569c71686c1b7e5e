import TLCP
import Testing

/// `UpdateLineTokens` (the client's in-place reading of `U` lines) against
/// `TLCPNotification.parseIfUpdate`: the same lines accepted with the same update, the same
/// lines refused with the same message.
@Suite struct UpdateTokensTests {
    /// Scans `line` the way the client does and returns the update or the error message.
    private func scanned(_ line: String) -> Result<UpdateNotification, TLCPLineError> {
        var tokens = UpdateLineTokens()
        // A reused value must not keep anything from the previous line.
        var warm = "U,9,9,#|a%25|^P[]|^2"
        _ = warm.withUTF8 { tokens.scan($0) }
        var text = line
        return text.withUTF8 { bytes in
            if let error = tokens.scan(bytes) { return .failure(error) }
            return .success(tokens.notification(line: bytes))
        }
    }

    private func parsed(_ line: String) -> Result<UpdateNotification, TLCPLineError> {
        do {
            guard let u = try TLCPNotification.parseIfUpdate(line) else { return .failure(TLCPLineError("not an update")) }
            return .success(u)
        } catch {
            return .failure(error)
        }
    }

    static let lines = [
        "U,1,2,a|#|$||^3|%7C", "U,12,1,^P[]\r\n", "U,3,4,x\n", "U,1,1,", "U,1,1,|", "U,1,1,^1|^10|^T%41",
        "U,1,1,#x|$x|##|$$|^", "U,1,1,^0", "U,1,1,^x", "U,1,1,^12a", "U,1,1,%", "U,1,1,%4", "U,1,1,%zz", "U,1,1,%C3%A9|é",
        "U,1,1,%C3", "U,1,1,%FF", "U,1,1,a%", "U,1,1,^P%", "U,1,1,^T%G0", "U,,1,a", "U,1,a", "U,x,1,a", "U,1,1",
        "U,1234567890123,1,a", "U,1,1,\r\n", "U,1,1,^99999999999", "U,1,1,a|b\r", "U,1,1,+%2B|%20 ",
    ]

    @Test(arguments: lines)
    func scanReadsLinesAsParseIfUpdate(line: String) {
        switch (scanned(line), parsed(line)) {
        case (.success(let a), .success(let b)): #expect(a == b, "\(line)")
        case (.failure(let a), .failure(let b)): #expect(a == b, "\(line)")
        case (let a, let b): Issue.record("\(line): scan \(a), parseIfUpdate \(b)")
        }
    }

    @Test func randomLinesReadAsParseIfUpdate() {
        var rand = Rand(state: 0x1234_5678)
        let pieces = ["a", "7", "|", "#", "$", "^", "P", "T", "%", "2", "C", "F", "%7C", "%C3%A9", "é", "^3", "\r", " ", "[]", "^P", "^T"]
        for _ in 0..<3000 {
            var line = "U,1,1,"
            for _ in 0..<Int(rand.next() % 12) { line += pieces[Int(rand.next() % UInt64(pieces.count))] }
            switch (scanned(line), parsed(line)) {
            case (.success(let a), .success(let b)): #expect(a == b, "\(line)")
            case (.failure(let a), .failure(let b)): #expect(a == b, "\(line)")
            case (let a, let b): Issue.record("\(line): scan \(a), parseIfUpdate \(b)")
            }
        }
    }
}
