/// Turns a trigger's syntax tree into statically typed Swift closures (Java's static typing:
/// int, long, float, double, boolean, String). Type errors are syntax errors (44), as Java
/// would not compile them. No reflection, no loops: every node does a bounded amount of work.
typealias TriggerRow = [String?]
typealias TFn<T> = @Sendable (TriggerRow) throws(JavaException) -> T

enum TypedExpr {
    case boolean(TFn<Bool>)
    case int(TFn<Int32>)
    case long(TFn<Int64>)
    case float(TFn<Float>)
    case double(TFn<Double>)
    /// A String reference (nil is null).
    case string(TFn<String?>)
    case null

    var typeName: String {
        switch self {
        case .boolean: return "boolean"
        case .int: return "int"
        case .long: return "long"
        case .float: return "float"
        case .double: return "double"
        case .string: return "String"
        case .null: return "null"
        }
    }

    /// 0 int, 1 long, 2 float, 3 double; nil if not numeric.
    var numericRank: Int? {
        switch self {
        case .int: return 0
        case .long: return 1
        case .float: return 2
        case .double: return 3
        default: return nil
        }
    }

    var isReference: Bool {
        switch self {
        case .string, .null: return true
        default: return false
        }
    }

    var asInt: TFn<Int32>? {
        if case .int(let f) = self { return f }
        return nil
    }

    var asLong: TFn<Int64>? {
        switch self {
        case .int(let f): return { r throws(JavaException) in Int64(try f(r)) }
        case .long(let f): return f
        default: return nil
        }
    }

    var asFloat: TFn<Float>? {
        switch self {
        case .int(let f): return { r throws(JavaException) in Float(try f(r)) }
        case .long(let f): return { r throws(JavaException) in Float(try f(r)) }
        case .float(let f): return f
        default: return nil
        }
    }

    var asDouble: TFn<Double>? {
        switch self {
        case .int(let f): return { r throws(JavaException) in Double(try f(r)) }
        case .long(let f): return { r throws(JavaException) in Double(try f(r)) }
        case .float(let f): return { r throws(JavaException) in Double(try f(r)) }
        case .double(let f): return f
        default: return nil
        }
    }

    var asReference: TFn<String?>? {
        switch self {
        case .string(let f): return f
        case .null: return { _ throws(JavaException) in nil }
        default: return nil
        }
    }

    /// String conversion for `+` concatenation and String.valueOf.
    var asText: TFn<String> {
        switch self {
        case .boolean(let f): return { r throws(JavaException) in try f(r) ? "true" : "false" }
        case .int(let f): return { r throws(JavaException) in String(try f(r)) }
        case .long(let f): return { r throws(JavaException) in String(try f(r)) }
        case .float(let f): return { r throws(JavaException) in Java.toString(try f(r)) }
        case .double(let f): return { r throws(JavaException) in Java.toString(try f(r)) }
        case .string(let f): return { r throws(JavaException) in try f(r) ?? "null" }
        case .null: return { _ throws(JavaException) in "null" }
        }
    }
}

struct TriggerCompiler {
    static func compile(_ node: TriggerNode) throws(TriggerCompileError) -> TypedExpr {
        switch node {
        case .boolLiteral(let b): return .boolean { _ throws(JavaException) in b }
        case .intLiteral(let v): return .int { _ throws(JavaException) in v }
        case .longLiteral(let v): return .long { _ throws(JavaException) in v }
        case .floatLiteral(let v): return .float { _ throws(JavaException) in v }
        case .doubleLiteral(let v): return .double { _ throws(JavaException) in v }
        case .stringLiteral(let s): return .string { _ throws(JavaException) in s }
        case .nullLiteral: return .null
        case .field(let n):
            let i = n - 1
            return .string { r throws(JavaException) in i < r.count ? r[i] : nil }
        case .unary(let op, let operand): return try unary(op, compile(operand))
        case .binary(let op, let l, let r): return try binary(op, compile(l), compile(r))
        case .conditional(let c, let t, let f): return try conditional(compile(c), compile(t), compile(f))
        case .cast(let type, let operand): return try cast(type, compile(operand))
        case .staticCall(let cls, let method, let args):
            var compiled: [TypedExpr] = []
            for a in args { compiled.append(try compile(a)) }
            return try TriggerLibrary.staticCall(cls, method, compiled)
        case .methodCall(let receiver, let method, let args):
            var compiled: [TypedExpr] = []
            for a in args { compiled.append(try compile(a)) }
            return try TriggerLibrary.methodCall(compile(receiver), method, compiled)
        }
    }

    static func typeError(_ what: String) -> TriggerCompileError { .syntax(what) }

    private static func unary(_ op: String, _ e: TypedExpr) throws(TriggerCompileError) -> TypedExpr {
        switch (op, e) {
        case ("!", .boolean(let f)): return .boolean { r throws(JavaException) in try !f(r) }
        case ("-", .int(let f)): return .int { r throws(JavaException) in 0 &- (try f(r)) }
        case ("-", .long(let f)): return .long { r throws(JavaException) in 0 &- (try f(r)) }
        case ("-", .float(let f)): return .float { r throws(JavaException) in -(try f(r)) }
        case ("-", .double(let f)): return .double { r throws(JavaException) in -(try f(r)) }
        case ("+", _) where e.numericRank != nil: return e
        default: throw typeError("operator \(op) cannot be applied to \(e.typeName)")
        }
    }

    private static func binary(_ op: String, _ l: TypedExpr, _ r: TypedExpr) throws(TriggerCompileError) -> TypedExpr {
        switch op {
        case "&&", "||":
            guard case .boolean(let a) = l, case .boolean(let b) = r else {
                throw typeError("operator \(op) needs boolean operands, not \(l.typeName) and \(r.typeName)")
            }
            // Short-circuit by hand: `&&`/`||` autoclosures would erase the typed throw.
            if op == "&&" {
                return .boolean { x throws(JavaException) in
                    guard try a(x) else { return false }
                    return try b(x)
                }
            }
            return .boolean { x throws(JavaException) in
                if try a(x) { return true }
                return try b(x)
            }
        case "+" where l.isStringLike || r.isStringLike:
            let a = l.asText, b = r.asText
            return .string { x throws(JavaException) in try Java.concat(a(x), b(x)) }
        case "+", "-", "*", "/", "%":
            return try arithmetic(op, l, r)
        case "<", "<=", ">", ">=":
            return try comparison(op, l, r)
        case "==", "!=":
            let eq = try equality(l, r)
            if op == "==" { return .boolean(eq) }
            return .boolean { x throws(JavaException) in try !eq(x) }
        default:
            throw typeError("unsupported operator \(op)")
        }
    }

    private static func promotedRank(_ l: TypedExpr, _ r: TypedExpr, _ op: String) throws(TriggerCompileError) -> Int {
        guard let a = l.numericRank, let b = r.numericRank else {
            throw typeError("operator \(op) cannot be applied to \(l.typeName) and \(r.typeName)")
        }
        return max(a, b)
    }

    private static func arithmetic(_ op: String, _ l: TypedExpr, _ r: TypedExpr) throws(TriggerCompileError) -> TypedExpr {
        let rank = try promotedRank(l, r, op)
        switch rank {
        case 0:
            guard let a = l.asInt, let b = r.asInt else { throw typeError("bad operands") }
            switch op {
            case "+": return .int { x throws(JavaException) in try a(x) &+ b(x) }
            case "-": return .int { x throws(JavaException) in try a(x) &- b(x) }
            case "*": return .int { x throws(JavaException) in try a(x) &* b(x) }
            case "/":
                return .int { x throws(JavaException) in
                    let d = try b(x)
                    guard d != 0 else { throw .arithmetic }
                    return try a(x).dividedReportingOverflow(by: d).partialValue
                }
            default:
                return .int { x throws(JavaException) in
                    let d = try b(x)
                    guard d != 0 else { throw .arithmetic }
                    return try a(x).remainderReportingOverflow(dividingBy: d).partialValue
                }
            }
        case 1:
            guard let a = l.asLong, let b = r.asLong else { throw typeError("bad operands") }
            switch op {
            case "+": return .long { x throws(JavaException) in try a(x) &+ b(x) }
            case "-": return .long { x throws(JavaException) in try a(x) &- b(x) }
            case "*": return .long { x throws(JavaException) in try a(x) &* b(x) }
            case "/":
                return .long { x throws(JavaException) in
                    let d = try b(x)
                    guard d != 0 else { throw .arithmetic }
                    return try a(x).dividedReportingOverflow(by: d).partialValue
                }
            default:
                return .long { x throws(JavaException) in
                    let d = try b(x)
                    guard d != 0 else { throw .arithmetic }
                    return try a(x).remainderReportingOverflow(dividingBy: d).partialValue
                }
            }
        case 2:
            guard let a = l.asFloat, let b = r.asFloat else { throw typeError("bad operands") }
            switch op {
            case "+": return .float { x throws(JavaException) in try a(x) + b(x) }
            case "-": return .float { x throws(JavaException) in try a(x) - b(x) }
            case "*": return .float { x throws(JavaException) in try a(x) * b(x) }
            case "/": return .float { x throws(JavaException) in try a(x) / b(x) }
            default: return .float { x throws(JavaException) in try a(x).truncatingRemainder(dividingBy: b(x)) }
            }
        default:
            guard let a = l.asDouble, let b = r.asDouble else { throw typeError("bad operands") }
            switch op {
            case "+": return .double { x throws(JavaException) in try a(x) + b(x) }
            case "-": return .double { x throws(JavaException) in try a(x) - b(x) }
            case "*": return .double { x throws(JavaException) in try a(x) * b(x) }
            case "/": return .double { x throws(JavaException) in try a(x) / b(x) }
            default: return .double { x throws(JavaException) in try a(x).truncatingRemainder(dividingBy: b(x)) }
            }
        }
    }

    private static func compare<T: Comparable & Sendable>(_ op: String, _ a: @escaping TFn<T>, _ b: @escaping TFn<T>) -> TypedExpr {
        switch op {
        case "<": return .boolean { x throws(JavaException) in try a(x) < b(x) }
        case "<=": return .boolean { x throws(JavaException) in try a(x) <= b(x) }
        case ">": return .boolean { x throws(JavaException) in try a(x) > b(x) }
        default: return .boolean { x throws(JavaException) in try a(x) >= b(x) }
        }
    }

    private static func comparison(_ op: String, _ l: TypedExpr, _ r: TypedExpr) throws(TriggerCompileError) -> TypedExpr {
        switch try promotedRank(l, r, op) {
        case 0:
            guard let a = l.asInt, let b = r.asInt else { throw typeError("bad operands") }
            return compare(op, a, b)
        case 1:
            guard let a = l.asLong, let b = r.asLong else { throw typeError("bad operands") }
            return compare(op, a, b)
        case 2:
            guard let a = l.asFloat, let b = r.asFloat else { throw typeError("bad operands") }
            return compare(op, a, b)
        default:
            guard let a = l.asDouble, let b = r.asDouble else { throw typeError("bad operands") }
            return compare(op, a, b)
        }
    }

    /// `==`: numeric after promotion, boolean, or references. Two Strings compare by content
    /// (Java compares references, which for field values is never reliably true; comparing
    /// content is the documented deviation). `null == null` is true.
    private static func equality(_ l: TypedExpr, _ r: TypedExpr) throws(TriggerCompileError) -> TFn<Bool> {
        if case .boolean(let a) = l, case .boolean(let b) = r { return { x throws(JavaException) in try a(x) == b(x) } }
        if let a = l.asReference, let b = r.asReference { return { x throws(JavaException) in try a(x) == b(x) } }
        switch try promotedRank(l, r, "==") {
        case 0:
            guard let a = l.asInt, let b = r.asInt else { throw typeError("bad operands") }
            return { x throws(JavaException) in try a(x) == b(x) }
        case 1:
            guard let a = l.asLong, let b = r.asLong else { throw typeError("bad operands") }
            return { x throws(JavaException) in try a(x) == b(x) }
        case 2:
            guard let a = l.asFloat, let b = r.asFloat else { throw typeError("bad operands") }
            return { x throws(JavaException) in try a(x) == b(x) }
        default:
            guard let a = l.asDouble, let b = r.asDouble else { throw typeError("bad operands") }
            return { x throws(JavaException) in try a(x) == b(x) }
        }
    }

    private static func conditional(_ c: TypedExpr, _ t: TypedExpr, _ f: TypedExpr) throws(TriggerCompileError) -> TypedExpr {
        guard case .boolean(let cond) = c else { throw typeError("condition of ?: must be boolean, not \(c.typeName)") }
        if case .boolean(let a) = t, case .boolean(let b) = f {
            return .boolean { x throws(JavaException) in try cond(x) ? a(x) : b(x) }
        }
        if let a = t.asReference, let b = f.asReference {
            return .string { x throws(JavaException) in try cond(x) ? a(x) : b(x) }
        }
        switch try promotedRank(t, f, "?:") {
        case 0:
            guard let a = t.asInt, let b = f.asInt else { throw typeError("bad operands") }
            return .int { x throws(JavaException) in try cond(x) ? a(x) : b(x) }
        case 1:
            guard let a = t.asLong, let b = f.asLong else { throw typeError("bad operands") }
            return .long { x throws(JavaException) in try cond(x) ? a(x) : b(x) }
        case 2:
            guard let a = t.asFloat, let b = f.asFloat else { throw typeError("bad operands") }
            return .float { x throws(JavaException) in try cond(x) ? a(x) : b(x) }
        default:
            guard let a = t.asDouble, let b = f.asDouble else { throw typeError("bad operands") }
            return .double { x throws(JavaException) in try cond(x) ? a(x) : b(x) }
        }
    }

    private static func cast(_ type: String, _ e: TypedExpr) throws(TriggerCompileError) -> TypedExpr {
        if type == "String" {
            guard let f = e.asReference else { throw typeError("cannot cast \(e.typeName) to String") }
            return .string(f)
        }
        guard let d = e.asDouble else { throw typeError("cannot cast \(e.typeName) to \(type)") }
        switch (type, e) {
        case ("int", .int): return e
        case ("int", .long(let f)): return .int { x throws(JavaException) in Int32(truncatingIfNeeded: try f(x)) }
        case ("int", _): return .int { x throws(JavaException) in Java.toInt(try d(x)) }
        case ("long", .int), ("long", .long):
            guard let f = e.asLong else { throw typeError("bad cast") }
            return .long(f)
        case ("long", _): return .long { x throws(JavaException) in Java.toLong(try d(x)) }
        case ("float", .double(let f)): return .float { x throws(JavaException) in Float(try f(x)) }
        case ("float", _):
            guard let f = e.asFloat else { throw typeError("bad cast") }
            return .float(f)
        default: return .double(d)
        }
    }
}

extension TypedExpr {
    /// A String (or null) operand makes `+` a concatenation.
    var isStringLike: Bool {
        if case .string = self { return true }
        return false
    }
}
