import Foundation

/// Where a command reads and writes: the real process streams, or buffers in tests.
public struct Terminal: Sendable {
    public var write: @Sendable (String) -> Void
    public var writeError: @Sendable (String) -> Void
    public var readInput: @Sendable () -> String

    public init(write: @escaping @Sendable (String) -> Void, writeError: @escaping @Sendable (String) -> Void,
                readInput: @escaping @Sendable () -> String) {
        self.write = write
        self.writeError = writeError
        self.readInput = readInput
    }

    /// The process's standard streams.
    public static let standard = Terminal(
        write: { FileHandle.standardOutput.write(Data($0.utf8)) },
        writeError: { FileHandle.standardError.write(Data($0.utf8)) },
        // A closed or unreadable standard input (as in CI) reads as empty, which then fails as malformed input.
        readInput: { String(decoding: (try? FileHandle.standardInput.readToEnd()) ?? Data(), as: UTF8.self) })
}

/// The exit statuses of the CLI contract (docs/cli.md, "The CLI contract").
public enum ExitStatus: Int32, Sendable {
    case success = 0
    /// The ceremony ended in a WebAuthn error; its JSON is on standard output.
    case webAuthnError = 1
    /// The command line was wrong.
    case usage = 2
    /// The vault could not be opened, read or changed; its JSON is on standard output.
    case vaultError = 3
}
