import CredemuEngine
import CredemuOperations
import Foundation
import Shipped
import Vault
import WebAuthn

/// The `credemu` command line. `main.swift` only calls `CLI.run`.
public enum CLI {
    /// Runs one command line and returns its exit status.
    public static func run(_ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
                           terminal: Terminal = .standard) -> ExitStatus {
        let context = Context(environment: environment, terminal: terminal)
        do {
            return try context.dispatch(arguments)
        } catch let error as UsageError {
            terminal.writeError("credemu: \(error.message)\nRun 'credemu --help' for usage.\n")
            return .usage
        } catch let error as VaultError {
            terminal.write(error.json.pretty())
            terminal.writeError("credemu: \(error.message)\n")
            return .vaultError
        } catch let error as OperationFailureOutput {
            return error.render(on: terminal)
        } catch let error as OperationError {
            return OperationFailureOutput(failure: error).render(on: terminal)
        } catch let error as WebAuthnError {
            terminal.write(error.json.pretty())
            return .webAuthnError
        } catch let error as InvalidConfiguration {
            terminal.write(error.json.pretty())
            terminal.writeError("credemu: \(error.message)\n")
            return .usage
        } catch {
            terminal.writeError("credemu: \(error)\n")
            return .vaultError
        }
    }
}

/// One invocation's environment, global options and open vault.
final class Context {
    let environment: [String: String]
    let terminal: Terminal
    var vaultPath = ".credemu/vault.db"
    var keyFile: String?
    var passphrase: String?
    var profileName = Vault.defaultProfile
    /// `--device NAME`: ceremonies run on the device, routed among its provider accounts.
    var deviceName: String?
    var providersDirectory: String?

    init(environment: [String: String], terminal: Terminal) {
        self.environment = environment
        self.terminal = terminal
    }

    /// Applies the global options, then runs the command the words name.
    func dispatch(_ words: [String]) throws -> ExitStatus {
        vaultPath = environment["CREDEMU_VAULT"] ?? vaultPath
        keyFile = environment["CREDEMU_KEY_FILE"]
        passphrase = environment["CREDEMU_PASSPHRASE"]
        profileName = environment["CREDEMU_PROFILE"] ?? profileName
        // Packs over the shipped ones: --providers, else $CREDEMU_PROVIDERS (empty counts as unset).
        providersDirectory = environment["CREDEMU_PROVIDERS"].flatMap { $0.isEmpty ? nil : $0 }
        // Global options come before the command.
        let (globals, rest) = try Arguments.leading(words[...], for: Commands.root)
        if globals.flag("help") { return help(Commands.root.help([])) }
        if globals.flag("version") {
            terminal.write(CredemuVersion.description + "\n")
            return .success
        }
        vaultPath = globals.value("vault") ?? vaultPath
        keyFile = globals.value("key-file") ?? keyFile
        profileName = globals.value("profile") ?? profileName
        deviceName = globals.value("device")
        providersDirectory = globals.value("providers") ?? providersDirectory
        if let file = globals.value("passphrase-file") {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw UsageError("Cannot read the passphrase file \(file).")
            }
            passphrase = text.trimmingCharacters(in: .newlines)
        }
        guard let name = rest.first else {
            terminal.writeError("credemu: no command given.\n\n" + Commands.root.help([]))
            return .usage
        }
        guard let command = Commands.root.subcommand(name) else { throw UsageError("Unknown command '\(name)'.") }
        return try run(command, path: [name], rest.dropFirst())
    }

    /// Runs `command` (named by `path`) with its words: a subcommand they name, its help when they hold `--help`,
    /// else its action over the words read against its declaration.
    private func run(_ command: Command, path: [String], _ words: ArraySlice<String>) throws -> ExitStatus {
        if let first = words.first, let sub = command.subcommand(first) {
            return try run(sub, path: path + [first], words.dropFirst())
        }
        if words.contains("--help") { return help(command.help(path)) }
        guard let action = command.action else {
            if let name = command.defaultSubcommand, let sub = command.subcommand(name), words.first?.hasPrefix("--") ?? true {
                return try run(sub, path: path + [name], words)
            }
            let names = spokenList(command.subcommands.map(\.name))
            let spoken = path.joined(separator: " ")
            guard let first = words.first else { throw UsageError("\(spoken) needs a subcommand: \(names).") }
            throw UsageError("Unknown \(spoken) subcommand '\(first)': \(names).")
        }
        return try action(self, try Arguments(words, for: command, path: path))
    }

    func help(_ text: String) -> ExitStatus {
        terminal.write(text)
        return .success
    }

    /// The vault, scoped to `--profile`; `exclusive` for a long-running owner (`serve`).
    func openVault(exclusive: Bool = false) throws(VaultError) -> Vault {
        let key: VaultKeySource = passphrase.map { .passphrase($0) } ?? .keyFile(path: keyFile ?? Vault.defaultKeyFile(forVault: vaultPath))
        return try Vault.open(path: vaultPath, key: key, exclusive: exclusive).scoped(to: profileName)
    }

    /// Reads FILE, or standard input when no file is named.
    func readInput(file: String?) throws(UsageError) -> String {
        guard let file else { return terminal.readInput() }
        guard let data = FileManager.default.contents(atPath: file) else { throw UsageError("Cannot read \(file).") }
        return String(decoding: data, as: UTF8.self)
    }

    func printJSON(_ value: JSONValue) { terminal.write(value.pretty()) }
}
