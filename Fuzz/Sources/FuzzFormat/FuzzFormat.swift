import MPNFuzzCore
import TLCP

/// libFuzzer entry point: the notification-format compiler and the bounded renderer. The first
/// line is the format (Apple when it starts with `{"aps"`, else Google), the following lines the
/// values of fields `a b c`, the last one repeated to grow large. Any trap is a bug; a rendering
/// is never over the platform's limit and is always valid JSON.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFormat(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let lines = text.split(separator: "\n", maxSplits: 4, omittingEmptySubsequences: false).map(String.init)
    guard let source = lines.first else { return 0 }
    let platform: MPNPlatform = source.hasPrefix("{\"aps\"") ? .apple : .google
    guard let format = try? NotificationFormat(source, fields: ["a", "b", "c"], platform: platform) else { return 0 }
    var values: [String?] = lines.dropFirst().prefix(3).map { $0 }
    if let last = values.last ?? nil, !last.isEmpty {
        values[values.count - 1] = String(repeating: last, count: 1 + 2048 / last.utf8.count)
    }
    for badge in [nil, 0, Int.max] as [Int?] {
        guard let out = format.renderText(values: values, subscriptionId: "0123456789abcdef0123456789abcdef0123", badge: badge) else {
            continue
        }
        guard out.utf8.count <= format.payloadLimit else { fatalError("rendering over the limit: \(out.utf8.count)") }
        guard (try? JSONValue.parse(out)) != nil else { fatalError("rendering is not JSON: \(out.debugDescription)") }
    }
    return 0
}
