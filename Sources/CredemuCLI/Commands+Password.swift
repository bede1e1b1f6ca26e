import CredemuEngine
import CredemuOperations
import Foundation
import Vault
import WebAuthn

extension Context {
    func passwordCommand(_ words: [String]) throws -> ExitStatus {
        let args = try Arguments(words, valued: ["origin", "username", "password", "savedIn", "domain"], flagNames: ["reveal"])
        guard let sub = args.positionals.first else { throw UsageError("password needs a subcommand: save, use, list or report-unused.") }
        try args.noMorePositionals(after: 1)
        switch sub {
        case "save":
            let (origin, username) = (try args.required("origin"), try args.required("username"))
            let secret = try args.value("password") ?? readInput(file: nil).trimmingCharacters(in: .newlines)
            let savedIn = args.value("savedIn")
            printJSON(try perform { (ops) throws(OperationError) in
                try ops.savePassword(profileName, origin: origin, username: username, password: secret, savedIn: savedIn)
            })
        case "use":
            let (origin, username) = (try args.required("origin"), try args.required("username"))
            printJSON(try perform { (ops) throws(OperationError) in try ops.usePassword(profileName, origin: origin, username: username) })
        case "list":
            printJSON(.array(try perform { (ops) throws(OperationError) in
                try ops.listPasswords(profileName, origin: args.value("origin"), reveal: args.flag("reveal"))
            }))
        case "report-unused":
            let (domain, username) = (try args.required("domain"), try args.required("username"))
            try perform { (ops) throws(OperationError) in try ops.reportUnusedPassword(profileName, domain: domain, userName: username) }
            printJSON(.object([("reported", true)]))
        default:
            throw UsageError("Unknown password subcommand '\(sub)'.")
        }
        return .success
    }

    func autofill(_ words: [String]) throws -> ExitStatus {
        let args = try Arguments(words, valued: ["origin", "username", "android-package"], flagNames: ["submit"])
        try args.noMorePositionals(after: 0)
        let origin = try args.required("origin")
        printJSON(try perform { (ops) throws(OperationError) in
            try ops.autofill(profileName, origin: origin, androidPackage: args.value("android-package"), username: args.value("username"),
                             submit: args.flag("submit"))
        })
        return .success
    }
}
