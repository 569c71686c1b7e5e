/// The argument placeholders of MPN formats and triggers: `$[n]` (1-based field position),
/// `${field}` (field name) and the special `${LS_MPN_subscription_ID}`.
public enum MPNArguments {
    public static let subscriptionIdName = "LS_MPN_subscription_ID"

    enum Piece: Equatable {
        case text(Substring)
        /// 1-based field position.
        case field(Int)
        case subscriptionId
    }

    /// Splits `text` into literal text and placeholders. Unknown names and positions out of
    /// `1...fields.count` are error 47. Text that only looks like the start of a placeholder
    /// (`$` not followed by a complete `[digits]` or `{name}`) stays literal.
    static func scan(_ text: Substring, fields: [String], allowSubscriptionId: Bool) throws(MPNError) -> [Piece] {
        var pieces: [Piece] = []
        var literalStart = text.startIndex
        var i = text.startIndex
        while i < text.endIndex {
            guard text[i] == "$" else {
                i = text.index(after: i)
                continue
            }
            let next = text.index(after: i)
            guard next < text.endIndex else { break }
            var placeholder: Piece?
            var end = next
            if text[next] == "[" {
                let digitsStart = text.index(after: next)
                if let close = text[digitsStart...].firstIndex(of: "]") {
                    let digits = text[digitsStart..<close]
                    if !digits.isEmpty, digits.count <= 9, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let n = Int(digits) {
                        guard n >= 1, n <= fields.count else { throw .badArgument("$[\(digits)]") }
                        placeholder = .field(n)
                        end = text.index(after: close)
                    }
                }
            } else if text[next] == "{" {
                let nameStart = text.index(after: next)
                if let close = text[nameStart...].firstIndex(of: "}") {
                    let name = String(text[nameStart..<close])
                    if name.isEmpty || name.contains(where: { "\"\\{}$".contains($0) || $0.isWhitespace }) {
                        // Not a placeholder (e.g. a literal "${" in the text): stays literal.
                    } else if name == subscriptionIdName {
                        guard allowSubscriptionId else { throw .badArgument("${\(name)}") }
                        placeholder = .subscriptionId
                    } else if let index = fields.firstIndex(of: name) {
                        placeholder = .field(index + 1)
                    } else {
                        throw .badArgument("${\(name)}")
                    }
                    end = text.index(after: close)
                }
            }
            if let placeholder {
                if literalStart < i { pieces.append(.text(text[literalStart..<i])) }
                pieces.append(placeholder)
                literalStart = end
                i = end
            } else {
                i = next
            }
        }
        if literalStart < text.endIndex { pieces.append(.text(text[literalStart...])) }
        return pieces
    }

    /// The text with every `${field}` replaced by its `$[n]` (how clients read formats and
    /// triggers back). Validates the arguments like `scan`.
    public static func normalize(_ text: String, fields: [String], allowSubscriptionId: Bool = true) throws(MPNError) -> String {
        var out = ""
        for piece in try scan(text[...], fields: fields, allowSubscriptionId: allowSubscriptionId) {
            switch piece {
            case .text(let t): out += t
            case .field(let n): out += "$[\(n)]"
            case .subscriptionId: out += "${\(subscriptionIdName)}"
            }
        }
        return out
    }
}
