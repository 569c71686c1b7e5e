import MPNFuzzCore

/// libFuzzer entry point: the trigger-expression compiler, then the compiled trigger evaluated
/// on field values taken from the rest of the input. The first line is the expression, the
/// following lines the values of fields `a b c d` (a line `\u{1}` is null). Any trap is a bug;
/// an expression that compiles must evaluate on any values, and its normalized text must compile.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTrigger(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let lines = text.split(separator: "\n", maxSplits: 5, omittingEmptySubsequences: false).map(String.init)
    guard let expression = lines.first else { return 0 }
    let fields = ["a", "b", "c", "d"]
    guard let trigger = try? CompiledTrigger(expression, fields: fields) else { return 0 }
    var values: [String?] = lines.dropFirst().prefix(4).map { $0 == "\u{1}" ? nil : $0 }
    _ = trigger.evaluate(values)
    values = ["1", "-2.5e3", "NaN", nil]
    _ = trigger.evaluate(values)
    _ = trigger.evaluate([])
    guard (try? CompiledTrigger(trigger.normalizedText, fields: fields)) != nil else {
        fatalError("normalized trigger does not compile: \(trigger.normalizedText.debugDescription) from \(expression.debugDescription)")
    }
    return 0
}
