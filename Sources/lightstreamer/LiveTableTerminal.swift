import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Draws a `LiveTable` on the terminal behind standard output: the alternate screen, redrawn
/// by a timer at most `1000 / intervalMillis` times a second and only when something changed
/// (updates only mark the table dirty, so a fast stream costs one redraw per tick, not one per
/// update). The terminal's size is read with `TIOCGWINSZ` at start and on `SIGWINCH`. The
/// terminal is given back (main screen, cursor shown) by `stop()`, on SIGINT/SIGTERM (then the
/// process exits with 130/143) and at exit.
/// `@unchecked Sendable`: its table, meter and screen state are only touched under `lock`.
final class LiveTableTerminal: @unchecked Sendable {
    static let intervalMillis = 50

    private let lock = NSLock()
    private var table: LiveTable
    private var meter = RateMeter()
    private var lastDraw: UInt64 = 0
    private var size: (width: Int, height: Int)
    private var active = false
    /// Serializes writes to the terminal; `writing` turns false when the terminal is given back.
    private let writeLock = NSLock()
    private var writing = false
    private let queue = DispatchQueue(label: "lightstreamer.live-table")
    private var timer: DispatchSourceTimer? // runs until the process exits (one table per process)
    private var signals: [DispatchSourceSignal] = []

    /// The table on screen, for the exit hook.
    nonisolated(unsafe) private static var current: LiveTableTerminal?
    private static let currentLock = NSLock()

    /// Standard output is a terminal.
    static var stdoutIsTerminal: Bool { isatty(1) == 1 }

    init(fields: [String]?) {
        table = LiveTable(fields: fields)
        size = Self.windowSize() ?? (80, 24)
    }

    /// The terminal's columns and rows, when known.
    static func windowSize() -> (width: Int, height: Int)? {
        var ws = winsize()
        let r = withUnsafeMutablePointer(to: &ws) { p in
            #if canImport(Glibc)
            ioctl(1, UInt(TIOCGWINSZ), p)
            #else
            ioctl(1, TIOCGWINSZ, p)
            #endif
        }
        guard r == 0, ws.ws_col > 0, ws.ws_row > 0 else { return nil }
        return (Int(ws.ws_col), Int(ws.ws_row))
    }

    static func monotonicMillis() -> UInt64 { DispatchTime.now().uptimeNanoseconds / 1_000_000 }

    func start() {
        Self.currentLock.withLock { Self.current = self }
        atexit { LiveTableTerminal.restoreAtExit() }
        lock.withLock { active = true }
        writeLock.withLock {
            writing = true
            Self.writeAll(LiveTableRenderer.enter)
        }
        for (sig, code) in [(SIGINT, Int32(130)), (SIGTERM, Int32(143))] {
            signal(sig, SIG_IGN)
            let s = DispatchSource.makeSignalSource(signal: sig, queue: queue)
            s.setEventHandler { [weak self] in
                self?.stop()
                // `_exit`: no exit handlers or destructors while the client's threads still run.
                _exit(code)
            }
            s.resume()
            signals.append(s)
        }
        signal(SIGWINCH, SIG_IGN)
        let winch = DispatchSource.makeSignalSource(signal: SIGWINCH, queue: queue)
        winch.setEventHandler { [weak self] in
            guard let self, let s = Self.windowSize() else { return }
            lock.withLock {
                size = s
                lastDraw = 0
            }
            draw(force: true)
        }
        winch.resume()
        signals.append(winch)
        let t = DispatchSource.makeTimerSource(queue: queue)
        t.schedule(deadline: .now(), repeating: .milliseconds(Self.intervalMillis))
        t.setEventHandler { [weak self] in self?.draw(force: false) }
        t.resume()
        timer = t
    }

    /// One update: applied to the table, drawn at the next tick.
    func apply(_ u: LiveTable.Update) {
        let now = Self.monotonicMillis()
        lock.withLock { table.apply(u, now: now) }
    }

    func clear(item: String) { lock.withLock { table.clear(item: item) } }

    func setStatus(_ s: String) { lock.withLock { table.setStatus(s) } }

    /// Draws when the table changed, a highlight is fading or the rate is a second old.
    private func draw(force: Bool) {
        let now = Self.monotonicMillis()
        let bytes: [UInt8]? = lock.withLock {
            guard active else { return nil }
            let fading = table.lastChange > 0 && now &- table.lastChange <= LiveTableRenderer.highlightMillis + UInt64(Self.intervalMillis)
            guard force || table.dirty || fading || now &- lastDraw >= 1000 else { return nil }
            let rate = meter.sample(now: now, total: table.totalUpdates)
            table.markDrawn()
            lastDraw = now
            return LiveTableRenderer.frame(table, width: size.width, height: size.height, now: now, rate: rate)
        }
        guard let bytes else { return }
        writeLock.withLock { if writing { Self.writeAll(bytes) } }
    }

    /// Stops drawing and gives the terminal back (idempotent).
    func stop() {
        lock.withLock { active = false }
        writeLock.withLock {
            guard writing else { return }
            writing = false
            Self.writeAll(LiveTableRenderer.leave)
        }
    }

    private static func restoreAtExit() {
        currentLock.withLock { current }?.stop()
    }

    /// Writes all of `bytes` to standard output (retrying on EINTR and short writes; gives up
    /// on another error, e.g. the terminal went away).
    static func writeAll(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { p in
            guard var base = p.baseAddress else { return }
            var left = p.count
            while left > 0 {
                let n = write(1, base, left)
                if n < 0 {
                    if errno == EINTR { continue }
                    return
                }
                left -= n
                base += n
            }
        }
    }
}
