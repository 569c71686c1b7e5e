import Foundation

/// A configuration file that cannot be used: where (a path such as
/// `adapterSets[0].dataAdapters[1].items[2].updatesPerSecond`) and what was expected.
public struct ConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The key path in the file (empty for the whole file).
    public var path: String
    /// What is wrong and what was expected.
    public var message: String
    /// The file, when loaded from one.
    public var file: String?

    /// An error at `path` (empty for the whole file) of `file`.
    public init(path: String, message: String, file: String? = nil) {
        self.path = path
        self.message = message
        self.file = file
    }

    /// `file: path: message`, leaving out what is unknown.
    public var description: String {
        let location = [file, path.isEmpty ? nil : path].compactMap { $0 }.joined(separator: ": ")
        return location.isEmpty ? message : "\(location): \(message)"
    }

    /// Translates Foundation's decoding errors into a path and a plain sentence.
    init(_ error: DecodingError) {
        switch error {
        case .typeMismatch(let type, let context):
            self.init(path: Self.path(context.codingPath), message: "expected \(Self.describe(type))")
        case .valueNotFound(let type, let context):
            self.init(path: Self.path(context.codingPath), message: "expected \(Self.describe(type)), found null")
        case .keyNotFound(let key, let context):
            self.init(path: Self.path(context.codingPath + [key]), message: "required key is missing")
        case .dataCorrupted(let context):
            var message = context.debugDescription
            if let underlying = context.underlyingError as NSError? {
                let detail = underlying.userInfo[NSDebugDescriptionErrorKey] as? String ?? underlying.localizedDescription
                message += " (\(detail))"
            }
            self.init(path: Self.path(context.codingPath), message: message)
        @unknown default:
            self.init(path: "", message: "\(error)")
        }
    }

    static func path(_ keys: [any CodingKey]) -> String {
        var text = ""
        for key in keys {
            if let i = key.intValue, key.stringValue == "Index \(i)" || key.stringValue == String(i) {
                text += "[\(i)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text
    }

    static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Int.Type, is UInt16.Type: return "an integer"
        case is Double.Type: return "a number"
        case is Bool.Type: return "true or false"
        default:
            let name = String(describing: type)
            if name.hasPrefix("Array") { return "an array" }
            if name.hasPrefix("Dictionary") { return "an object" }
            return "a value of type \(name)"
        }
    }
}

/// Any key, to list the keys an object really has.
struct AnyCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(stringValue: String) { self.stringValue = stringValue }
    init(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }
}

extension Decoder {
    /// Fails on keys outside `allowed`: a misspelt key must not be silently ignored.
    func rejectUnknownKeys(_ allowed: [String]) throws {
        let container = try self.container(keyedBy: AnyCodingKey.self)
        for key in container.allKeys where !allowed.contains(key.stringValue) {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: codingPath + [key],
                    debugDescription: "unknown key; expected one of: \(allowed.joined(separator: ", "))"))
        }
    }

    /// A semantic error at this position (or at `key` below it).
    func invalid(_ message: String, at key: (any CodingKey)? = nil) -> DecodingError {
        .dataCorrupted(.init(codingPath: codingPath + (key.map { [$0] } ?? []), debugDescription: message))
    }
}

/// A field value in the file: a string, a number or a boolean (written as text), or null.
struct ConfigFieldValue: Decodable, Sendable, Hashable {
    var text: String?

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            text = nil
        } else if let s = try? c.decode(String.self) {
            text = s
        } else if let b = try? c.decode(Bool.self) {
            text = b ? "true" : "false"
        } else if let i = try? c.decode(Int.self) {
            text = String(i)
        } else if let d = try? c.decode(Double.self), d.isFinite {
            text = String(d)
        } else {
            throw decoder.invalid("expected a string, a number, true/false or null")
        }
    }

    static func fields(_ values: [String: ConfigFieldValue]) -> [String: String?] {
        values.mapValues { $0.text }
    }
}

/// Raw JSON kept for sections this module does not interpret (e.g. `mpn`).
public indirect enum ConfigJSON: Sendable, Hashable, Codable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([ConfigJSON])
    /// An object.
    case object([String: ConfigJSON])

    /// Decodes any JSON value.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let d = try? c.decode(Double.self) {
            self = .number(d)
        } else if let s = try? c.decode(String.self) {
            self = .string(s)
        } else if let a = try? c.decode([ConfigJSON].self) {
            self = .array(a)
        } else {
            self = .object(try c.decode([String: ConfigJSON].self))
        }
    }

    /// Encodes the value back as JSON.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .number(let d): try c.encode(d)
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }

    /// Member `key` of an object (nil otherwise).
    public subscript(key: String) -> ConfigJSON? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    /// The JSON text (for handing to another decoder).
    public var data: Data {
        (try? JSONEncoder().encode(self)) ?? Data("null".utf8)
    }
}
