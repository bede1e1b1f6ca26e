import CredemuEngine
import CredemuOperations
import Foundation
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

    func dispatch(_ words: [String]) throws -> ExitStatus {
        var rest = words
        vaultPath = environment["CREDEMU_VAULT"] ?? vaultPath
        keyFile = environment["CREDEMU_KEY_FILE"]
        passphrase = environment["CREDEMU_PASSPHRASE"]
        profileName = environment["CREDEMU_PROFILE"] ?? profileName
        // Packs over the shipped ones: --providers, else $CREDEMU_PROVIDERS (empty counts as unset).
        providersDirectory = environment["CREDEMU_PROVIDERS"].flatMap { $0.isEmpty ? nil : $0 }
        // Global options come before the command.
        while let first = rest.first, first.hasPrefix("--") {
            rest.removeFirst()
            let (name, inline) = split(first)
            func value() throws(UsageError) -> String {
                if let inline { return inline }
                guard !rest.isEmpty else { throw UsageError("--\(name) needs a value.") }
                return rest.removeFirst()
            }
            switch name {
            case "help": terminal.write(Help.main); return .success
            case "vault": vaultPath = try value()
            case "key-file": keyFile = try value()
            case "profile": profileName = try value()
            case "device": deviceName = try value()
            case "providers": providersDirectory = try value()
            case "passphrase-file":
                let file = try value()
                guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                    throw UsageError("Cannot read the passphrase file \(file).")
                }
                passphrase = text.trimmingCharacters(in: .newlines)
            default: throw UsageError("Unknown global option --\(name).")
            }
        }
        guard let command = rest.first else {
            terminal.writeError("credemu: no command given.\n\n" + Help.main)
            return .usage
        }
        let args = Array(rest.dropFirst())
        let wantsHelp = args.contains("--help")
        switch command {
        case "create": return wantsHelp ? help(Help.create) : try create(args)
        case "get": return wantsHelp ? help(Help.get) : try get(args)
        case "vault": return wantsHelp ? help(Help.vault) : try vaultCommand(args)
        case "password": return wantsHelp ? help(Help.password) : try passwordCommand(args)
        case "demo": return wantsHelp ? help(Help.demo) : try demo(args)
        case "profile": return wantsHelp ? help(Help.profile) : try profileCommand(args)
        case "device": return wantsHelp ? help(Help.device) : try deviceCommand(args)
        case "autofill": return wantsHelp ? help(Help.autofill) : try autofill(args)
        case "offer": return wantsHelp ? help(Help.offer) : try offerCommand(args)
        case "signal": return wantsHelp ? help(Help.signal) : try signalCommand(args)
        case "capabilities": return wantsHelp ? help(Help.capabilities) : try capabilitiesCommand(args)
        case "clock": return wantsHelp ? help(Help.clock) : try clockCommand(args)
        case "providers": return wantsHelp ? help(Help.providers) : try providersCommand(args)
        case "events": return wantsHelp ? help(Help.events) : try eventsCommand(args)
        case "user": return wantsHelp ? help(Help.user) : try userCommand(args)
        case "serve": return wantsHelp ? help(Help.serve) : try serve(args)
        case "scenario": return wantsHelp ? help(Help.scenario) : try scenarioCommand(args)
        case "findings": return wantsHelp ? help(Help.findings) : try findingsCommand(args)
        case "probe": return wantsHelp ? help(Help.probe) : try probeCommand(args)
        case "help":
            let topic = args.first.flatMap { Help.topics[$0] }
            return help(topic ?? Help.main)
        default: throw UsageError("Unknown command '\(command)'.")
        }
    }

    private func split(_ word: String) -> (String, String?) {
        let body = String(word.dropFirst(2))
        guard let eq = body.firstIndex(of: "=") else { return (body, nil) }
        return (String(body[..<eq]), String(body[body.index(after: eq)...]))
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
