import CredemuTestSupport
import Foundation
@testable import CredemuCLI

/// One `credemu` run in-process: what it printed and its exit status.
struct CLIRun {
    var status: ExitStatus
    var output: String
    var errors: String
}

/// Runs `credemu` in-process on a vault of its own in a temporary directory, with no `CREDEMU_*` variables.
final class CLIHarness {
    let directory = TemporaryDirectory()
    var vault: String { directory.file("vault.db") }

    /// `credemu --vault VAULT WORDS...`, with `input` as standard input.
    func run(_ words: [String], input: String = "") -> CLIRun {
        CLIHarness.run(["--vault", vault] + words, input: input)
    }

    /// `credemu WORDS...` exactly as given.
    static func run(_ words: [String], input: String = "") -> CLIRun {
        let captured = Captured()
        let terminal = Terminal(write: { captured.append(\.output, $0) }, writeError: { captured.append(\.errors, $0) },
                                readInput: { input })
        let status = CLI.run(words, environment: [:], terminal: terminal)
        return captured.read { CLIRun(status: status, output: $0.output, errors: $0.errors) }
    }

    /// The streams a run wrote, guarded: a terminal may be written from any thread.
    private final class Captured: @unchecked Sendable {
        struct Streams {
            var output = ""
            var errors = ""
        }

        private let lock = NSLock()
        private var streams = Streams()

        func append(_ stream: WritableKeyPath<Streams, String>, _ text: String) {
            lock.lock()
            streams[keyPath: stream] += text
            lock.unlock()
        }

        func read<T>(_ body: (Streams) -> T) -> T {
            lock.lock()
            defer { lock.unlock() }
            return body(streams)
        }
    }
}
