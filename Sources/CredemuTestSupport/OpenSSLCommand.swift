import Foundation

/// The `openssl` command-line tool, for checking certificates and signatures outside credemu's own code.
public struct OpenSSLCommand {
    /// The tool's path, or nil where it is not installed (tests that need it skip).
    public static let path: String? = ["/usr/bin/openssl", "/usr/local/bin/openssl", "/bin/openssl"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    public let directory = TemporaryDirectory()

    public init() {}

    /// Writes `bytes` to a file in the tool's directory and returns its path.
    @discardableResult
    public func write(_ bytes: [UInt8], as name: String) throws -> String {
        let file = directory.file(name)
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        return file
    }

    /// Runs `openssl ARGUMENTS` in the directory: its exit status and its standard output and error together.
    public func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        guard let path = OpenSSLCommand.path else { throw CocoaError(.fileNoSuchFile) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory.path)
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// `openssl x509 -inform DER -noout -text` of a certificate, and its subject in RFC 2253 form (UTF-8 unescaped).
    public func describe(certificate: [UInt8]) throws -> (text: String, subject: String) {
        let file = try write(certificate, as: "described.der")
        let text = try run(["x509", "-inform", "DER", "-in", file, "-noout", "-text"])
        let subject = try run(["x509", "-inform", "DER", "-in", file, "-noout", "-subject", "-nameopt", "RFC2253,-esc_msb"])
        return (text.output, subject.output.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Whether `certificate` verifies under `root` at `time` (seconds since the epoch), by `openssl verify`.
    public func verifies(_ certificate: [UInt8], root: [UInt8], at time: Int64) throws -> (ok: Bool, output: String) {
        let rootPEM = try pem(root, as: "root")
        let certificatePEM = try pem(certificate, as: "leaf")
        let result = try run(["verify", "-x509_strict", "-attime", String(time), "-CAfile", rootPEM, certificatePEM])
        return (result.status == 0, result.output)
    }

    /// Whether `signature` is an ES256 signature over `message` by the public key in `certificate`: the key
    /// taken out by `openssl x509 -pubkey`, the check by `openssl dgst -sha256 -verify`.
    public func verifiesSignature(_ signature: [UInt8], over message: [UInt8], byKeyOf certificate: [UInt8]) throws -> Bool {
        let certificateFile = try write(certificate, as: "signer.der")
        let key = try run(["x509", "-inform", "DER", "-in", certificateFile, "-noout", "-pubkey"])
        guard key.status == 0 else { return false }
        try write(Array(key.output.utf8), as: "signer.pub.pem")
        let signatureFile = try write(signature, as: "signature.der")
        let messageFile = try write(message, as: "message.bin")
        return try run(["dgst", "-sha256", "-verify", "signer.pub.pem", "-signature", signatureFile, messageFile]).status == 0
    }

    private func pem(_ der: [UInt8], as name: String) throws -> String {
        let file = try write(der, as: name + ".der")
        let out = directory.file(name + ".pem")
        let result = try run(["x509", "-inform", "DER", "-in", file, "-out", out])
        guard result.status == 0 else { throw CocoaError(.fileReadCorruptFile) }
        return out
    }
}
