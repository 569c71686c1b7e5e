/// The syntax tree of a trigger expression.
indirect enum TriggerNode: Sendable, Equatable {
    case boolLiteral(Bool)
    case intLiteral(Int32)
    case longLiteral(Int64)
    case floatLiteral(Float)
    case doubleLiteral(Double)
    case stringLiteral(String)
    case nullLiteral
    /// 1-based field position ($[n], ${name} resolved, LS_MPN_field<n>).
    case field(Int)
    case unary(String, TriggerNode)
    case binary(String, TriggerNode, TriggerNode)
    case conditional(TriggerNode, TriggerNode, TriggerNode)
    case cast(String, TriggerNode)
    /// `Class.method(args)`, class name without `java.lang.`.
    case staticCall(String, String, [TriggerNode])
    case methodCall(TriggerNode, String, [TriggerNode])
}

/// Why a trigger was refused: bad syntax (44) or a bad argument (47).
enum TriggerCompileError: Error, Equatable {
    case syntax(String)
    case argument(String)
}

/// Recursive-descent parser with Java's precedence. Depth and node count are bounded, so a
/// malicious expression cannot exhaust the stack or memory.
struct TriggerParser {
    static let maxDepth = 48
    static let maxNodes = 400

    private var tokens: [TriggerToken]
    private var pos = 0
    private var depth = 0
    private var nodes = 0
    private let fields: [String]

    /// - Parameter fields: the subscription's field names, to resolve `${name}` and check `$[n]`.
    init(tokens: [TriggerToken], fields: [String]) {
        self.tokens = tokens
        self.fields = fields
    }

    static func parse(_ text: String, fields: [String]) throws(TriggerCompileError) -> TriggerNode {
        let tokens: [TriggerToken]
        do { tokens = try TriggerLexer.tokenize(text) } catch { throw .syntax(error.message) }
        var parser = TriggerParser(tokens: tokens, fields: fields)
        let node = try parser.expression()
        guard parser.current == .end else { throw .syntax("unexpected \(parser.describe(parser.current))") }
        return node
    }

    private var current: TriggerToken { pos < tokens.count ? tokens[pos] : .end }
    private func peek(_ k: Int) -> TriggerToken { pos + k < tokens.count ? tokens[pos + k] : .end }

    private mutating func advance() { if pos < tokens.count { pos += 1 } }

    private mutating func accept(_ symbol: String) -> Bool {
        if current == .symbol(symbol) {
            advance()
            return true
        }
        return false
    }

    private mutating func expect(_ symbol: String) throws(TriggerCompileError) {
        guard accept(symbol) else { throw .syntax("expected '\(symbol)' but found \(describe(current))") }
    }

    private func describe(_ t: TriggerToken) -> String {
        switch t {
        case .end: return "end of expression"
        case .symbol(let s): return "'\(s)'"
        case .identifier(let s): return "'\(s)'"
        default: return "\(t)"
        }
    }

    private mutating func node(_ n: TriggerNode) throws(TriggerCompileError) -> TriggerNode {
        nodes += 1
        guard nodes <= Self.maxNodes else { throw .syntax("expression too complex") }
        return n
    }

    private mutating func enter() throws(TriggerCompileError) {
        depth += 1
        guard depth <= Self.maxDepth else { throw .syntax("expression nested too deeply") }
    }

    // expression := or ('?' expression ':' conditional)?
    mutating func expression() throws(TriggerCompileError) -> TriggerNode {
        try enter()
        defer { depth -= 1 }
        let condition = try binary(level: 0)
        guard accept("?") else { return condition }
        let whenTrue = try expression()
        try expect(":")
        let whenFalse = try expression()
        return try node(.conditional(condition, whenTrue, whenFalse))
    }

    private static let levels: [[String]] = [["||"], ["&&"], ["==", "!="], ["<", "<=", ">", ">="], ["+", "-"], ["*", "/", "%"]]

    private mutating func binary(level: Int) throws(TriggerCompileError) -> TriggerNode {
        if level == Self.levels.count { return try unary() }
        var left = try binary(level: level + 1)
        while case .symbol(let s) = current, Self.levels[level].contains(s) {
            advance()
            let right = try binary(level: level + 1)
            left = try node(.binary(s, left, right))
            // Java: relational operators do not chain (a < b < c is a type error anyway).
        }
        return left
    }

    private static let castTypes: Set<String> = ["int", "long", "float", "double", "String"]

    private mutating func unary() throws(TriggerCompileError) -> TriggerNode {
        try enter()
        defer { depth -= 1 }
        if case .symbol(let s) = current, s == "!" || s == "-" || s == "+" {
            advance()
            if s == "-" {
                // -2147483648 and -9223372036854775808L are legal literals.
                if case .intLiteral(let v) = current, v == UInt64(Int32.max) + 1 {
                    advance()
                    let literal = try node(.intLiteral(Int32.min))
                    return try postfix(literal)
                }
                if case .longLiteral(let v) = current, v == UInt64(Int64.max) + 1 {
                    advance()
                    let literal = try node(.longLiteral(Int64.min))
                    return try postfix(literal)
                }
            }
            let operand = try unary()
            return try node(.unary(s, operand))
        }
        if current == .symbol("("), case .identifier(let type) = peek(1), Self.castTypes.contains(type), peek(2) == .symbol(")") {
            pos += 3
            let operand = try unary()
            return try node(.cast(type, operand))
        }
        let base = try primary()
        return try postfix(base)
    }

    private mutating func postfix(_ base: TriggerNode) throws(TriggerCompileError) -> TriggerNode {
        var result = base
        while accept(".") {
            guard case .identifier(let name) = current else { throw .syntax("expected a method name after '.'") }
            advance()
            guard current == .symbol("(") else { throw .syntax("field access .\(name) is not supported") }
            let args = try arguments()
            result = try node(.methodCall(result, name, args))
        }
        return result
    }

    private mutating func arguments() throws(TriggerCompileError) -> [TriggerNode] {
        try expect("(")
        var args: [TriggerNode] = []
        if accept(")") { return args }
        repeat {
            args.append(try expression())
        } while accept(",")
        try expect(")")
        return args
    }

    private mutating func field(_ index: Int, _ label: String) throws(TriggerCompileError) -> TriggerNode {
        guard index >= 1, index <= fields.count else { throw .argument(label) }
        return try node(.field(index))
    }

    private mutating func primary() throws(TriggerCompileError) -> TriggerNode {
        let token = current
        advance()
        switch token {
        case .intLiteral(let v):
            guard v <= UInt64(Int32.max) else { throw .syntax("int literal out of range") }
            return try node(.intLiteral(Int32(v)))
        case .hexIntLiteral(let v): return try node(.intLiteral(Int32(bitPattern: v)))
        case .longLiteral(let v):
            guard v <= UInt64(Int64.max) else { throw .syntax("long literal out of range") }
            return try node(.longLiteral(Int64(v)))
        case .hexLongLiteral(let v): return try node(.longLiteral(Int64(bitPattern: v)))
        case .doubleLiteral(let d): return try node(.doubleLiteral(d))
        case .floatLiteral(let f): return try node(.floatLiteral(f))
        case .stringLiteral(let s): return try node(.stringLiteral(s))
        case .indexedArgument(let n): return try field(n, "$[\(n)]")
        case .namedArgument(let name):
            guard let i = fields.firstIndex(of: name) else { throw .argument("${\(name)}") }
            return try field(i + 1, "${\(name)}")
        case .symbol("("):
            let inner = try expression()
            try expect(")")
            return inner
        case .identifier(let name):
            switch name {
            case "true": return try node(.boolLiteral(true))
            case "false": return try node(.boolLiteral(false))
            case "null": return try node(.nullLiteral)
            default: break
            }
            if name.hasPrefix("LS_MPN_field"), let n = Int(name.dropFirst("LS_MPN_field".count)) {
                return try field(n, name)
            }
            // Qualified static call: [java.lang.]Class.method(args)
            var path = [name]
            while current == .symbol("."), case .identifier(let next) = peek(1) {
                pos += 2
                path.append(next)
                if current == .symbol("(") { break }
                guard path.count <= 4 else { throw .syntax("name too long") }
            }
            guard path.count >= 2, current == .symbol("(") else {
                throw .syntax("unknown name '\(path.joined(separator: "."))'")
            }
            var qualifier = path.dropLast()
            if qualifier.count == 3, qualifier.first == "java", qualifier.dropFirst().first == "lang" { qualifier = qualifier.dropFirst(2) }
            guard qualifier.count == 1, let cls = qualifier.first, let method = path.last else {
                throw .syntax("unknown class '\(qualifier.joined(separator: "."))'")
            }
            let args = try arguments()
            return try node(.staticCall(cls, method, args))
        default:
            throw .syntax("unexpected \(describe(token))")
        }
    }
}
