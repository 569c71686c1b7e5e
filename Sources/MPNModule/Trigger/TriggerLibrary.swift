import Foundation

/// The Java methods a trigger may call: a fixed table, resolved at compile time by name and
/// argument types. Anything else is refused with 44, so no other code can ever run.
enum TriggerLibrary {
    /// Names accepted (for error messages and documentation).
    static let staticMethods = [
        "Double.parseDouble", "Double.valueOf", "Float.parseFloat", "Float.valueOf", "Integer.parseInt",
        "Integer.valueOf", "Long.parseLong", "Long.valueOf", "Boolean.parseBoolean", "String.valueOf",
        "Math.abs", "Math.min", "Math.max", "Math.round", "Math.floor", "Math.ceil", "Math.sqrt", "Math.pow", "Math.signum",
    ]
    static let stringMethods = [
        "equals", "equalsIgnoreCase", "startsWith", "endsWith", "contains", "length", "isEmpty", "trim", "toUpperCase",
        "toLowerCase", "indexOf", "lastIndexOf", "substring", "compareTo", "compareToIgnoreCase", "concat",
    ]

    private static func bad(_ what: String) -> TriggerCompileError { .syntax(what) }

    private static func stringArg(_ args: [TypedExpr], _ name: String) throws(TriggerCompileError) -> TFn<String?> {
        guard args.count == 1, let f = args[0].asReference else { throw bad("\(name) takes one String argument") }
        return f
    }

    static func staticCall(_ cls: String, _ method: String, _ args: [TypedExpr]) throws(TriggerCompileError) -> TypedExpr {
        let name = "\(cls).\(method)"
        switch name {
        case "Double.parseDouble", "Double.valueOf":
            let s = try stringArg(args, name)
            return .double { x throws(JavaException) in try Java.parseDouble(s(x)) }
        case "Float.parseFloat", "Float.valueOf":
            let s = try stringArg(args, name)
            return .float { x throws(JavaException) in try Java.parseFloat(s(x)) }
        case "Integer.parseInt", "Integer.valueOf":
            let s = try stringArg(args, name)
            return .int { x throws(JavaException) in try Java.parseInt(s(x)) }
        case "Long.parseLong", "Long.valueOf":
            let s = try stringArg(args, name)
            return .long { x throws(JavaException) in try Java.parseLong(s(x)) }
        case "Boolean.parseBoolean":
            let s = try stringArg(args, name)
            return .boolean { x throws(JavaException) in Java.parseBoolean(try s(x)) }
        case "String.valueOf":
            guard args.count == 1 else { throw bad("String.valueOf takes one argument") }
            let t = args[0].asText
            return .string { x throws(JavaException) in try t(x) }
        case "Math.abs":
            guard args.count == 1 else { throw bad("Math.abs takes one argument") }
            switch args[0] {
            case .int(let f):
                return .int { x throws(JavaException) in
                    let v = try f(x)
                    return v < 0 ? 0 &- v : v
                }
            case .long(let f):
                return .long { x throws(JavaException) in
                    let v = try f(x)
                    return v < 0 ? 0 &- v : v
                }
            case .float(let f): return .float { x throws(JavaException) in abs(try f(x)) }
            case .double(let f): return .double { x throws(JavaException) in abs(try f(x)) }
            default: throw bad("Math.abs needs a number, not \(args[0].typeName)")
            }
        case "Math.min", "Math.max":
            guard args.count == 2, let a = args[0].numericRank, let b = args[1].numericRank else {
                throw bad("\(name) takes two numbers")
            }
            let isMin = method == "min"
            switch max(a, b) {
            case 0:
                guard let l = args[0].asInt, let r = args[1].asInt else { throw bad(name) }
                return .int { x throws(JavaException) in
                    let p = try l(x), q = try r(x)
                    return isMin ? min(p, q) : max(p, q)
                }
            case 1:
                guard let l = args[0].asLong, let r = args[1].asLong else { throw bad(name) }
                return .long { x throws(JavaException) in
                    let p = try l(x), q = try r(x)
                    return isMin ? min(p, q) : max(p, q)
                }
            case 2:
                guard let l = args[0].asFloat, let r = args[1].asFloat else { throw bad(name) }
                return .float { x throws(JavaException) in try javaMinMax(l(x), r(x), isMin) }
            default:
                guard let l = args[0].asDouble, let r = args[1].asDouble else { throw bad(name) }
                return .double { x throws(JavaException) in try javaMinMax(l(x), r(x), isMin) }
            }
        case "Math.round":
            guard args.count == 1 else { throw bad("Math.round takes one argument") }
            switch args[0] {
            case .int, .long, .double:
                guard let d = args[0].asDouble else { throw bad(name) }
                return .long { x throws(JavaException) in Java.round(try d(x)) }
            case .float(let f): return .int { x throws(JavaException) in Java.round(try f(x)) }
            default: throw bad("Math.round needs a number")
            }
        case "Math.floor", "Math.ceil", "Math.sqrt", "Math.signum":
            guard args.count == 1, let d = args[0].asDouble else { throw bad("\(name) takes one number") }
            switch method {
            case "floor": return .double { x throws(JavaException) in (try d(x)).rounded(.down) }
            case "ceil": return .double { x throws(JavaException) in (try d(x)).rounded(.up) }
            case "sqrt": return .double { x throws(JavaException) in (try d(x)).squareRoot() }
            default:
                return .double { x throws(JavaException) in
                    let v = try d(x)
                    return v.isNaN || v == 0 ? v : (v > 0 ? 1 : -1)
                }
            }
        case "Math.pow":
            guard args.count == 2, let a = args[0].asDouble, let b = args[1].asDouble else { throw bad("Math.pow takes two numbers") }
            return .double { x throws(JavaException) in javaPow(try a(x), try b(x)) }
        default:
            throw bad("method \(name) is not allowed")
        }
    }

    static func methodCall(_ receiver: TypedExpr, _ method: String, _ args: [TypedExpr]) throws(TriggerCompileError) -> TypedExpr {
        guard case .string(let s) = receiver else {
            throw bad("method \(method) cannot be called on \(receiver.typeName)")
        }
        // Java throws NullPointerException when the receiver is null.
        let recv: TFn<String> = { x throws(JavaException) in
            guard let v = try s(x) else { throw .nullPointer }
            return v
        }
        func noArgs() throws(TriggerCompileError) {
            guard args.isEmpty else { throw bad("\(method)() takes no arguments") }
        }
        func nonNullArg() throws(TriggerCompileError) -> TFn<String> {
            let a = try stringArg(args, method)
            return { x throws(JavaException) in
                guard let v = try a(x) else { throw .nullPointer }
                return v
            }
        }
        switch method {
        case "equals":
            guard args.count == 1 else { throw bad("equals takes one argument") }
            guard let a = args[0].asReference else {
                // A String never equals a boxed number or boolean; still evaluate both sides.
                let t = args[0].asText
                return .boolean { x throws(JavaException) in
                    _ = try recv(x)
                    _ = try t(x)
                    return false
                }
            }
            return .boolean { x throws(JavaException) in try recv(x) == a(x) }
        case "equalsIgnoreCase":
            let a = try stringArg(args, method)
            return .boolean { x throws(JavaException) in Java.equalsIgnoreCase(try recv(x), try a(x)) }
        case "startsWith":
            let a = try nonNullArg()
            return .boolean { x throws(JavaException) in try recv(x).utf16.starts(with: a(x).utf16) }
        case "endsWith":
            let a = try nonNullArg()
            return .boolean { x throws(JavaException) in try recv(x).utf16.reversed().starts(with: a(x).utf16.reversed()) }
        case "contains":
            let a = try nonNullArg()
            return .boolean { x throws(JavaException) in Java.indexOf(try recv(x), try a(x)) >= 0 }
        case "length":
            try noArgs()
            return .int { x throws(JavaException) in Java.length(try recv(x)) }
        case "isEmpty":
            try noArgs()
            return .boolean { x throws(JavaException) in try recv(x).isEmpty }
        case "trim":
            try noArgs()
            return .string { x throws(JavaException) in Java.trim(try recv(x)) }
        case "toUpperCase":
            try noArgs()
            return .string { x throws(JavaException) in try recv(x).uppercased() }
        case "toLowerCase":
            try noArgs()
            return .string { x throws(JavaException) in try recv(x).lowercased() }
        case "indexOf", "lastIndexOf":
            let a = try nonNullArg()
            let last = method == "lastIndexOf"
            return .int { x throws(JavaException) in
                let h = try recv(x), n = try a(x)
                return last ? Java.lastIndexOf(h, n) : Java.indexOf(h, n)
            }
        case "substring":
            guard (1...2).contains(args.count), let b = args[0].asInt else { throw bad("substring takes one or two ints") }
            if args.count == 2 {
                guard let e = args[1].asInt else { throw bad("substring takes one or two ints") }
                return .string { x throws(JavaException) in try Java.substring(recv(x), b(x), e(x)) }
            }
            return .string { x throws(JavaException) in try Java.substring(recv(x), b(x), nil) }
        case "compareTo":
            let a = try nonNullArg()
            return .int { x throws(JavaException) in Java.compare(try recv(x), try a(x)) }
        case "compareToIgnoreCase":
            let a = try nonNullArg()
            return .int { x throws(JavaException) in Java.compare(try recv(x).uppercased().lowercased(), try a(x).uppercased().lowercased())
            }
        case "concat":
            let a = try nonNullArg()
            return .string { x throws(JavaException) in try Java.concat(recv(x), a(x)) }
        default:
            throw bad("method String.\(method) is not allowed")
        }
    }

    /// Math.min/max on floating point: NaN wins, and -0.0 < 0.0.
    private static func javaMinMax<T: BinaryFloatingPoint>(_ a: T, _ b: T, _ isMin: Bool) -> T {
        if a.isNaN || b.isNaN { return .nan }
        if a == b && a == 0 {
            if isMin { return a.sign == .minus ? a : b }
            return a.sign == .plus ? a : b
        }
        return isMin ? Swift.min(a, b) : Swift.max(a, b)
    }

    /// Math.pow for the cases that matter, via repeated squaring for integral exponents and
    /// exp/log otherwise (no Foundation dependency in the hot path).
    private static func javaPow(_ a: Double, _ b: Double) -> Double {
        if b == 0 { return 1 }
        if b.isNaN || a.isNaN { return .nan }
        if b == b.rounded(), abs(b) <= 1024 {
            var result = 1.0, base = a, n = Int(abs(b))
            while n > 0 {
                if n & 1 == 1 { result *= base }
                base *= base
                n >>= 1
            }
            return b < 0 ? 1 / result : result
        }
        guard a > 0 else { return a == 0 ? (b > 0 ? 0 : .infinity) : .nan }
        return exp2(b * log2(a))
    }
}
