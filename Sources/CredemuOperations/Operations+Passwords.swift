import CredemuEngine
import Vault
import WebAuthn

extension Operations {
    /// Saves a password for a sign-on realm (an origin, or an Android app's facet).
    public func savePassword(_ name: String, origin: String, username: String, password: String, savedIn: String? = nil,
                             restrictedTo: String? = nil) throws(OperationError) -> JSONValue {
        try Operations.checkSpeaksFor(origin, restrictedTo: restrictedTo)
        let realm = try signonRealm(origin, androidPackage: nil)
        return try leased(.profile(name)) { () throws(OperationError) in
            let engine = try engine(name)
            let record = try run(engine, .create) { () throws(CeremonyError) in
                try engine.savePassword(origin: realm, username: username, password: password, savedIn: savedIn)
            }
            return VaultFixture.passwordListing(record, password: nil)
        }
    }

    /// The user signs in with a saved password typed or chosen by hand (no autofill).
    public func usePassword(_ name: String, origin: String, username: String, restrictedTo: String? = nil) throws(OperationError) -> JSONValue {
        try Operations.checkSpeaksFor(origin, restrictedTo: restrictedTo)
        let realm = try signonRealm(origin, androidPackage: nil)
        try leased(.profile(name)) { () throws(OperationError) in
            let engine = try engine(name)
            try run(engine, .get) { () throws(CeremonyError) in try engine.markPasswordUsed(origin: realm, username: username) }
        }
        return .object([("used", .object([("origin", .string(realm)), ("username", .string(username))]))])
    }

    /// The RP's app reports the password of (domain, userName) unused (Apple's `reportUnusedPasswordCredential(domain:
    /// userName:)`); resolves with nothing about what the provider did. A page may report only its own origin's.
    public func reportUnusedPassword(_ name: String, domain: String, userName: String, restrictedTo: String? = nil) throws(OperationError) {
        if let restrictedTo { try Operations.checkSpeaksFor("https://" + domain.lowercased(), restrictedTo: restrictedTo) }
        try leased(.profile(name)) { () throws(OperationError) in
            let engine = try engine(name)
            try run(engine, .signal) { () throws(CeremonyError) in
                try engine.reportUnusedPassword(UnusedPasswordReport(domain: domain, userName: userName))
            }
        }
    }

    /// The passwords' listings (never the secrets unless `reveal`, which only a trusted front end asks for);
    /// a page (`restrictedTo`) sees only its own origin's.
    public func listPasswords(_ name: String, origin: String? = nil, reveal: Bool = false, restrictedTo page: String? = nil) throws(OperationError) -> [JSONValue] {
        _ = try profile(name)
        if let page {
            // The secrets are the user's to see in the provider's own window, never a page's to read.
            if reveal { throw .wrongOrigin("A page may not reveal saved passwords; only the console (the server's own origin) and the CLI may.") }
            try Operations.checkSpeaksFor(origin ?? page, restrictedTo: page)
            return try listPasswords(name, origin: page, reveal: false)
        }
        let scoped = vault.scoped(to: name)
        let records = try stored { () throws(VaultError) in
            if let origin { return try scoped.passwords(origin: origin) }
            return try scoped.allPasswords()
        }
        var out: [JSONValue] = []
        for record in records {
            out.append(VaultFixture.passwordListing(record, password: reveal ? try stored { () throws(VaultError) in try scoped.password(for: record) } : nil))
        }
        return out
    }

    /// The provider fills a saved password into the caller's sign-in form (and the form is submitted when
    /// `submit`); a page may only ask for its own origin's password. With `ifSaved`, a realm with no saved
    /// password answers `{"filled": false}` instead of failing (a page load that finds nothing to fill).
    public func autofill(_ name: String, origin: String?, androidPackage: String? = nil, username: String?, submit: Bool,
                         ifSaved: Bool = false, restrictedTo: String? = nil) throws(OperationError) -> JSONValue {
        guard let origin = origin ?? restrictedTo else { throw .invalidInput("The origin to fill is required.") }
        try Operations.checkSpeaksFor(origin, restrictedTo: restrictedTo)
        let realm = try signonRealm(origin, androidPackage: androidPackage)
        let filled = try leased(.profile(name)) { () throws(OperationError) -> FilledPassword? in
            let engine = try engine(name)
            if ifSaved, try stored({ () throws(VaultError) in try vault.scoped(to: name).passwords(origin: realm) }).isEmpty { return nil }
            return try run(engine, .get) { () throws(CeremonyError) in try engine.autofill(origin: realm, username: username, submit: submit) }
        }
        guard let filled else { return .object([("origin", .string(realm)), ("filled", false)]) }
        return .object([("filled", true), ("origin", .string(filled.record.origin)), ("username", .string(filled.record.username)),
                        ("password", .string(filled.password)),
                        ("filledAt", .string(Timestamp.format(filled.record.lastFilledAt ?? clock.now()))),
                        ("submitted", .bool(submit))])
    }

    /// The sign-on realm of an origin (an `android://HASH@package` realm stands for itself): refused as input
    /// (400) when it is neither.
    private func signonRealm(_ origin: String, androidPackage: String?) throws(OperationError) -> String {
        if origin.hasPrefix("android://") {
            let rest = origin.dropFirst(10).split(separator: "@", omittingEmptySubsequences: false)
            guard rest.count == 2, Base64URL.decode(String(rest[0]))?.count == 32, !rest[1].isEmpty,
                  rest[1].utf8.allSatisfy({ $0 < 0x80 && (Character(Unicode.Scalar($0)).isLetter || Character(Unicode.Scalar($0)).isNumber || $0 == 0x2E || $0 == 0x5F) }) else {
                throw .invalidInput("'\(origin)' is not an Android sign-on realm (android://CERT_HASH@package).")
            }
            return origin
        }
        do {
            return try Caller(origin: origin, androidPackageName: androidPackage).signonRealm
        } catch {
            throw .invalidInput("'\(origin)' is not an origin: \(error.message)")
        }
    }
}
