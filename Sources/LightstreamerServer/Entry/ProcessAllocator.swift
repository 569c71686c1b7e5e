#if canImport(Glibc)
import Glibc
#endif

/// The memory allocator of a server process: mimalloc when the system has it, else the C
/// library's malloc.
///
/// Why: CPU. On this project's machine, the benchmark's server at 5,000 sessions (500,000
/// updates a second) took 1.62–1.84 µs of CPU per update on mimalloc against 1.81–2.12 on
/// glibc's malloc, lower in each of five alternated pairs, with a lower p99; at 1,000 sessions
/// 1.69–1.74 against 1.70–1.85 over six pairs (BENCHMARKS.md, "The allocator"). Memory per idle session did
/// not change beyond its run-to-run spread.
///
/// How: an executable calls `adopt()` first thing (before it starts the server). If mimalloc is
/// installed and not loaded yet, the process executes itself again, same arguments and same
/// process id, with `LD_PRELOAD` naming the library. The new image takes `LD_PRELOAD` out of
/// its environment again, so the processes it starts do not inherit it.
///
/// `LIGHTSTREAMER_MALLOC` chooses: `auto` (the default: mimalloc if installed), `mimalloc` (the
/// same), or `system` (never re-executes). A process started with `LD_PRELOAD` already set (a
/// profiler, a memory checker, an operator's own choice) is left as it is. Linux only;
/// elsewhere `adopt()` does nothing.
public enum ProcessAllocator {
    /// What the process runs on, and why.
    public enum Status: Equatable, Sendable, CustomStringConvertible {
        /// mimalloc, loaded from `path`.
        case mimalloc(path: String)
        /// The C library's malloc, for `reason`.
        case system(reason: String)

        public var description: String {
            switch self {
            case .mimalloc(let path): "mimalloc (\(path))"
            case .system(let reason): "system malloc (\(reason))"
            }
        }
    }

    /// The environment variable that chooses: auto, mimalloc or system.
    public static let choiceVariable = "LIGHTSTREAMER_MALLOC"
    /// Set for the image that `adopt()` executes, to the library it preloads: if the library
    /// then turns out not to be loaded, the process does not try again (no exec loop).
    static let markerVariable = "LIGHTSTREAMER_MALLOC_PRELOADED"
    /// Where Debian, Ubuntu and Fedora install mimalloc 2 (package libmimalloc2.0 on Debian).
    static let candidatePaths = [
        "/usr/lib/x86_64-linux-gnu/libmimalloc.so.2",
        "/usr/lib/aarch64-linux-gnu/libmimalloc.so.2",
        "/usr/lib64/libmimalloc.so.2",
        "/usr/local/lib/libmimalloc.so.2",
        "/usr/lib/libmimalloc.so.2",
    ]

    /// What `adopt()` does.
    enum Decision: Equatable {
        /// Go on in this image, first taking `unset` out of the environment (what an earlier
        /// `adopt()` put there, so that the processes this one starts do not inherit it).
        case keep(Status, unset: [String])
        /// Execute this program again with `LD_PRELOAD` set to `preload`.
        case reexecute(preload: String)
    }

    /// The choice, from the environment, the mimalloc already mapped into the process (nil:
    /// none) and the one installed (nil: none found). No I/O: `adopt()` gathers these.
    static func decide(environment: [String: String], loaded: String?, installed: String?) -> Decision {
        var unset: [String] = []
        if let preloaded = environment[markerVariable] {
            unset.append(markerVariable)
            if environment["LD_PRELOAD"] == preloaded { unset.append("LD_PRELOAD") }
        }
        if let loaded { return .keep(.mimalloc(path: loaded), unset: unset) }
        let choice = environment[choiceVariable] ?? "auto"
        switch choice {
        case "auto", "mimalloc", "": break
        case "system": return .keep(.system(reason: "\(choiceVariable)=system"), unset: unset)
        default:
            // Quoted back cut short and printable: the value is the environment's, of any length
            // and any bytes, and goes into a log line.
            let shown = String(
                choice.prefix(40).map { c -> Character in (c.asciiValue.map { (0x20..<0x7F).contains($0) } ?? false) ? c : "?" })
            let reason = "\(choiceVariable)=\(shown) is not auto, mimalloc or system"
            return .keep(.system(reason: reason), unset: unset)
        }
        if !unset.isEmpty {
            return .keep(.system(reason: "mimalloc was preloaded but is not loaded"), unset: unset)
        }
        if let preload = environment["LD_PRELOAD"], !preload.isEmpty {
            return .keep(.system(reason: "LD_PRELOAD is set; left as it is"), unset: [])
        }
        guard let installed else {
            return .keep(.system(reason: "libmimalloc.so.2 not found; on Debian, package libmimalloc2.0"), unset: [])
        }
        return .reexecute(preload: installed)
    }

    /// The mimalloc mapped into the process, from the lines of `/proc/self/maps` (each ends with
    /// the mapped file's path), or nil.
    static func mimallocPath(inMaps maps: Substring) -> String? {
        for line in maps.split(separator: "\n") {
            guard let slash = line.firstIndex(of: "/") else { continue }
            let path = line[slash...]
            if let name = path.split(separator: "/").last, name.hasPrefix("libmimalloc") { return String(path) }
        }
        return nil
    }

    /// Runs the process on mimalloc when it can (see the type's notes). Returns what the process
    /// runs on; when it executes itself again it returns only if that failed.
    @discardableResult
    public static func adopt() -> Status {
        #if os(Linux)
        let environment = Self.environment()
        let loaded = readMaps().flatMap { mimallocPath(inMaps: $0[...]) }
        let installed = candidatePaths.first { access($0, R_OK) == 0 }
        switch decide(environment: environment, loaded: loaded, installed: installed) {
        case .keep(let status, let unset):
            for name in unset { unsetenv(name) }
            return status
        case .reexecute(let preload):
            setenv("LD_PRELOAD", preload, 1)
            setenv(markerVariable, preload, 1)
            execv("/proc/self/exe", CommandLine.unsafeArgv)
            let error = errno
            unsetenv("LD_PRELOAD")
            unsetenv(markerVariable)
            return .system(reason: "executing again with mimalloc failed, errno \(error)")
        }
        #else
        return .system(reason: "not Linux")
        #endif
    }

    #if os(Linux)
    private static func environment() -> [String: String] {
        var result: [String: String] = [:]
        for name in [choiceVariable, markerVariable, "LD_PRELOAD"] {
            if let value = getenv(name) { result[name] = String(cString: value) }
        }
        return result
    }

    /// `/proc/self/maps`, up to 4 MiB (a process maps a few hundred files), or nil.
    private static func readMaps() -> String? {
        let fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while bytes.count < 4 << 20 {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            bytes.append(contentsOf: chunk[0..<n])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
    #endif
}
