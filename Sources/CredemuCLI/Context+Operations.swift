import CredemuEngine
import CredemuOperations
import Foundation
import Vault
import WebAuthn

/// An operation's refusal as the CLI prints it (see the CLI contract, docs/cli.md).
struct OperationFailureOutput: Error {
    var failure: OperationError

    /// Prints the failure and returns the exit status: ceremonies 1 with their body; input and configuration
    /// mistakes 2 (configuration also prints its body); the vault's refusals 3 with a VaultError body.
    func render(on terminal: Terminal) -> ExitStatus {
        switch failure.code {
        case .ceremony, .wrongOrigin:
            terminal.write(failure.json.pretty())
            return .webAuthnError
        case .invalidInput where failure.vaultCode == nil:
            terminal.writeError("credemu: \(failure.message)\nRun 'credemu --help' for usage.\n")
            return .usage
        case .configuration:
            terminal.write(failure.json.pretty())
            terminal.writeError("credemu: \(failure.message)\n")
            return .usage
        case .unavailable:
            terminal.write(failure.json.pretty())
            terminal.writeError("credemu: \(failure.message)\n")
            return .vaultError
        case .invalidInput, .notFound, .conflict, .storage:
            let code: VaultError.Code = failure.vaultCode ?? (failure.code == .notFound ? .notFound : failure.code == .conflict ? .duplicate : .storage)
            terminal.write(VaultError(code, failure.message).json.pretty())
            terminal.writeError("credemu: \(failure.message)\n")
            return .vaultError
        }
    }
}

extension VaultError {
    /// `{"error": {"name": "VaultError", "code", "message"}}`.
    var json: JSONValue { ErrorBody.json([("name", "VaultError"), ("code", .string(code.rawValue)), ("message", .string(message))]) }
}

extension Context {
    /// The policy packs: `--providers`, `$CREDEMU_PROVIDERS`, or the repository's `providers/`.
    func registry() throws -> PolicyRegistry {
        try PolicyRegistry(directory: providersDirectory)
    }

    /// The operations layer over the vault; `exclusive` for a long-running owner (`serve`). Close its vault.
    func operations(exclusive: Bool = false) throws -> Operations {
        let vault = try openVault(exclusive: exclusive)
        do {
            return try Operations(vault: vault, registry: try registry())
        } catch {
            vault.close()
            throw error
        }
    }

    /// Runs one operation over the vault and closes it; a refusal becomes the CLI's error output.
    func perform<T>(_ body: (Operations) throws(OperationError) -> T) throws -> T {
        let ops = try operations()
        defer { ops.vault.close() }
        do {
            return try body(ops)
        } catch {
            throw OperationFailureOutput(failure: error)
        }
    }
}
