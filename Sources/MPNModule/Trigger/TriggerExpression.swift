import Foundation

/// A compiled MPN trigger: a Java boolean expression over the subscription's field values,
/// evaluated on each update until it is true.
///
/// The language is a fixed subset of Java expressions (see `TriggerLibrary` for the methods):
/// literals (int, long `L`, double, float `f`, String, `true`/`false`/`null`), arguments
/// `$[n]` (1-based), `${field}` and `LS_MPN_field<n>` (all Strings, null when the field is
/// null), `+ - * / %` with Java's binary numeric promotion and int/long wrap-around, `< <= > >=
/// == !=`, `&& || !`, `?:`, casts to int/long/float/double/String, `Double.parseDouble`,
/// `Integer.parseInt`, `Long.parseLong`, `Float.parseFloat`, `Math.*` and String methods.
/// An evaluation that throws in Java (NumberFormatException, NullPointerException, division by
/// zero, bad substring index) is false. There are no loops, no reflection and no user-defined
/// calls; parse depth, node count and string growth are bounded, so evaluation time and memory
/// are bounded by the expression size (≤ 255 characters) and the field values.
///
/// Deviation from Java: `==` between two Strings compares their content.
public struct CompiledTrigger: Sendable {
    /// The normalized text (named arguments turned into `$[n]`).
    public let normalizedText: String
    private let evaluator: TFn<Bool>

    /// Compiles `text` against the subscription's field names. Throws `MPNError` 44 (syntax or
    /// types), 47 (unknown `${name}`, `$[n]` out of range).
    public init(_ text: String, fields: [String]) throws(MPNError) {
        do throws(TriggerCompileError) {
            let node = try TriggerParser.parse(text, fields: fields)
            guard case .boolean(let f) = try TriggerCompiler.compile(node) else {
                throw TriggerCompileError.syntax("the expression is not boolean")
            }
            evaluator = f
        } catch {
            switch error {
            case .syntax(let why): throw .triggerSyntax(why)
            case .argument(let name): throw .badArgument(name)
            }
        }
        normalizedText = try MPNArguments.normalize(text, fields: fields, allowSubscriptionId: false)
    }

    /// Evaluates against one row of field values (schema order, nil = null). A Java exception
    /// during evaluation gives false.
    public func evaluate(_ values: [String?]) -> Bool {
        do { return try evaluator(values) } catch { return false }
    }

    /// Like `evaluate` but tells which Java exception was thrown (tests, diagnostics).
    func evaluateThrowing(_ values: [String?]) throws(JavaException) -> Bool {
        try evaluator(values)
    }
}

/// The optional compatibility filter of Lightstreamer: a list of Java-style regular
/// expressions, one of which must match the whole normalized trigger. `nil` accepts every
/// trigger (the language is safe by construction); an empty list refuses all of them.
public struct TriggerAllowList: Sendable {
    public let patterns: [String]
    private let compiled: [NSRegularExpressionBox]

    public init(patterns: [String]) throws {
        self.patterns = patterns
        compiled = try patterns.map { NSRegularExpressionBox(try NSRegularExpression(pattern: $0)) }
    }

    public func accepts(_ normalizedTrigger: String) -> Bool {
        let range = NSRange(normalizedTrigger.startIndex..., in: normalizedTrigger)
        return compiled.contains { box in
            guard let m = box.regex.firstMatch(in: normalizedTrigger, options: [.anchored], range: range) else { return false }
            return m.range == range
        }
    }
}

/// NSRegularExpression is immutable and thread-safe once built.
struct NSRegularExpressionBox: @unchecked Sendable {
    let regex: NSRegularExpression
    init(_ regex: NSRegularExpression) { self.regex = regex }
}
