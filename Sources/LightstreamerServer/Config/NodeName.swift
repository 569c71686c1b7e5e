import Foundation

/// The name of one server node in a cluster: shown in `SERVNAME`, in log metadata (`node`) and
/// on `/metrics` (`lightstreamer_node_info`). 1 to 64 letters, digits, '.', '_' or '-', so it
/// needs no escaping anywhere it goes.
public enum NodeName {
    /// The longest name, in bytes.
    public static let maxLength = 64

    /// A name that cannot be used.
    public struct Invalid: Error, Sendable, Hashable, CustomStringConvertible {
        /// The name as given (cut to `maxLength`).
        public var value: String
        /// The name and what a name may contain.
        public var description: String {
            "invalid node name \"\(value)\": expected 1 to \(NodeName.maxLength) letters, digits, '.', '_' or '-'"
        }
    }

    /// `text` when it is a valid name; throws `Invalid` otherwise.
    public static func validated(_ text: String) throws(Invalid) -> String {
        guard !text.isEmpty, text.utf8.count <= maxLength, text.allSatisfy(isAllowed) else {
            throw Invalid(value: String(text.prefix(maxLength)))
        }
        return text
    }

    /// A valid name made from a host name: other characters become '-', cut to `maxLength`;
    /// `node` when nothing is left.
    public static func derived(fromHostName host: String) -> String {
        let cleaned = String(host.map { isAllowed($0) ? $0 : "-" }.prefix(maxLength))
        return cleaned.isEmpty ? "node" : cleaned
    }

    /// The default of `lightstreamer-server`: this machine's host name, made valid. Nodes
    /// sharing a machine need names of their own (`--node-name`).
    public static var hostDefault: String { derived(fromHostName: ProcessInfo.processInfo.hostName) }

    private static func isAllowed(_ c: Character) -> Bool {
        c.isASCII && (c.isLetter || c.isNumber || c == "." || c == "_" || c == "-")
    }
}
