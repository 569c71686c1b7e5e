import Dispatch
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#endif

/// Gives memory that ended sessions held back to the system. glibc's allocator keeps freed
/// memory in its arenas, so without this a burst of sessions (or of slow readers holding large
/// backlogs) leaves the process at its peak size long after they are gone. A call after
/// sessions close runs `malloc_trim` at most once per `intervalMillis`, off the event loops.
/// Elsewhere than glibc it does nothing.
final class MemoryTrimmer: Sendable {
    private let intervalMillis: Int
    private let queue = DispatchQueue(label: "lightstreamer.memory-trim")
    private let scheduled = NIOLockedValueBox(false)

    init(intervalMillis: Int = 5_000) {
        self.intervalMillis = intervalMillis
    }

    /// Sessions closed: trims within `intervalMillis` (one trim for a whole burst).
    func sessionsClosed() {
        #if canImport(Glibc)
        let schedule = scheduled.withLockedValue { s -> Bool in
            if s { return false }
            s = true
            return true
        }
        guard schedule else { return }
        queue.asyncAfter(deadline: .now() + .milliseconds(intervalMillis)) { [scheduled] in
            scheduled.withLockedValue { $0 = false }
            _ = Self.trim?(0)
        }
        #endif
    }

    #if canImport(Glibc)
    /// glibc's `malloc_trim` (declared in malloc.h, which the Glibc module leaves out), found
    /// at run time; nil with another C library.
    private typealias Trim = @convention(c) (Int) -> Int32
    private static let trim: Trim? = {
        guard let process = dlopen(nil, RTLD_NOW), let symbol = dlsym(process, "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: Trim.self)
    }()
    #endif
}
