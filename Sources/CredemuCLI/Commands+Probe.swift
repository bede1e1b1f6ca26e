import CredemuEngine
import CredemuOperations
import CredemuProbe
import Foundation
import Vault

extension Commands {
    static let probe: Command = Command(
        "probe", summary: "Check an RP server: send what every pack would, report which responses it rejects and why.",
        discussion: """
        Drives the RP server at URL (plain http://) with what every pack would send: a modal registration, an automatic
        upgrade (UP=0, UV=0), a UV=0 registration, a not-yet-synced passkey (BE=1, BS=0), packed attestation where the
        pack does it, two sign-ins with signCount 0, a security key and a phone beside it, and a re-registration of one
        account then a sign-in with its first passkey's ID (GPM shadows it). Each response is made by the real engine for the options the
        server issued. The server speaks the FIDO2 Conformance Test API (POST URL/attestation/options,
        /attestation/result, /assertion/options, /assertion/result) unless --adapter names a JSON file with its own paths
        (docs/probe.md). With the adapter's signIn and signOut steps it also checks, once, that a registration answered
        after a sign-out, a switch to another account or a newer sign-in is refused and stored for no one (seed 002
        N2.5-AC03, seed 000 N2.6-AC03 and N2.6-AC06); without a session the report says these checks need an adapter.
        With --moves it also moves a passkey registered with the first provider into the other columns' packs (CXF) and
        signs in with it (docs/probe.md, docs/cxf.md).

        Exit status: 0 the server accepted every response a correct server must accept; 1 a finding about the server: it
        rejected at least one (each tied to its seed criterion or spec rule, with the fix), issued options no browser
        accepts, took a stale registration, or refused a moved passkey; 2 the run could not finish: usage (an origin WebAuthn does not run in, a bad adapter), or a server that
        fails (unreachable, too slow, malformed or oversized answers); 3 the log vault failed.
        """,
        positionals: [Positional("URL", "the RP server's URL (plain http://)")],
        options: [
            Option("adapter", .text("FILE"), "A JSON file with the server's own paths, instead of the Conformance Test API's."),
            Option("origin", .text("ORIGIN"), "The origin the server expects in client data (default: URL's own)."),
            Option("providers", .text("all|every|ID[@platform],..."), """
                all (every pack on its default platform, the default), every (every platform), or a list.
                """),
            Option("format", .oneOf(["table", "json", "html"]), "The report's form (default: table)."),
            Option("out", .text("FILE"), "Write the report to FILE; the table still goes to standard output."),
            Option("log", .text("VAULT"), """
                The vault whose event log keeps every request and response (default .credemu/probe.db; profiles
                probe-PACK-PLATFORM are replaced at each run).
                """),
            Option("forgeries", .text("none|all|NAME,..."), """
                Forged responses to send after the variants, each of which a correct server refuses (default none;
                all, or names such as badSignature,otherOrigin). One accepted is a finding (exit 1).
                """),
            Option("moves", .text("none|all|ID[@platform],..."), """
                Sign in after a move (default none): an account registers with the first provider, its passkey moves into
                each column's profile (all but the first, or those named) through a CXF document, then signs in. A refusal
                names what the move changed (BE, BS, a counter stopped at 0).
                """),
            Option("max-time", .text("SECONDS"), "The whole run's time limit, 1 to 86400 seconds (default 600); each exchange has its own 30 s."),
        ]
    ) { context, args in try context.probe(args) }
}

extension Context {
    func probe(_ args: Arguments) throws -> ExitStatus {
        let format = args.value("format") ?? "table"
        var timeLimit = Prober.defaultTimeLimit
        if let text = args.value("max-time") {
            guard text.utf8.count <= 5, text.utf8.allSatisfy({ (48...57).contains($0) }), let seconds = Int(text), (1...86_400).contains(seconds) else {
                throw UsageError("--max-time takes whole seconds, 1 to 86400.")
            }
            timeLimit = .seconds(seconds)
        }
        let base: HTTPURL
        let adapter: ProbeAdapter
        do {
            base = try HTTPURL(args.argument("URL") ?? "")
            adapter = try args.value("adapter").map { (path) throws(ProbeError) in try ProbeAdapter.load(path: path) } ?? .conformance
            try Prober.check(origin: args.value("origin") ?? base.origin, for: base)
        } catch {
            throw UsageError(error.description)
        }
        let providers = try Prober.select(args.value("providers") ?? "all", from: try self.registry())
        let logPath = args.value("log") ?? ".credemu/probe.db"
        let vault = try Vault.open(path: logPath, key: .keyFile(path: Vault.defaultKeyFile(forVault: logPath)))
        defer { vault.close() }
        let registry = try registry()
        let ops: Operations
        do {
            ops = try Operations(vault: vault, registry: registry)
        } catch {
            throw OperationFailureOutput(failure: error)
        }
        let forgeries: [Forgery]
        switch args.value("forgeries") ?? "none" {
        case "none": forgeries = []
        case "all": forgeries = Forgery.allCases
        case let list:
            do { forgeries = try list.split(separator: ",").map { (name) throws(ForgeryError) in try Forgery.named(String(name)) } } catch {
                throw UsageError(error.message)
            }
        }
        let moves: Set<String>?
        func headers(_ columns: [(any ProviderPolicy, Platform)]) -> Set<String> { Set(columns.map { "\($0.0.id)@\($0.1.rawValue)" }) }
        switch args.value("moves") ?? "none" {
        case "none": moves = nil
        case "all": moves = headers(providers)
        case let list:
            let named = headers(try Prober.select(list, from: registry))
            let columns = headers(providers)
            if let stray = named.subtracting(columns).sorted().first {
                throw UsageError("--moves names \(stray), which is not a column of this run: add it to --providers.")
            }
            moves = named
        }
        let report: ProbeReport
        do {
            let prober = Prober(base: base, adapter: adapter, origin: args.value("origin") ?? base.origin, operations: ops, timeLimit: timeLimit)
            prober.forgeries = forgeries
            prober.moves = moves
            report = try prober.run(providers)
        } catch {
            terminal.writeError("credemu: \(error.description)\n")
            return error.kind == .vault ? .vaultError : .usage
        }
        let text = format == "json" ? report.json.pretty() : format == "html" ? report.html : report.table
        if let out = args.value("out") {
            guard (try? text.write(toFile: out, atomically: true, encoding: .utf8)) != nil else { throw UsageError("Cannot write \(out).") }
            if format != "table" { terminal.write(report.table) }
        } else {
            terminal.write(text)
        }
        return report.failed ? .webAuthnError : .success
    }
}
