import CredemuEngine
import CredemuOperations
import Foundation
import Vault
import WebAuthn

extension Option {
    static let username = Option("username", .text("NAME"), "The account's user name.")
}

extension Commands {
    static let password: Command = Command(
        "password", summary: "Save, mark used, list and report unused passwords.",
        subcommands: [
            Command("save", summary: "Save a password (read from standard input when --password is absent).",
                    discussion: """
                    --savedIn records one another password manager on the device holds, which a pack counting only its own
                    store does not upgrade from.
                    """,
                    options: [.origin.asRequired, Option.username.asRequired, Option("password", .text("PASSWORD"), "The password."),
                              Option("savedIn", .text("MANAGER"), "The other password manager on the device that holds it.")]
            ) { context, args in
                let (origin, username) = (try args.required("origin"), try args.required("username"))
                let secret = try args.value("password") ?? context.readInput(file: nil).trimmingCharacters(in: .newlines)
                let savedIn = args.value("savedIn")
                context.printJSON(try context.perform { (ops) throws(OperationError) in
                    try ops.savePassword(context.profileName, origin: origin, username: username, password: secret, savedIn: savedIn)
                })
                return .success
            },
            Command("use", summary: "Record that the filled password was submitted in a sign-in (last used).",
                    options: [.origin.asRequired, Option.username.asRequired]
            ) { context, args in
                let (origin, username) = (try args.required("origin"), try args.required("username"))
                context.printJSON(try context.perform { (ops) throws(OperationError) in
                    try ops.usePassword(context.profileName, origin: origin, username: username)
                })
                return .success
            },
            Command("list", summary: "The saved passwords with their created, last-filled and last-used times.",
                    options: [Option("origin", .text("ORIGIN"), "Only this origin's."), .flag("reveal", "Include the passwords themselves.")]
            ) { context, args in
                context.printJSON(.array(try context.perform { (ops) throws(OperationError) in
                    try ops.listPasswords(context.profileName, origin: args.value("origin"), reveal: args.flag("reveal"))
                }))
                return .success
            },
            Command("report-unused",
                    summary: "The RP's app reports the password unused (Apple's reportUnusedPasswordCredential(domain:userName:)).",
                    discussion: """
                    The provider stops offering it (passwords.reportUnused): it is no longer filled nor counted for an
                    automatic upgrade. Fails with NotSupportedError where the platform has no such call.
                    """,
                    options: [Option("domain", .text("DOMAIN"), "The RP's domain.", required: true), Option.username.asRequired]
            ) { context, args in
                let (domain, username) = (try args.required("domain"), try args.required("username"))
                try context.perform { (ops) throws(OperationError) in
                    try ops.reportUnusedPassword(context.profileName, domain: domain, userName: username)
                }
                context.printJSON(.object([("reported", true)]))
                return .success
            },
        ])

    static let autofill: Command = Command(
        "autofill", summary: "Fill a saved password into a sign-in form (what an automatic upgrade looks for).",
        discussion: """
        Fills the saved password for ORIGIN (the one for NAME, or the most recently filled) and records the fill time;
        --submit also records that the sign-in form was submitted. Prints the filled credentials.
        """,
        options: [.origin.asRequired, Option("username", .text("NAME"), "The account to fill (default: the most recently filled)."),
                  .androidPackage, .flag("submit", "Also record that the sign-in form was submitted.")]
    ) { context, args in
        let origin = try args.required("origin")
        context.printJSON(try context.perform { (ops) throws(OperationError) in
            try ops.autofill(context.profileName, origin: origin, androidPackage: args.value("android-package"),
                             username: args.value("username"), submit: args.flag("submit"))
        })
        return .success
    }
}
