// swift-tools-version:6.1
// libFuzzer targets for the TLCP parsers and patch application. Not part of the main build: see Fuzz/README.md.
import PackageDescription

let package = Package(
    name: "tlcp-fuzz",
    dependencies: [.package(name: "lightstreamer-swift", path: "..")],
    targets: [
        .executableTarget(
            name: "FuzzLineParser",
            dependencies: [.product(name: "TLCP", package: "lightstreamer-swift")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
        .executableTarget(
            name: "FuzzRequestParser",
            dependencies: [.product(name: "TLCP", package: "lightstreamer-swift")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
        .executableTarget(
            name: "FuzzHTTPFront",
            dependencies: [.product(name: "LightstreamerServer", package: "lightstreamer-swift")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
        .executableTarget(
            name: "FuzzJSONPatch",
            dependencies: [.product(name: "TLCP", package: "lightstreamer-swift")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
    ]
)
