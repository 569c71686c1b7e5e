// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "lightstreamer-swift",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "TLCP", targets: ["TLCP"]),
        .library(name: "ARI", targets: ["ARI"]),
        .library(name: "LightstreamerClient", targets: ["LightstreamerClient"]),
        .library(name: "LightstreamerServer", targets: ["LightstreamerServer"]),
        .executable(name: "lightstreamer-server", targets: ["lightstreamer-server"]),
        .executable(name: "lightstreamer", targets: ["lightstreamer"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-atomics.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        // MPN Module
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        // API documentation (DocC): `swift package generate-documentation`.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // Wire protocol only: no I/O, no dependencies.
        .target(name: "TLCP"),
        // Adapter Remote Interface codec (remote adapters): no I/O; TLCP for modes and codes.
        .target(name: "ARI", dependencies: ["TLCP"]),

        .target(
            name: "LightstreamerClient",
            dependencies: [
                "TLCP",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "LightstreamerServer",
            dependencies: [
                "TLCP",
                .product(name: "Atomics", package: "swift-atomics"),
                "ARI",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            // The server's own pages (`/`, `/dashboard`): plain files, served as they are.
            resources: [.copy("Web")]
        ),
        .executableTarget(
            name: "lightstreamer-server",
            dependencies: [
                "LightstreamerServer",
                "MPNModule",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        .executableTarget(
            name: "lightstreamer",
            dependencies: [
                "LightstreamerClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        // Server MPN Module: store, triggers, formats, providers, engine.
        .target(
            name: "MPNModule",
            dependencies: [
                "TLCP",
                "LightstreamerServer",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        // MPN test helper: the kill -9 child of the SQLite store test, and the MPN micro-benchmarks.
        .executableTarget(name: "mpn-helper", dependencies: ["MPNModule", "MPNTestSupport"], path: "Tests/MPNHelper"),
        // Local HTTP/2 TLS provider server, test certificates and a hand-driven data adapter (tests and benchmarks).
        .target(
            name: "MPNTestSupport",
            dependencies: [
                "LightstreamerServer",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            path: "Tests/MPNTestSupport"
        ),
        .testTarget(
            name: "TLCPTests",
            dependencies: ["TLCP", .product(name: "PropertyBased", package: "swift-property-based")]
        ),
        .testTarget(name: "ARITests", dependencies: ["ARI", "TLCP"]),
        .testTarget(name: "LightstreamerClientTests", dependencies: ["LightstreamerClient", "TLCP"]),
        // Runs the built `lightstreamer` CLI: argument errors, capabilities, session commands without a server;
        // unit tests of its JSON writer and printers (with the library's own ItemUpdate).
        .testTarget(name: "LightstreamerCLITests", dependencies: ["lightstreamer", "LightstreamerClient"]),
        .testTarget(
            name: "ClientEndToEndTests",
            dependencies: [
                "LightstreamerClient", "LightstreamerServer", "MPNModule",
                // The cluster test runs the built server as nodes behind nginx.
                "lightstreamer-server",
                // A test CA and server certificate for the TLS tests.
                "MPNTestSupport",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                // The control-link tests' recording proxy.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                // The scripted server's WebSocket transport.
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ]
        ),
        // The adversarial suite (Adversarial/) runs the built lightstreamer-server as a child process.
        .testTarget(
            name: "LightstreamerServerTests",
            dependencies: [
                "LightstreamerServer", "TLCP", "MPNTestSupport", "lightstreamer-server",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),
        // MPNTestSupport: the throw-away CA of the remote adapters' TLS case.
        .testTarget(name: "InteropTests", dependencies: ["LightstreamerServer", "LightstreamerClient", "MPNModule", "MPNTestSupport"]),
        // The load test's own logic (the LOAD adapter's phases, its options' checks).
        .testTarget(
            name: "LoadTestToolTests",
            dependencies: [
                "lightstreamer-loadtest", "LightstreamerServer",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]),
        // Loopback load test of the server (BENCHMARKS.md, section "Server").
        .executableTarget(
            name: "lightstreamer-loadtest",
            dependencies: [
                "LightstreamerServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // Soak driver: many client sessions through a connection-cutting proxy (scripts/soak.sh).
        .executableTarget(
            name: "lightstreamer-soak",
            dependencies: [
                "LightstreamerClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "MPNModuleTests",
            dependencies: [
                "MPNModule", "MPNTestSupport", "TLCP", "LightstreamerServer",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
    ]
)
