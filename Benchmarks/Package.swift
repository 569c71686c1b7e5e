// swift-tools-version:6.1
// Benchmarks (ordo-one/benchmark). Run from this folder: `swift package benchmark`.
import PackageDescription

let package = Package(
    name: "lightstreamer-benchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "lightstreamer-swift", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "TLCPBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "TLCP", package: "lightstreamer-swift"),
            ],
            path: "Benchmarks/TLCPBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "ClientBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "LightstreamerClient", package: "lightstreamer-swift"),
            ],
            path: "Benchmarks/ClientBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "tlcp-ops",
            dependencies: [.product(name: "TLCP", package: "lightstreamer-swift"), .product(name: "ARI", package: "lightstreamer-swift")],
            path: "Sources/tlcp-ops"
        ),
        .executableTarget(
            name: "server-ops",
            dependencies: [.product(name: "LightstreamerServer", package: "lightstreamer-swift")],
            path: "Sources/server-ops"
        ),
        .executableTarget(
            name: "client-ops",
            dependencies: [.product(name: "LightstreamerClient", package: "lightstreamer-swift")],
            path: "Sources/client-ops"
        ),
    ]
)
