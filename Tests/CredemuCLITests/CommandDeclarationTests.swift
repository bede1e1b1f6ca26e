import CredemuEngine
import Foundation
import XCTest
@testable import CredemuCLI

/// Each command is declared once: what its help documents is what its parser accepts, both ways, for every command
/// and subcommand the declarations hold.
final class CommandDeclarationTests: XCTestCase {
    /// Every command with its path (`[]` for `credemu` itself, `["vault", "show"]`), depth first.
    static let everyCommand: [(path: [String], command: Command)] = {
        var out: [([String], Command)] = []
        func walk(_ command: Command, _ path: [String]) {
            out.append((path, command))
            for sub in command.subcommands { walk(sub, path + [sub.name]) }
        }
        walk(Commands.root, [])
        return out
    }()

    static var leaves: [(path: [String], command: Command)] { everyCommand.filter { $0.command.action != nil } }

    /// The words after `--name` that the option accepts: nothing for a flag, else an allowed word or any text.
    func acceptedValue(_ option: Option) -> [String] {
        switch option.value {
        case .flag: return []
        case .json: return ["{}"]
        case .text: return ["x"]
        case .oneOf(let words, _): return [words[words.count - 1]]
        }
    }

    /// The fewest words the command accepts: its required positionals and options.
    func minimalWords(_ command: Command) -> [String] {
        command.positionals.filter { !$0.optional }.map { $0.allowed?.first ?? "x" }
            + command.options.filter(\.required).flatMap { ["--" + $0.name] + acceptedValue($0) }
    }

    /// Every `--name` the text mentions.
    func mentionedOptions(_ text: String) -> Set<String> {
        let pattern = try! NSRegularExpression(pattern: "--([A-Za-z][A-Za-z-]*)")
        let range = NSRange(text.startIndex..., in: text)
        return Set(pattern.matches(in: text, range: range).compactMap { Range($0.range(at: 1), in: text).map { String(text[$0]) } })
    }

    /// The options of `command` and of every command under it.
    func optionsUnder(_ command: Command) -> Set<String> {
        Set(command.options.map(\.name)).union(command.subcommands.flatMap { optionsUnder($0) })
    }

    func testEveryAcceptedOptionIsInItsCommandsHelpAndParses() throws {
        for (path, command) in Self.leaves {
            let help = command.help(path)
            let where_ = "credemu " + path.joined(separator: " ")
            XCTAssertNoThrow(try Arguments(minimalWords(command)[...], for: command, path: path), where_)
            for option in command.options {
                XCTAssertTrue(help.contains("\n  " + option.label), "\(where_) --help does not list \(option.label)")
                // A required option is in the minimal words already (and once is all a command takes).
                let words = minimalWords(command) + (option.required ? [] : ["--" + option.name] + acceptedValue(option))
                XCTAssertNoThrow(try Arguments(words[...], for: command, path: path), "\(where_) refuses its own \(option.label)")
            }
            for positional in command.positionals {
                XCTAssertTrue(help.contains(positional.label), "\(where_) --help does not show \(positional.label)")
            }
        }
    }

    func testEveryOptionAHelpMentionsIsAccepted() throws {
        let globals = Set(Commands.root.options.map(\.name))
        for (path, command) in Self.everyCommand {
            let help = command.help(path)
            let where_ = "credemu " + path.joined(separator: " ") + " --help"
            // A command's help may name its own options, the global ones, and (in a list of subcommands) theirs.
            let known = path.isEmpty ? optionsUnder(command) : optionsUnder(command).union(globals)
            for name in mentionedOptions(help) {
                XCTAssertTrue(known.contains(name), "\(where_) documents --\(name), which no command there accepts")
            }
            guard command.action != nil else { continue }
            for name in mentionedOptions(help).subtracting(globals) {
                let option = try XCTUnwrap(command.option(name), "\(where_) documents --\(name), which \(path.joined(separator: " ")) does not accept")
                let words = minimalWords(command) + (option.required ? [] : ["--" + name] + acceptedValue(option))
                XCTAssertNoThrow(try Arguments(words[...], for: command, path: path), "\(where_) documents --\(name) but refuses it")
            }
        }
    }

    func testAnOptionNoHelpShowsIsRefused() {
        for (path, command) in Self.leaves {
            let words = minimalWords(command) + ["--undocumented-option", "x"]
            XCTAssertThrowsError(try Arguments(words[...], for: command, path: path), "credemu \(path.joined(separator: " "))") { error in
                XCTAssertEqual((error as? UsageError)?.message, "Unknown option --undocumented-option.")
            }
        }
    }

    func testTheCLIPrintsEachCommandsDeclaredHelp() {
        for (path, command) in Self.everyCommand {
            let run = CLIHarness.run(path + ["--help"])
            XCTAssertEqual(run.status, .success, path.joined(separator: " "))
            XCTAssertEqual(run.output, command.help(path), "credemu \(path.joined(separator: " ")) --help")
            XCTAssertEqual(CLIHarness.run(["help"] + path).output, command.help(path), "credemu help \(path.joined(separator: " "))")
        }
    }

    func testAGroupsHelpListsEverySubcommandWithItsOptions() {
        for (path, command) in Self.everyCommand where !command.subcommands.isEmpty {
            let help = command.help(path)
            for sub in command.subcommands {
                XCTAssertTrue(help.contains("  " + (path + [sub.name]).joined(separator: " ")), "\(path) --help lists \(sub.name)")
                XCTAssertTrue(help.contains(sub.summary.split(separator: " ").prefix(4).joined(separator: " ")), "\(path) --help: \(sub.name)'s summary")
            }
        }
    }

    func testNamesAreUniqueWithinACommand() {
        for (path, command) in Self.everyCommand {
            XCTAssertEqual(Set(command.options.map(\.name)).count, command.options.count, "\(path): an option declared twice")
            XCTAssertEqual(Set(command.subcommands.map(\.name)).count, command.subcommands.count, "\(path): a subcommand declared twice")
            XCTAssertEqual(Set(command.positionals.map(\.name)).count, command.positionals.count, "\(path): a positional declared twice")
            XCTAssertFalse(command.positionals.dropLast().contains { $0.repeating || $0.optional }, "\(path): only the last positional may be optional or repeat")
            if let name = command.defaultSubcommand { XCTAssertNotNil(command.subcommand(name), "\(path): default \(name)") }
        }
    }

    func testEveryProfileAndDeviceSettingIsAnOptionOfItsCommands() throws {
        XCTAssertEqual(Option.profileSettings.map(\.name), Profile.settingNames, "a profile setting without its option's help")
        XCTAssertEqual(Option.deviceSettings.map(\.name), Device.settingNames, "a device setting without its option's help")
        for (group, names) in [("profile", Profile.settingNames), ("device", Device.settingNames)] {
            for sub in ["create", "set"] {
                let command = try XCTUnwrap(Commands.root.subcommand(group)?.subcommand(sub))
                XCTAssertEqual(command.options.map(\.name), names, "\(group) \(sub)")
            }
        }
    }

    // The drifts the three copies had (issue 22): each is now declared, so its help shows it.

    func testVaultExportsHelpNamesIncludeSecrets() {
        XCTAssertTrue(CLIHarness.run(["vault", "export", "--help"]).output.contains("--include-secrets"))
        XCTAssertTrue(CLIHarness.run(["vault", "--help"]).output.contains("export [--include-secrets]"))
    }

    func testGetAndAutofillDocumentTheAndroidPackage() {
        for command in ["get", "autofill", "create"] {
            XCTAssertTrue(CLIHarness.run([command, "--help"]).output.contains("--android-package PKG"), command)
        }
    }

    func testCreateMediationIsConditionalOrModalAndGetAlsoImmediate() {
        let cli = CLIHarness()
        for value in ["immediate", "optional", "silent", "required", ""] {
            let run = cli.run(["create", "--origin", "https://shop.example.com", "--mediation", value], input: "{}")
            XCTAssertEqual(run.status, .usage, value)
            XCTAssertEqual(run.errors, "credemu: --mediation takes conditional or modal, not '\(value)'.\nRun 'credemu --help' for usage.\n")
            XCTAssertEqual(run.output, "")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: cli.vault), "refused before the vault is opened")
        XCTAssertTrue(CLIHarness.run(["get", "--help"]).output.contains("--mediation conditional|modal|immediate"))
    }
}
