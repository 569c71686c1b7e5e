#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The open-files limit of the test process, raised (soft limit, up to the hard one) for tests
/// that open many sockets.
enum OpenFilesLimit {
    struct TooLow: Error, CustomStringConvertible {
        let needed: Int
        let hard: UInt64
        var description: String { "the open-files limit (hard \(hard)) is below the \(needed) this test needs" }
    }

    static func raise(atLeast needed: Int) throws {
        var limit = rlimit()
        guard getrlimit(resourceLimit, &limit) == 0 else { return }
        let wanted = rlim_t(needed)
        guard limit.rlim_cur < wanted else { return }
        guard limit.rlim_max >= wanted else { throw TooLow(needed: needed, hard: UInt64(limit.rlim_max)) }
        limit.rlim_cur = wanted
        _ = setrlimit(resourceLimit, &limit)
    }

    #if canImport(Glibc)
    private static var resourceLimit: __rlimit_resource_t { __rlimit_resource_t(UInt32(RLIMIT_NOFILE.rawValue)) }
    #else
    private static var resourceLimit: Int32 { RLIMIT_NOFILE }
    #endif
}
