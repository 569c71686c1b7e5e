// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "lightstreamer-swift",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "TLCP", targets: ["TLCP"]),
        .library(name: "LightstreamerClient", targets: ["LightstreamerClient"]),
        .library(name: "LightstreamerServer", targets: ["LightstreamerServer"]),
        .executable(name: "lightstreamer-server", targets: ["lightstreamer-server"]),
        .executable(name: "lightstreamer", targets: ["lightstreamer"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
    ],
    targets: [
        // Wire protocol only: no I/O, no dependencies.
        .target(name: "TLCP"),

        .target(
            name: "LightstreamerClient",
            dependencies: [
                "TLCP",
                .product(name: "NIOCore", package: "swift-nio"),
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
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "lightstreamer-server",
            dependencies: [
                "LightstreamerServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "lightstreamer",
            dependencies: [
                "LightstreamerClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        .testTarget(
            name: "TLCPTests",
            dependencies: ["TLCP", .product(name: "PropertyBased", package: "swift-property-based")]
        ),
        .testTarget(name: "LightstreamerClientTests", dependencies: ["LightstreamerClient", "TLCP"]),
        .testTarget(name: "ClientEndToEndTests", dependencies: ["LightstreamerClient", "LightstreamerServer"]),
        .testTarget(name: "LightstreamerServerTests", dependencies: ["LightstreamerServer", "TLCP"]),
        .testTarget(name: "InteropTests", dependencies: ["LightstreamerServer"]),
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
    ]
)
