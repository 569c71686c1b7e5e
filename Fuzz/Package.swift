// swift-tools-version:6.1
// libFuzzer targets for the TLCP parsers, the ARI line reader, patch application, the server's HTTP front and the MPN trigger and format compilers. Not part of the main build: see Fuzz/README.md.
import PackageDescription

let package = Package(
    name: "tlcp-fuzz",
    dependencies: [.package(name: "lightstreamer-swift", path: "..")],
    targets: [
        // libFuzzer's driver, entered from every target's `main`.
        .target(name: "FuzzDriver"),
        .executableTarget(
            name: "FuzzLineParser",
            dependencies: ["FuzzDriver", .product(name: "TLCP", package: "lightstreamer-swift")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
        .executableTarget(
            name: "FuzzRequestParser",
            dependencies: ["FuzzDriver", .product(name: "TLCP", package: "lightstreamer-swift")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
        .executableTarget(
            name: "FuzzHTTPFront",
            dependencies: ["FuzzDriver", .product(name: "LightstreamerServer", package: "lightstreamer-swift")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
        .executableTarget(
            name: "FuzzARILine",
            dependencies: ["FuzzDriver", .product(name: "ARI", package: "lightstreamer-swift")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
        .executableTarget(
            name: "FuzzJSONPatch",
            dependencies: ["FuzzDriver", .product(name: "TLCP", package: "lightstreamer-swift")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
        // The MPN Module's trigger and format compilers, built from the module's own files
        // (symbolic links): they need only TLCP, not the module's database and HTTP stack.
        .target(
            name: "MPNFuzzCore",
            dependencies: [.product(name: "TLCP", package: "lightstreamer-swift")]
        ),
        .executableTarget(
            name: "FuzzTrigger",
            dependencies: ["FuzzDriver", "MPNFuzzCore"],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
        .executableTarget(
            name: "FuzzFormat",
            dependencies: ["FuzzDriver", "MPNFuzzCore", .product(name: "TLCP", package: "lightstreamer-swift")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
    ]
)
