// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "credemu",
    products: [
        .executable(name: "credemu", targets: ["credemu"]),
        .library(name: "CredemuEngine", targets: ["CredemuEngine"]),
        .library(name: "CredemuTestSupport", targets: ["CredemuTestSupport"]),
    ],
    targets: [
        // C libraries from Debian; `make deps-debian` installs them.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CPSL", pkgConfig: "libpsl", providers: [.apt(["libpsl-dev", "publicsuffix"])]),
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        // The public suffix list compiled in (C23 #embed of Debian's publicsuffix DAFSA), loaded into a libpsl context.
        .target(name: "CPublicSuffix", dependencies: ["CPSL"]),
        // The vault's "credemu" SQLite VFS, in C: the default VFS with a WAL's writes gathered into one call per commit.
        .target(name: "CSQLiteVFS", dependencies: ["CSQLite"]),
        // The packs, the shim and the OpenAPI document compiled in (C23 #embed), so the binary runs from anywhere.
        .target(name: "CShipped"),
        .target(name: "Shipped", dependencies: ["CShipped"]),
        // P-256 keys in C over OpenSSL's EC_KEY: generation, import and ES256 signatures without EVP dispatch.
        .target(name: "CP256", dependencies: ["COpenSSL"], linkerSettings: [.linkedLibrary("crypto")]),
        // X.509 v3 certificates in C over OpenSSL's X509 interface: the test attestation CA's and its batches'.
        .target(name: "CX509", dependencies: ["COpenSSL"], linkerSettings: [.linkedLibrary("crypto")]),

        // WebAuthn data model: CBOR, COSE, authenticator data, attestation, client data, JSON forms, RP ID rules.
        .target(name: "WebAuthn", dependencies: ["CPSL", "CPublicSuffix"]),
        // Keys and signatures: ES256 and RS256 over OpenSSL, EdDSA over libsodium; the attestation CA's certificates.
        .target(name: "Signing", dependencies: ["COpenSSL", "CP256", "CX509", "CSodium", "WebAuthn"]),
        // The encrypted SQLite vault: passwords, passkeys, fixtures.
        .target(name: "Vault", dependencies: ["CSQLite", "CSQLiteVFS", "CSodium", "Signing", "WebAuthn"]),
        // The provider engine: ceremonies with client and authenticator rules.
        .target(name: "CredemuEngine", dependencies: ["Shipped", "WebAuthn", "Signing", "Vault"]),
        // What the HTML reports share: the scenario matrix's and the probe's style and escaping.
        .target(name: "CredemuReports"),
        // Scenarios: the format, one column's runner and the divergence matrix across packs, an application of the engine.
        .target(name: "CredemuScenarios", dependencies: ["CredemuEngine", "CredemuReports", "Signing", "Vault", "WebAuthn"]),
        // What credemu does on request, once: the CLI and the server are thin adapters over it.
        .target(name: "CredemuOperations", dependencies: ["CredemuEngine", "CredemuScenarios", "Vault", "WebAuthn"]),
        // `credemu probe`: an RP server driven with what every pack sends, over a small HTTP/1.1 client.
        .target(name: "CredemuProbe", dependencies: ["CredemuOperations", "CredemuEngine", "CredemuReports", "Vault", "WebAuthn"]),
        // The HTTP JSON API, the browser shim and the OpenAPI document, over libmicrohttpd.
        // Its Resources/ are compiled in through Shipped, not bundled: a resource bundle would have to sit beside the binary.
        .target(name: "CredemuServer", dependencies: ["CMicroHTTPD", "CredemuOperations", "CredemuEngine", "Shipped", "Signing", "Vault", "WebAuthn"],
                exclude: ["Resources"]),
        // The command-line interface, as a library so tests can drive it in-process.
        .target(name: "CredemuCLI", dependencies: ["CredemuOperations", "CredemuProbe", "CredemuScenarios", "CredemuEngine", "CredemuServer", "Shipped", "Vault", "WebAuthn", "Signing"]),
        .executableTarget(name: "credemu", dependencies: ["CredemuCLI"]),
        .executableTarget(name: "credemu-bench", dependencies: ["CredemuEngine", "Signing", "Vault", "WebAuthn"]),
        // Helpers shared by the Swift test suites: temporary vaults, an RP-side verifier.
        .target(name: "CredemuTestSupport", dependencies: ["CredemuEngine", "Vault", "Signing", "WebAuthn"]),

        .testTarget(name: "ShippedTests", dependencies: ["Shipped"]),
        .testTarget(name: "WebAuthnTests", dependencies: ["WebAuthn", "CredemuTestSupport"]),
        .testTarget(name: "SigningTests", dependencies: ["Signing", "CredemuTestSupport"]),
        .testTarget(name: "VaultTests", dependencies: ["Vault", "CredemuTestSupport"]),
        .testTarget(name: "CredemuEngineTests", dependencies: ["CredemuEngine", "CredemuTestSupport"]),
        .testTarget(name: "CredemuScenariosTests", dependencies: ["CredemuScenarios", "CredemuOperations", "CredemuTestSupport"]),
        .testTarget(name: "CredemuServerTests", dependencies: ["CredemuServer", "CredemuTestSupport"]),
        .testTarget(name: "CredemuProbeTests", dependencies: ["CredemuProbe", "CredemuTestSupport"]),
        .testTarget(name: "CredemuOperationsTests", dependencies: ["CredemuOperations", "CredemuTestSupport"]),
        .testTarget(name: "CredemuCLITests", dependencies: ["CredemuCLI", "CredemuServer", "CredemuTestSupport"]),
    ]
)
