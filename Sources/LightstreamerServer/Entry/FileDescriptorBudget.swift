import TLCP

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How many connections the process can hold open: `maxConnections`, but never more than the
/// open-files limit less room for everything else the server opens (listening sockets, the
/// event loops' descriptors, databases, log and certificate files).
enum FileDescriptorBudget {
    static let headroom = 128

    /// `configured`, lowered to fit under `openFilesLimit` (nil: unknown or unlimited).
    static func connectionCap(configured: Int, openFilesLimit: Int?) -> Int {
        guard let openFilesLimit else { return configured }
        return max(1, min(configured, Saturating.add(openFilesLimit, -headroom)))
    }

    /// The soft open-files limit of this process, nil when unknown or unlimited.
    static var openFilesSoftLimit: Int? {
        var limit = rlimit()
        #if canImport(Glibc)
        let resource = __rlimit_resource_t(UInt32(RLIMIT_NOFILE.rawValue))
        #else
        let resource = RLIMIT_NOFILE
        #endif
        // Unlimited (RLIM_INFINITY: all ones on Linux, Int64.max on Darwin) counts as unknown.
        guard getrlimit(resource, &limit) == 0, limit.rlim_cur < rlim_t(Int.max) else { return nil }
        return Int(limit.rlim_cur)
    }
}
