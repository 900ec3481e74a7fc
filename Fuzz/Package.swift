// swift-tools-version:5.9
// libFuzzer targets for soundmark's parsers of untrusted input. Not part of the root package:
// `make fuzz` / `make fuzz-smoke` build this with `-sanitize=fuzzer,address -parse-as-library`.
import PackageDescription

let targets = ["FuzzSRT", "FuzzWebVTT", "FuzzASS", "FuzzJSONAnnotations", "FuzzAnnotationDetect",
               "FuzzLegacyEncoding", "FuzzEvents", "FuzzSignature", "FuzzPostings", "FuzzShazamFile", "FuzzSignatureFile"]

let package = Package(
    name: "soundmark-fuzz",
    dependencies: [.package(name: "soundmark", path: "..")],
    targets: [.target(name: "CFuzzDriver", path: "Sources/CFuzzDriver")] + targets.map {
        .executableTarget(name: $0, dependencies: ["CFuzzDriver", .product(name: "Soundmark", package: "soundmark")],
                          path: "Sources/\($0)")
    }
)
