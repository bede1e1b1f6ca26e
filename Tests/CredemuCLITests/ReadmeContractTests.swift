import Foundation
import XCTest
@testable import CredemuCLI

/// The "CLI contract" block of docs/cli.md names only commands and options the declarations accept, and every command.
final class ReadmeContractTests: XCTestCase {
    /// The contract's lines, each continuation line joined to the line it continues.
    func contractLines() throws -> [String] {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs").appendingPathComponent("cli.md").path
        let text = try String(contentsOfFile: readme, encoding: .utf8)
        let section = try XCTUnwrap(text.components(separatedBy: "## The CLI contract").dropFirst().first)
        let block = try XCTUnwrap(section.components(separatedBy: "```").dropFirst().first)
        var lines: [String] = []
        for line in block.split(separator: "\n") {
            if line.hasPrefix(" "), !lines.isEmpty { lines[lines.count - 1] += " " + line } else { lines.append(String(line)) }
        }
        // `credemu --help | credemu help ...`: one line of several command lines.
        return lines.filter { $0.hasPrefix("credemu ") }.flatMap { line in
            line.components(separatedBy: "| credemu ").enumerated().map { $0.offset == 0 ? $0.element : "credemu " + $0.element }
        }
    }

    func options(under command: Command) -> Set<String> {
        Set(command.options.map(\.name)).union(command.subcommands.flatMap { options(under: $0) })
    }

    func testTheContractNamesOnlyWhatTheCommandsAccept() throws {
        let globals = Set(Commands.root.options.map(\.name))
        var named: Set<String> = []
        for line in try contractLines() {
            let words = line.split(separator: " ").map(String.init)
            let first = words.dropFirst().first.flatMap { $0.hasPrefix("-") || $0.hasPrefix("[") ? nil : $0 }
            let command = first.flatMap { Commands.root.subcommand($0) }
            if let first, first.lowercased() == first { XCTAssertNotNil(command, "the contract names a command '\(first)' credemu does not have") }
            if let first { named.insert(first) }
            let accepted = globals.union(command.map { options(under: $0) } ?? [])
            let pattern = try NSRegularExpression(pattern: "--([A-Za-z][A-Za-z-]*)")
            for match in pattern.matches(in: line, range: NSRange(line.startIndex..., in: line)) {
                let name = try XCTUnwrap(Range(match.range(at: 1), in: line).map { String(line[$0]) })
                XCTAssertTrue(accepted.contains(name), "the contract gives \(first ?? "credemu") --\(name), which it does not accept")
            }
        }
        for command in Commands.root.subcommands {
            XCTAssertTrue(named.contains(command.name), "the contract leaves out credemu \(command.name)")
        }
    }
}
