import Foundation
import NIOPosix
import Testing

@testable import LightstreamerServer

@Suite("ProcessAllocator: mimalloc when installed, the C library's malloc otherwise")
struct ProcessAllocatorTests {
    let installed = "/usr/lib/x86_64-linux-gnu/libmimalloc.so.2"

    @Test func aProcessWithNothingSetExecutesItselfAgainOnAnInstalledMimalloc() {
        #expect(ProcessAllocator.decide(environment: [:], loaded: nil, installed: installed) == .reexecute(preload: installed))
        for choice in ["auto", "mimalloc", ""] {
            let decision = ProcessAllocator.decide(environment: ["LIGHTSTREAMER_MALLOC": choice], loaded: nil, installed: installed)
            #expect(decision == .reexecute(preload: installed), "\(choice)")
        }
    }

    @Test func withoutMimallocTheProcessGoesOnAndSaysWhichPackageToInstall() {
        guard case .keep(.system(let reason), let unset) = ProcessAllocator.decide(environment: [:], loaded: nil, installed: nil) else {
            Issue.record("expected to keep the system malloc")
            return
        }
        #expect(reason.contains("libmimalloc2.0"))
        #expect(unset.isEmpty)
    }

    @Test func systemOrAnUnknownChoiceKeepsTheCLibrarysMalloc() {
        let system = ProcessAllocator.decide(environment: ["LIGHTSTREAMER_MALLOC": "system"], loaded: nil, installed: installed)
        #expect(system == .keep(.system(reason: "LIGHTSTREAMER_MALLOC=system"), unset: []))
        let long = String(repeating: "x", count: 10_000)
        guard
            case .keep(.system(let reason), _) = ProcessAllocator.decide(
                environment: ["LIGHTSTREAMER_MALLOC": long], loaded: nil, installed: installed)
        else {
            Issue.record("an unknown choice must not execute anything")
            return
        }
        // The environment's value is quoted back cut short, and printable.
        #expect(reason.count < 120)
        guard
            case .keep(.system(let forged), _) = ProcessAllocator.decide(
                environment: ["LIGHTSTREAMER_MALLOC": "x\ninfo forged line"], loaded: nil, installed: installed)
        else {
            Issue.record("an unknown choice must not execute anything")
            return
        }
        #expect(!forged.contains("\n"))
        #expect(forged.hasPrefix("LIGHTSTREAMER_MALLOC=x?info forged line "))
    }

    @Test func anLDPreloadOfSomeoneElsesIsLeftAsItIs() {
        let decision = ProcessAllocator.decide(
            environment: ["LD_PRELOAD": "/usr/lib/libheaptrack_preload.so"], loaded: nil, installed: installed)
        #expect(decision == .keep(.system(reason: "LD_PRELOAD is set; left as it is"), unset: []))
    }

    @Test func theImageItStartedRunsOnMimallocAndTakesItsPreloadOutOfTheEnvironment() {
        let environment = ["LD_PRELOAD": installed, ProcessAllocator.markerVariable: installed]
        let decision = ProcessAllocator.decide(environment: environment, loaded: installed, installed: installed)
        #expect(decision == .keep(.mimalloc(path: installed), unset: [ProcessAllocator.markerVariable, "LD_PRELOAD"]))
    }

    @Test func aPreloadThatDidNotLoadIsNotTriedAgain() {
        let environment = ["LD_PRELOAD": installed, ProcessAllocator.markerVariable: installed]
        let decision = ProcessAllocator.decide(environment: environment, loaded: nil, installed: installed)
        #expect(
            decision
                == .keep(
                    .system(reason: "mimalloc was preloaded but is not loaded"), unset: [ProcessAllocator.markerVariable, "LD_PRELOAD"]))
    }

    @Test func anLDPreloadChangedSinceIsKeptForTheChildren() {
        // The marker names what `adopt()` preloaded; an LD_PRELOAD that differs is someone else's.
        let environment = ["LD_PRELOAD": "/opt/other.so", ProcessAllocator.markerVariable: installed]
        let decision = ProcessAllocator.decide(environment: environment, loaded: installed, installed: installed)
        #expect(decision == .keep(.mimalloc(path: installed), unset: [ProcessAllocator.markerVariable]))
    }

    @Test func mimallocIsFoundInTheProcessMapsByItsFileName() {
        let maps = """
            55d0c0a00000-55d0c0a01000 r--p 00000000 08:01 1234   /srv/bin/lightstreamer-server
            7f1a2b000000-7f1a2b020000 r-xp 00000000 08:01 5678   /usr/lib/x86_64-linux-gnu/libmimalloc.so.2.0
            7f1a2c000000-7f1a2c021000 rw-p 00000000 00:00 0
            7ffd0e000000-7ffd0e021000 rw-p 00000000 00:00 0      [stack]
            """
        #expect(ProcessAllocator.mimallocPath(inMaps: maps[...]) == "/usr/lib/x86_64-linux-gnu/libmimalloc.so.2.0")
        let without = """
            55d0c0a00000-55d0c0a01000 r--p 00000000 08:01 1234   /srv/libmimalloc-tools/bin/server
            7f1a2b000000-7f1a2b020000 r-xp 00000000 08:01 5678   /usr/lib/x86_64-linux-gnu/libc.so.6
            """
        #expect(ProcessAllocator.mimallocPath(inMaps: without[...]) == nil)
    }
}

/// The built `lightstreamer-server`, started as a child process: what `adopt()` does for real.
@Suite("ProcessAllocator in a server process", .serialized)
struct ProcessAllocatorProcessTests {
    /// The libmimalloc mapped into process `pid`, or nil.
    private func mappedMimalloc(_ pid: Int32) -> String? {
        // Read to its end: a /proc file's size reads as 0.
        guard let handle = FileHandle(forReadingAtPath: "/proc/\(pid)/maps") else { return nil }
        defer { try? handle.close() }
        let maps = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        return ProcessAllocator.mimallocPath(inMaps: maps[...])
    }

    @Test func theServerRunsOnMimallocWhenInstalledAndOnTheCLibrarysOtherwise() async throws {
        // Looked for here rather than through `candidatePaths`, which the test would then take on trust.
        let directories = ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/local/lib", "/usr/lib"]
        let installed = directories.first { FileManager.default.isReadableFile(atPath: $0 + "/libmimalloc.so.2") }
        let server = try await SpawnedServer.start(arguments: ["--log-level", "info"], environment: ["LD_PRELOAD": ""])
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let mapped = mappedMimalloc(server.process.processIdentifier)
        let log = server.log
        if installed != nil {
            // Same process id: the server executed itself again, on mimalloc.
            #expect(mapped != nil, "mimalloc is installed but not mapped: \(log.suffix(1_000))")
            #expect(log.contains("malloc=mimalloc ("), "\(log.suffix(1_000))")
        } else {
            #expect(mapped == nil)
            #expect(log.contains("libmimalloc.so.2 not found"), "\(log.suffix(1_000))")
        }
        try await server.assertHealthy(after: "starting", group: group)
        await server.stop()
        try await group.shutdownGracefully()
    }

    @Test func systemKeepsTheCLibrarysMalloc() async throws {
        let server = try await SpawnedServer.start(
            arguments: ["--log-level", "info"], environment: ["LD_PRELOAD": "", "LIGHTSTREAMER_MALLOC": "system"])
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        #expect(mappedMimalloc(server.process.processIdentifier) == nil)
        #expect(server.log.contains("LIGHTSTREAMER_MALLOC=system"), "\(server.log.suffix(1_000))")
        try await server.assertHealthy(after: "starting", group: group)
        await server.stop()
        try await group.shutdownGracefully()
    }
}
