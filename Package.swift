// swift-tools-version:5.9
import PackageDescription

let package = Package(
    name: "soundmark",
    products: [
        .library(name: "Soundmark", targets: ["Soundmark"]),
        .executable(name: "soundmark", targets: ["soundmark"]),
    ],
    targets: [
        .systemLibrary(name: "CFFmpeg", pkgConfig: "libavformat",
                       providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev", "libswresample-dev"])]),
        .systemLibrary(name: "CFFTW", pkgConfig: "fftw3f", providers: [.apt(["libfftw3-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CVorbisFile", pkgConfig: "vorbisfile", providers: [.apt(["libvorbis-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CPostgres", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .target(name: "Soundmark", dependencies: ["CFFmpeg", "CFFTW", "CSQLite", "CVorbisFile", "CZlib", "CPostgres"]),
        .executableTarget(name: "soundmark", dependencies: ["Soundmark"]),
        .executableTarget(name: "library-year", dependencies: ["Soundmark"]),
        // Fixtures/ holds audio the tests read by path (with its licence notes), not resources.
        .testTarget(name: "SoundmarkTests", dependencies: ["Soundmark"], exclude: ["Fixtures"]),
        .testTarget(name: "SoundmarkCLITests", dependencies: ["Soundmark"]),
    ]
)
