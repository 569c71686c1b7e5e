import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's resident memory, CPU time, open file descriptors and start time, read when
/// `/metrics` is scraped (Linux: `/proc/self`; elsewhere what `getrusage` gives). Figures that
/// cannot be read are nil and not exported.
struct ProcessFigures: Sendable, Equatable {
    var residentBytes: Int?
    var virtualBytes: Int?
    var cpuSeconds: Double?
    var openFileDescriptors: Int?
    var maxFileDescriptors: Int?
    /// Seconds since the Unix epoch.
    var startTimeSeconds: Double?

    /// When this process loaded the server library (the start time where `/proc` is missing).
    static let loadedAt = Date().timeIntervalSince1970

    static func read() -> ProcessFigures {
        var f = ProcessFigures()
        f.maxFileDescriptors = FileDescriptorBudget.openFilesSoftLimit
        #if os(Linux)
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        if let statm = smallFile("/proc/self/statm") {
            let parts = statm.split(separator: " ")
            if parts.count >= 2, let vm = Int(parts[0]), let rss = Int(parts[1]) {
                f.virtualBytes = vm.multipliedReportingOverflow(by: page).overflow ? nil : vm * page
                f.residentBytes = rss.multipliedReportingOverflow(by: page).overflow ? nil : rss * page
            }
        }
        if let stat = smallFile("/proc/self/stat"), ticks > 0, let close = stat.lastIndex(of: ")") {
            // Fields after the command name (which may hold spaces): state is field 3.
            let rest = stat[stat.index(after: close)...].split(separator: " ")
            // utime 14, stime 15, starttime 22 (1-based over the whole line) → 11, 12, 19 here.
            if rest.count > 19, let user = Double(rest[11]), let system = Double(rest[12]) {
                f.cpuSeconds = (user + system) / ticks
                if let start = Double(rest[19]), let boot = bootTime() { f.startTimeSeconds = boot + start / ticks }
            }
        }
        if let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            f.openFileDescriptors = entries.count
        }
        #else
        var usage = rusage()
        if getrusage(RUSAGE_SELF, &usage) == 0 {
            f.cpuSeconds =
                Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
                + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        }
        #endif
        if f.startTimeSeconds == nil { f.startTimeSeconds = loadedAt }
        return f
    }

    /// The first 4 KiB of a `/proc` file.
    private static func smallFile(_ path: String) -> String? {
        guard let h = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? h.close() }
        guard let data = try? h.read(upToCount: 4096) else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `btime` of `/proc/stat`: the boot time in seconds since the epoch.
    private static func bootTime() -> Double? {
        guard let h = FileHandle(forReadingAtPath: "/proc/stat") else { return nil }
        defer { try? h.close() }
        guard let data = try? h.read(upToCount: 64 << 10) else { return nil }
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") where line.hasPrefix("btime ") {
            return Double(line.dropFirst(6).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }
}
