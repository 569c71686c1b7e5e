import TLCP

/// The type tags that precede values in an ARI line (docs/ARI.md, "Types").
public enum ARIType: String, Sendable, Hashable, CaseIterable {
    case string = "S"
    case boolean = "B"
    case integer = "I"
    case long = "L"
    case double = "D"
    case modes = "M"
    case platform = "P"
    /// Base64 bytes of an update value (1.8.x senders).
    case bytes = "Y"
    /// Diff algorithm letters (1.9.x `DFD`).
    case diffAlgorithms = "F"
}

/// The subscription modes of an `M` value: letters `R`, `M`, `D`, `C`; `$` is the empty set.
public struct ARIModes: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue & 0x0F }

    public static let raw = ARIModes(rawValue: 1)
    public static let merge = ARIModes(rawValue: 2)
    public static let distinct = ARIModes(rawValue: 4)
    public static let command = ARIModes(rawValue: 8)
    public static let all: ARIModes = [.raw, .merge, .distinct, .command]

    public init(_ mode: SubscriptionMode) {
        switch mode {
        case .raw: self = .raw
        case .merge: self = .merge
        case .distinct: self = .distinct
        case .command: self = .command
        }
    }

    public func contains(_ mode: SubscriptionMode) -> Bool { contains(ARIModes(mode)) }

    /// Exactly one mode, when the set holds one (tables carry a single letter).
    public var single: SubscriptionMode? {
        switch self {
        case .raw: return .raw
        case .merge: return .merge
        case .distinct: return .distinct
        case .command: return .command
        default: return nil
        }
    }

    private static let letters: [(ARIModes, UInt8)] = [
        (.raw, UInt8(ascii: "R")), (.merge, UInt8(ascii: "M")), (.distinct, UInt8(ascii: "D")), (.command, UInt8(ascii: "C")),
    ]

    /// The wire form, in `RMDC` order; `$` for none.
    public var token: String {
        let bytes = Self.letters.filter { contains($0.0) }.map(\.1)
        return bytes.isEmpty ? "$" : String(decoding: bytes, as: UTF8.self)
    }

    /// Reads letters in any order; an unknown or repeated letter is nil.
    public init?(token: Substring) {
        if token == "$" {
            self = []
            return
        }
        var set: ARIModes = []
        for b in token.utf8 {
            guard let m = Self.letters.first(where: { $0.1 == b })?.0, !set.contains(m) else { return nil }
            set.insert(m)
        }
        guard !set.isEmpty else { return nil }
        self = set
    }
}

extension MPNPlatform {
    /// The `P` letter: `A` Apple, `G` Google.
    public var ariToken: String { self == .apple ? "A" : "G" }

    public init?(ariToken: Substring) {
        switch ariToken {
        case "A": self = .apple
        case "G": self = .google
        default: return nil
        }
    }
}

/// A diff algorithm a remote offers for a field (1.9.x `DFD`, type `F`).
public enum ARIDiffAlgorithm: String, Sendable, Hashable, CaseIterable {
    /// `J`: JSON Patch.
    case jsonPatch = "J"
    /// `M`: diff-match-patch (TLCP-diff).
    case diffMatchPatch = "M"
}

/// One typed value, as carried after its type tag.
public enum ARIValue: Sendable, Hashable {
    case string(String?)
    case boolean(Bool)
    case integer(Int)
    case long(Int64)
    case double(Double)
    case modes(ARIModes?)
    case platform(MPNPlatform?)
    case bytes([UInt8]?)
    case diffAlgorithms([ARIDiffAlgorithm]?)

    public var type: ARIType {
        switch self {
        case .string: return .string
        case .boolean: return .boolean
        case .integer: return .integer
        case .long: return .long
        case .double: return .double
        case .modes: return .modes
        case .platform: return .platform
        case .bytes: return .bytes
        case .diffAlgorithms: return .diffAlgorithms
        }
    }

    /// The value token (without its type tag).
    public var token: String {
        switch self {
        case .string(let s): return ARIStringCoding.encode(s)
        case .boolean(let b): return b ? "1" : "0"
        case .integer(let i): return String(i)
        case .long(let l): return String(l)
        case .double(let d): return ARINumbers.format(d)
        case .modes(let m): return m?.token ?? "#"
        case .platform(let p): return p?.ariToken ?? "#"
        case .bytes(let b):
            guard let b else { return "#" }
            return b.isEmpty ? "$" : ARIBase64.encode(b)
        case .diffAlgorithms(let a):
            guard let a else { return "#" }
            return a.isEmpty ? "$" : a.map(\.rawValue).joined()
        }
    }

    /// Reads the value token that followed type tag `type`.
    public init(type: ARIType, token: Substring, limits: ARILimits = .default) throws(ARIProtocolError) {
        switch type {
        case .string: self = .string(try ARIStringCoding.decode(token))
        case .boolean:
            switch token {
            case "1": self = .boolean(true)
            case "0": self = .boolean(false)
            default: throw .badValue(type: "B", value: String(token))
            }
        case .integer: self = .integer(try ARINumbers.parseInt(token, type: "I", limits: limits))
        case .long: self = .long(Int64(try ARINumbers.parseInt(token, type: "L", limits: limits)))
        case .double: self = .double(try ARINumbers.parseDouble(token, limits: limits))
        case .modes:
            if token == "#" {
                self = .modes(nil)
                return
            }
            guard let m = ARIModes(token: token) else { throw .badValue(type: "M", value: String(token)) }
            self = .modes(m)
        case .platform:
            if token == "#" {
                self = .platform(nil)
                return
            }
            guard let p = MPNPlatform(ariToken: token) else { throw .badValue(type: "P", value: String(token)) }
            self = .platform(p)
        case .bytes:
            if token == "#" {
                self = .bytes(nil)
                return
            }
            if token == "$" {
                self = .bytes([])
                return
            }
            guard let b = ARIBase64.decode(token) else { throw .badValue(type: "Y", value: String(token)) }
            self = .bytes(b)
        case .diffAlgorithms:
            if token == "#" {
                self = .diffAlgorithms(nil)
                return
            }
            if token == "$" {
                self = .diffAlgorithms([])
                return
            }
            var algorithms: [ARIDiffAlgorithm] = []
            for ch in token {
                guard let a = ARIDiffAlgorithm(rawValue: String(ch)) else { throw .badValue(type: "F", value: String(token)) }
                algorithms.append(a)
            }
            self = .diffAlgorithms(algorithms)
        }
    }
}
