import TLCP

/// libFuzzer entry point: JSON Patch and TLCP-diff application on hostile input. The first byte
/// picks the mode:
/// - 0: `<document> NUL <patch>` as texts;
/// - 1: a document and a patch built from the bytes (operations on a few short paths, so that
///   `copy` doublings and deep nesting come up often);
/// - 2: `<base> NUL <diff>` for TLCP-diff.
/// Any trap is a bug, and so is a result past `JSONPatch.Limits` or a TLCP-diff result longer
/// than its inputs.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSONPatch(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let mode = bytes.first else { return 0 }
    let rest = Array(bytes.dropFirst())
    // Small bounds, so that they are reached within a few operations.
    let limits = JSONPatch.Limits(maxDepth: 12, maxNodes: 2_000, maxBytes: 32_768)
    switch mode % 3 {
    case 0:
        let (a, b) = split(rest)
        checkPatch(patch: String(decoding: b, as: UTF8.self), base: String(decoding: a, as: UTF8.self), limits: limits)
    case 1:
        let (base, patch) = build(rest)
        checkPatch(patch: patch, base: base, limits: limits)
    default:
        let (a, b) = split(rest)
        let base = String(decoding: a, as: UTF8.self)
        let diff = String(decoding: b, as: UTF8.self)
        if let out = try? TLCPDiff.apply(diff, to: base) {
            guard out.utf16.count <= base.utf16.count + diff.utf16.count else {
                fatalError("TLCP-diff result longer than its inputs: \(base.debugDescription) \(diff.debugDescription)")
            }
        }
    }
    return 0
}

func split(_ bytes: [UInt8]) -> ([UInt8], [UInt8]) {
    guard let i = bytes.firstIndex(of: 0) else { return (bytes, []) }
    return (Array(bytes[..<i]), Array(bytes[(i + 1)...]))
}

func checkPatch(patch: String, base: String, limits: JSONPatch.Limits) {
    guard let out = try? JSONPatch.apply(patch: patch, to: base, limits: limits) else { return }
    guard let v = try? JSONValue.parse(out, maxDepth: limits.maxDepth) else {
        fatalError("patch result does not parse back: \(out.prefix(200).debugDescription)")
    }
    let size = v.size
    guard size.fits(limits), size.bytes == out.utf8.count else {
        fatalError("patch result past the limits or mismeasured: \(size) for \(out.utf8.count) bytes")
    }
}

/// A document and a patch from bytes: three bytes per operation (kind, path, from).
func build(_ bytes: [UInt8]) -> (String, String) {
    let documents = [#"[[1]]"#, #"{"a":{"b":[1,2]},"c":"x"}"#, #"[]"#, #"{"a":1}"#, #"[{"a":[["s"]]}]"#]
    let paths = [
        "", "/0", "/0/-", "/0/0", "/-", "/a", "/a/b", "/a/b/-", "/c", "/0/a", "/a/a", "/1", "/0/0/0", "/b", "/a/-",
        "/0/1",
    ]
    let values = ["1", #""str""#, "[]", "{}", #"[[["deep"]]]"#, #"{"k":[1,{"k":2}]}"#, "null", "true"]
    let kinds = ["copy", "copy", "copy", "add", "remove", "replace", "move", "test"]
    let base = documents[Int(bytes.first ?? 0) % documents.count]
    var ops: [String] = []
    var i = 1
    while i + 2 < bytes.count, ops.count < 200 {
        let kind = kinds[Int(bytes[i]) % kinds.count]
        let path = paths[Int(bytes[i + 1]) % paths.count]
        let other = Int(bytes[i + 2])
        switch kind {
        case "copy", "move":
            ops.append(#"{"op":"\#(kind)","from":"\#(paths[other % paths.count])","path":"\#(path)"}"#)
        case "remove":
            ops.append(#"{"op":"remove","path":"\#(path)"}"#)
        default:
            ops.append(#"{"op":"\#(kind)","path":"\#(path)","value":\#(values[other % values.count])}"#)
        }
        i += 3
    }
    return (base, "[" + ops.joined(separator: ",") + "]")
}
