import Foundation

/// Tokens of the trigger language: the subset of Java expressions MPN triggers are written in.
enum TriggerToken: Equatable, Sendable {
    case intLiteral(UInt64) // decimal or hex, no suffix (range checked by the parser)
    case longLiteral(UInt64) // with L/l
    case hexIntLiteral(UInt32) // 32-bit pattern (0xFFFFFFFF is -1)
    case hexLongLiteral(UInt64) // 64-bit pattern
    case doubleLiteral(Double)
    case floatLiteral(Float)
    case stringLiteral(String)
    case identifier(String)
    case indexedArgument(Int) // $[n], 1-based
    case namedArgument(String) // ${name}
    case symbol(String) // operators and punctuation
    case end
}

struct TriggerLexError: Error {
    var message: String
}

/// Splits a trigger into tokens. Bounded by the input: one pass, no backtracking.
struct TriggerLexer {
    static let maxTokens = 1024

    private static let symbols2: Set<String> = ["&&", "||", "==", "!=", "<=", ">="]
    private static let symbols1: Set<Character> = ["(", ")", ".", ",", "!", "<", ">", "+", "-", "*", "/", "%", "?", ":"]

    static func tokenize(_ text: String) throws(TriggerLexError) -> [TriggerToken] {
        let chars = Array(text.unicodeScalars)
        var i = 0
        var tokens: [TriggerToken] = []
        func peek(_ k: Int = 0) -> Unicode.Scalar? { i + k < chars.count ? chars[i + k] : nil }
        while i < chars.count {
            if tokens.count > maxTokens { throw TriggerLexError(message: "expression too long") }
            let c = chars[i]
            if c == " " || c == "\t" || c == "\n" || c == "\r" || c == "\u{0C}" {
                i += 1
                continue
            }
            if c == "$" {
                if peek(1) == "[" {
                    var j = i + 2
                    var n = 0
                    var digits = 0
                    while j < chars.count, let d = digitValue(chars[j]) {
                        n = n * 10 + d
                        digits += 1
                        if digits > 6 { throw TriggerLexError(message: "argument index too large") }
                        j += 1
                    }
                    guard digits > 0, j < chars.count, chars[j] == "]" else {
                        throw TriggerLexError(message: "malformed indexed argument")
                    }
                    tokens.append(.indexedArgument(n))
                    i = j + 1
                    continue
                }
                if peek(1) == "{" {
                    var j = i + 2
                    var name = ""
                    while j < chars.count, chars[j] != "}" {
                        name.unicodeScalars.append(chars[j])
                        j += 1
                    }
                    guard j < chars.count, !name.isEmpty else { throw TriggerLexError(message: "malformed named argument") }
                    tokens.append(.namedArgument(name))
                    i = j + 1
                    continue
                }
            }
            if isIdentifierStart(c) {
                var name = ""
                while i < chars.count, isIdentifierPart(chars[i]) {
                    name.unicodeScalars.append(chars[i])
                    i += 1
                }
                tokens.append(.identifier(name))
                continue
            }
            if digitValue(c) != nil || (c == "." && peek(1).flatMap(digitValue) != nil) {
                tokens.append(try number(chars, &i))
                continue
            }
            if c == "\"" {
                tokens.append(.stringLiteral(try string(chars, &i)))
                continue
            }
            if c == "'" { throw TriggerLexError(message: "char literals are not supported") }
            if i + 1 < chars.count {
                let two = String(String.UnicodeScalarView([c, chars[i + 1]]))
                if symbols2.contains(two) {
                    tokens.append(.symbol(two))
                    i += 2
                    continue
                }
            }
            let ch = Character(c)
            if symbols1.contains(ch) {
                tokens.append(.symbol(String(ch)))
                i += 1
                continue
            }
            throw TriggerLexError(message: "unexpected character '\(c.escaped(asASCII: true))'")
        }
        tokens.append(.end)
        return tokens
    }

    private static func digitValue(_ c: Unicode.Scalar) -> Int? {
        c.value >= 48 && c.value <= 57 ? Int(c.value - 48) : nil
    }

    private static func isIdentifierStart(_ c: Unicode.Scalar) -> Bool {
        (c.value >= 65 && c.value <= 90) || (c.value >= 97 && c.value <= 122) || c == "_" || c == "$"
    }

    private static func isIdentifierPart(_ c: Unicode.Scalar) -> Bool {
        isIdentifierStart(c) || digitValue(c) != nil
    }

    /// Java numeric literals: decimal and hex integers (with `L`), decimal floating point with
    /// optional exponent and `f`/`F`/`d`/`D` suffix; `_` between digits.
    private static func number(_ chars: [Unicode.Scalar], _ i: inout Int) throws(TriggerLexError) -> TriggerToken {
        var text = ""
        func at(_ k: Int) -> Unicode.Scalar? { k < chars.count ? chars[k] : nil }
        if chars[i] == "0", let x = at(i + 1), x == "x" || x == "X" {
            i += 2
            var value: UInt64 = 0
            var digits = 0
            while let c = at(i), let d = hexValue(c) ?? (c == "_" ? -1 : nil) {
                i += 1
                if d < 0 { continue }
                digits += 1
                guard digits <= 16 else { throw TriggerLexError(message: "hex literal too large") }
                value = value << 4 | UInt64(d)
            }
            guard digits > 0 else { throw TriggerLexError(message: "malformed hex literal") }
            if let s = at(i), s == "L" || s == "l" {
                i += 1
                return .hexLongLiteral(value)
            }
            guard value <= 0xFFFF_FFFF else { throw TriggerLexError(message: "int literal too large") }
            return .hexIntLiteral(UInt32(value))
        }
        var isFloating = false
        func digits() {
            while let c = at(i), digitValue(c) != nil || c == "_" {
                if c != "_" { text.unicodeScalars.append(c) }
                i += 1
            }
        }
        digits()
        if at(i) == ".", at(i + 1).map({ digitValue($0) != nil || !isIdentifierStart($0) }) ?? true {
            isFloating = true
            text.append(".")
            i += 1
            digits()
        }
        if let e = at(i), e == "e" || e == "E" {
            isFloating = true
            text.append("e")
            i += 1
            if let s = at(i), s == "+" || s == "-" {
                text.unicodeScalars.append(s)
                i += 1
            }
            let before = text.count
            digits()
            guard text.count > before else { throw TriggerLexError(message: "malformed exponent") }
        }
        if let s = at(i) {
            switch s {
            case "f", "F":
                i += 1
                if text.hasPrefix(".") { text = "0" + text }
                text = text.replacingOccurrences(of: ".e", with: ".0e")
                if text.hasSuffix(".") { text += "0" }
                guard let f = Float(text) else { throw TriggerLexError(message: "malformed float literal") }
                return .floatLiteral(f)
            case "d", "D":
                i += 1
                isFloating = true
            case "L", "l":
                guard !isFloating else { throw TriggerLexError(message: "malformed long literal") }
                i += 1
                guard let v = UInt64(text), v <= UInt64(Int64.max) + 1 else { throw TriggerLexError(message: "long literal too large") }
                return .longLiteral(v)
            default: break
            }
        }
        if let c = at(i), isIdentifierPart(c) { throw TriggerLexError(message: "malformed number") }
        if isFloating {
            if text.hasPrefix(".") { text = "0" + text }
            text = text.replacingOccurrences(of: ".e", with: ".0e")
            if text.hasSuffix(".") { text += "0" }
            guard let d = Double(text), d.isFinite else {
                throw TriggerLexError(message: "malformed floating-point literal")
            }
            return .doubleLiteral(d)
        }
        guard let v = UInt64(text), v <= UInt64(Int32.max) + 1 else { throw TriggerLexError(message: "int literal too large") }
        return .intLiteral(v)
    }

    private static func hexValue(_ c: Unicode.Scalar) -> Int? {
        switch c.value {
        case 48...57: return Int(c.value - 48)
        case 65...70: return Int(c.value - 55)
        case 97...102: return Int(c.value - 87)
        default: return nil
        }
    }

    private static func string(_ chars: [Unicode.Scalar], _ i: inout Int) throws(TriggerLexError) -> String {
        var result = String.UnicodeScalarView()
        i += 1
        while i < chars.count {
            let c = chars[i]
            i += 1
            if c == "\"" { return String(result) }
            if c == "\n" || c == "\r" { break }
            guard c == "\\" else {
                result.append(c)
                continue
            }
            guard i < chars.count else { break }
            let e = chars[i]
            i += 1
            switch e {
            case "n": result.append("\n")
            case "t": result.append("\t")
            case "r": result.append("\r")
            case "b": result.append("\u{08}")
            case "f": result.append("\u{0C}")
            case "0": result.append("\0")
            case "\"", "'", "\\": result.append(e)
            case "u":
                guard i + 4 <= chars.count else { throw TriggerLexError(message: "malformed \\u escape") }
                var v: UInt32 = 0
                for k in 0..<4 {
                    guard let h = hexValue(chars[i + k]) else { throw TriggerLexError(message: "malformed \\u escape") }
                    v = v << 4 | UInt32(h)
                }
                i += 4
                guard let scalar = Unicode.Scalar(v) else { throw TriggerLexError(message: "unsupported \\u escape") }
                result.append(scalar)
            default:
                throw TriggerLexError(message: "bad escape \\\(e)")
            }
        }
        throw TriggerLexError(message: "unterminated string literal")
    }
}
