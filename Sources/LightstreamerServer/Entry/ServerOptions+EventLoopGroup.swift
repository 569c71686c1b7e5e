import NIOCore
import NIOPosix

/// Which event loop group a server runs on, and whether it is the server's to shut down.
extension ServerOptions {
    /// The group of these options: `eventLoopGroup` when set (not owned), else a new group of
    /// `threads` threads when `threads` is above 0 (owned: the server shuts it down when it
    /// stops), else NIO's shared `MultiThreadedEventLoopGroup.singleton` (not owned).
    func makeEventLoopGroup() -> (group: any EventLoopGroup, owned: Bool) {
        if let eventLoopGroup { return (eventLoopGroup, false) }
        if threads > 0 { return (MultiThreadedEventLoopGroup(numberOfThreads: threads), true) }
        return (MultiThreadedEventLoopGroup.singleton, false)
    }

    /// The group that clients of the server's own (such as the MPN Module's PostgreSQL store)
    /// should use: `eventLoopGroup` when set, else `MultiThreadedEventLoopGroup.singleton`.
    public var sharedEventLoopGroup: any EventLoopGroup {
        eventLoopGroup ?? MultiThreadedEventLoopGroup.singleton
    }
}
