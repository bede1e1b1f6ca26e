/// The help texts; `credemu --help` and `credemu COMMAND --help` print these.
enum Help {
    static let main = """
    credemu: a credential-provider emulator (a fake password manager that answers real WebAuthn).

    Usage: credemu [GLOBAL OPTIONS] COMMAND [ARGS]

    Commands:
      create        Register a passkey (modal, or --mediation conditional for an automatic upgrade).
      get           Sign in with a passkey: request options JSON in, AuthenticationResponseJSON out.
      autofill      Fill a saved password into a sign-in form (what an automatic upgrade looks for).
      offer         What a conditional get's autofill dropdown offers now (pick with 'user next pick:ID').
      password      Save, mark used, list and report unused passwords.
      signal        Send signalUnknownCredential / signalAllAcceptedCredentials / signalCurrentUserDetails.
      capabilities  getClientCapabilities(), isConditionalMediationAvailable(), isUVPAA() for the profile.
      profile       Create, list, show, change and remove provider profiles.
      device        Devices: a platform with several provider accounts (profiles), one preferred.
      providers     List, show and validate policy packs.
      clock         Show, set or advance the vault's virtual clock.
      user          Script the simulated user's next decisions (accept, cancel, timeout, pick).
      events        The event log: every ceremony, autofill, signal and setting change with its reason.
      vault         List, show, remove, import and export the profile's passkeys and passwords.
      scenario      Run a scenario across providers: the divergence matrix (table, markdown, json, html).
      findings      What the RP's own requests did against the seeds' guidance, with fixes.
      probe         Check an RP server: send what every pack would, report which responses it rejects and why.
      serve         The HTTP JSON API (OpenAPI at /openapi.json) and the browser shim (/shim.js).
      demo          Register with an example RP, sign in to it, and print both responses.

    Global options (before the command):
      --vault PATH          The vault file (default: $CREDEMU_VAULT, else .credemu/vault.db).
      --profile NAME        The provider profile (default: $CREDEMU_PROFILE, else "default": GPM on Chrome desktop,
                            created on first use).
      --device NAME         Run create, get, offer, signal and capabilities on a device: the platform's rule picks
                            the provider account (named on standard error).
      --providers DIR       Packs over the built-in ones: one with a built-in pack's ID replaces it, others are
                            added (default: $CREDEMU_PROVIDERS, else only the built-in packs).
      --key-file PATH       The vault key file (default: $CREDEMU_KEY_FILE, else VAULT.key). Created with mode
                            0600 together with a new vault.
      --passphrase-file F   Derive the vault key from the passphrase in F (Argon2id) instead of a key file.
                            $CREDEMU_PASSPHRASE does the same with the passphrase itself.
      --help                This text. `credemu COMMAND --help` describes one command.

    Exit status: 0 success; 1 the ceremony ended in a WebAuthn error, printed as
    {"error": {"name": "<DOMException name>", "message": "..."}}; 2 usage error (message on standard error);
    3 vault error (wrong key, damaged or newer vault, unknown record), printed as
    {"error": {"name": "VaultError", "code": "...", "message": "..."}}.

    """

    static let create = """
    Usage: credemu [GLOBAL OPTIONS] create --origin ORIGIN [--options FILE] [OPTIONS]

    Runs navigator.credentials.create() for the caller ORIGIN with the PublicKeyCredentialCreationOptionsJSON
    in FILE (or standard input), bare or wrapped as {"publicKey": ..., "mediation": ...}. A modal create asks
    the simulated user (accepts unless `credemu user next` queued otherwise); a conditional create (automatic
    passkey upgrade) runs the profile's pack: recent matching password, opt-out, existing passkey, exclusion.
    Prints the RegistrationResponseJSON. A failure prints the web error with its reason and its Android and
    Apple renderings; an ineligible conditional create is "silent": true.

    Options:
      --origin ORIGIN        https://host[:port], http://localhost[:port] or android:apk-key-hash:HASH.
      --top-origin ORIGIN    The top-level origin when the caller is a cross-origin iframe.
      --options FILE         Read the options from FILE instead of standard input.
      --mediation M          conditional (Android isConditional, Apple .conditional) or modal; overrides the options.
      --platform P           Run on another platform of the profile's account: chrome-desktop, chrome-android,
                             android, safari, ios, macos.
      --android-package PKG  The calling app's package, for android:apk-key-hash origins.
    Settings of the new credential (default: the pack's, e.g. GPM: BE=1 BS=1, counter 0, fmt none):
      --backup-eligible true|false    BE flag.
      --backup-state true|false       BS flag (needs BE).
      --counter zero|increment        Signature counter behaviour.
      --attestation none|packed       "packed": self-attestation when the RP asks for direct attestation.
      --aaguid UUID                   The AAGUID in attested credential data.

    """

    static let get = """
    Usage: credemu [GLOBAL OPTIONS] get --origin ORIGIN [--options FILE] [--pick CREDENTIAL_ID]

    Runs navigator.credentials.get() for the caller ORIGIN with the PublicKeyCredentialRequestOptionsJSON in
    FILE (or standard input). Hidden passkeys are never offered. When several credentials match, the simulated
    user picks the most recently used one, or CREDENTIAL_ID (base64url) with --pick.

    Options:
      --origin ORIGIN        The caller's origin.
      --top-origin ORIGIN    The top-level origin when the caller is a cross-origin iframe.
      --options FILE         Read the options from FILE instead of standard input.
      --pick CREDENTIAL_ID   The credential the user picks (as a queued `user next pick:ID` does).
      --mediation M          conditional or modal (recorded; the choice follows the same rules).
      --platform P           Run on another platform of the profile's account.

    """

    static let vault = """
    Usage: credemu [GLOBAL OPTIONS] vault SUBCOMMAND

      vault list            The passkeys (without private keys), as JSON.
      vault show ID         One passkey by credential ID (base64url).
      vault remove ID       Delete one passkey for good.
      vault import FILE     Seed the vault from a fixture (format: vault-fixtures/README.md); all or nothing.
      vault export          Print the whole vault as a fixture, private keys and passwords included.

    """

    static let password = """
    Usage: credemu [GLOBAL OPTIONS] password SUBCOMMAND

      password save --origin ORIGIN --username NAME [--password PASSWORD] [--savedIn MANAGER]
                            Save a password (read from standard input when --password is absent);
                            --savedIn records one another password manager on the device holds, which
                            a pack counting only its own store does not upgrade from.
      password use --origin ORIGIN --username NAME
                            Record that the filled password was submitted in a sign-in (last used).
      password list [--origin ORIGIN] [--reveal]
                            The saved passwords with their created, last-filled and last-used times;
                            --reveal includes the passwords themselves.
      password report-unused --domain DOMAIN --username NAME
                            The RP's app reports the password unused (Apple's
                            reportUnusedPasswordCredential(domain:userName:)): the provider stops
                            offering it (passwords.reportUnused); it is no longer filled nor counted
                            for an automatic upgrade. Fails with NotSupportedError where the platform
                            has no such call.

    """

    static let demo = """
    Usage: credemu [GLOBAL OPTIONS] demo [--origin ORIGIN]

    Registers a passkey with an example RP (default https://shop.example.com, RP ID example.com), signs in with
    it, checks both responses the way an RP does, and prints them.

    """

    static let profile = """
    Usage: credemu [GLOBAL OPTIONS] profile SUBCOMMAND

      profile list                  Every profile with its settings.
      profile show [NAME]           One profile (default: --profile).
      profile create NAME [SETTINGS] A new profile; --pack defaults to gpm, --platform to chrome-desktop.
      profile set NAME SETTINGS     Change settings (logged as a setting event).
      profile remove NAME           Delete a profile with its passwords, passkeys and events.

    Settings: --pack ID, --packPath FILE (your own pack), --platform P, --osVersion V,
    --playServicesVersion V, --passcodeSet true|false, --automaticPasskeyUpgrades true|false (false is the
    opt-out; it holds on every platform of the account), --passkeysEnabled true|false; device state:
    --browserSignedIn true|false, --syncEnabled true|false (GPM desktop upgrades need both),
    --privateBrowsing true|false (Safari does not upgrade in a private tab), --browserVersion V (Chrome's or
    Safari's; related origin requests need Chrome 128 or Safari 18).

    """

    static let device = """
    Usage: credemu [GLOBAL OPTIONS] device SUBCOMMAND

      device list                   Every device with its settings.
      device show NAME              One device.
      device create NAME --providers P1,P2 [SETTINGS]
                                    A new device; the providers are profiles (provider accounts) in the user's
                                    order, each with a pack that models the device's platform.
      device set NAME SETTINGS      Change settings (logged in each provider account).
      device remove NAME            Delete the device; its accounts stay.

    Settings: --providers P1,P2 (at most 8), --preferred P (Android's preferred service; the first when unset),
    --platform P, --osVersion V, --playServicesVersion V, --passcodeSet, --browserSignedIn, --syncEnabled,
    --privateBrowsing true|false, --browserVersion V. The device's state replaces each account's own in its ceremonies; the accounts'
    settings (the opt-out) and credentials are shared by every device that names them.

    Where ceremonies go (credemu --device NAME create|get|offer|signal|capabilities): a browser extension
    (device.integration extension) takes creates and answers gets first; else the preferred provider on Android
    and Apple platforms, the browser's own manager on desktop. Gets and the autofill dropdown offer every
    provider's passkeys; signals go to the built-in manager and, on Android 14+ (and Apple 26, unconfirmed), to
    every enabled OS provider, never to an extension.

    """

    static let autofill = """
    Usage: credemu [GLOBAL OPTIONS] autofill --origin ORIGIN [--username NAME] [--submit]

    Fills the saved password for ORIGIN (the one for NAME, or the most recently filled) and records the fill
    time; --submit also records that the sign-in form was submitted. Prints the filled credentials.

    """

    static let signal = """
    Usage: credemu [GLOBAL OPTIONS] signal unknown|accepted|details --origin ORIGIN [--options FILE] [--platform P]

    Sends PublicKeyCredential.signalUnknownCredential ({rpId, credentialId}), signalAllAcceptedCredentials
    ({rpId, userId, allAcceptedCredentialIds}) or signalCurrentUserDetails ({rpId, userId, name, displayName}),
    JSON from FILE or standard input. Prints {"resolved": true}: a signal tells the caller nothing. What the
    provider did (hid, restored, deleted, renamed, ignored, dropped over quota) is in `credemu events`.

    """

    static let capabilities = """
    Usage: credemu [GLOBAL OPTIONS] capabilities [--platform P]

    The profile's getClientCapabilities() (keys sorted, omitted where the platform omits them),
    isConditionalMediationAvailable() and isUserVerifyingPlatformAuthenticatorAvailable(), from its pack.

    """

    static let clock = """
    Usage: credemu [GLOBAL OPTIONS] clock [show | set TIME | advance DURATION | system]

    The vault's clock. `set` and `advance` (90s, 6m, 2h, 1d) make it virtual: it stands still until moved.
    `system` returns to wall-clock time.

    """

    static let providers = """
    Usage: credemu [GLOBAL OPTIONS] providers [list | show ID [--platform P] | validate FILE]

    The policy packs with their versions, sources and origin ("built-in", or the file of a --providers pack);
    one pack's knobs with value, source and whether the value is unconfirmed; or a check of a pack file.

    """

    static let events = """
    Usage: credemu [GLOBAL OPTIONS] events [--kind K] [--all-profiles] [--after ID] [--limit N]

    The event log of --profile (or of every profile): kinds create, get, autofill, password, signal, setting,
    clock; each with outcome (success, noop, error, applied, ignored, dropped, ...), reason and detail.

    """

    static let user = """
    Usage: credemu [GLOBAL OPTIONS] user [next DECISION... | pending | clear]

    The simulated user's next decisions, taken first in, first out by prompts: accept, cancel, timeout,
    pick:CREDENTIAL_ID. Without a queued decision the user accepts.

    """

    static let offer = """
    Usage: credemu [GLOBAL OPTIONS] offer --origin ORIGIN [--options FILE] [--platform P]

    What the autofill dropdown of a conditional get with these request options (FILE or standard input)
    offers now: the RP's usable passkeys, most recently used first; hidden ones never. The offer is logged.
    From the CLI a conditional get answers at once: queue the pick first ('credemu user next pick:ID').
    A server keeps a conditional get pending until POST /profiles/{p}/offer/pick.

    """

    static let serve = """
    Usage: credemu [GLOBAL OPTIONS] serve [--host 127.0.0.1] [--port 8765|0] [--port-file F] [--token T]
                                          [--allow-origin O1,O2] [--allow-host NAME,...] [--threads 4]
                                          [--max-body 262144]

    Serves the JSON API over the vault, the OpenAPI document at /openapi.json and the browser shim at
    /shim.js?profile=NAME. Prints the URL on the first line (--port 0 picks a free port; --port-file writes
    it). --token requires 'Authorization: Bearer T' on every route but /shim.js, /health and /openapi.json;
    a --host that is not a loopback address needs it. Requests must name a loopback host (or the --host
    address, or an --allow-host name). A page (a request with an Origin header) is served only when its origin
    is given with --allow-origin ("*" for any) or later with POST /origins (from a caller that is not a
    page), and then acts only for that origin. POST and PATCH take
    Content-Type: application/json only. SIGTERM or SIGINT stops it cleanly.

    """

    static let scenario = """
    Usage: credemu [GLOBAL OPTIONS] scenario run FILE [--providers all|ID[@platform],...]
                                                    [--format table|markdown|json|html] [--out FILE]

    Runs a scenario (format: scenarios/README.md) once per provider, each in a fresh vault with a virtual
    clock, and prints the divergence matrix: rows are steps, columns providers, cells the outcome in the RP's
    terms and what changed in the vault; rows that differ are marked, every cell names the pack knob and its
    source, and the RP integration findings follow.

    """

    static let findings = """
    Usage: credemu [GLOBAL OPTIONS] findings

    The profile's RP integration findings: requests that went against the seeds' guidance (an upgrade for
    another account than the one just autofilled, missing exclusion IDs, a repeated automatic attempt, UV
    required on a conditional create, an empty or partial accepted list, an unknown credential later listed
    as accepted, signals past the rate limit, a display name where the platform keeps only the name), each
    with its criterion and a fix.

    """

    static let probe = """
    Usage: credemu [GLOBAL OPTIONS] probe URL [--adapter FILE] [--origin ORIGIN] [--providers all|every|ID[@platform],...]
                                              [--format table|json|html] [--out FILE] [--log VAULT] [--max-time SECONDS]

    Drives the RP server at URL (plain http://) with what every pack would send: a modal registration, an
    automatic upgrade (UP=0, UV=0), a UV=0 registration, a not-yet-synced passkey (BE=1, BS=0), packed
    attestation where the pack does it, and two sign-ins with signCount 0. Each response is made by the real
    engine for the options the server issued. The server speaks the FIDO2 Conformance Test API
    (POST URL/attestation/options, /attestation/result, /assertion/options, /assertion/result) unless
    --adapter names a JSON file with its own paths (README, "Check your RP server").

    --origin is the origin the server expects in client data (default: URL's own; it must be https:// or
    http://localhost). --providers: all (every pack on its default platform, the default), every (every
    platform), or a list. --log is the vault whose event log keeps every request and response (default
    .credemu/probe.db; profiles probe-PACK-PLATFORM are replaced at each run). With --out, the report goes to
    FILE and the table to standard output. --max-time bounds the whole run (default 600 s); each exchange has
    30 s, and answers are bounded (README, "Check your RP server").

    Exit status: 0 the server accepted every response a correct server must accept; 1 it rejected at least
    one (each tied to its seed criterion or spec rule, with the fix); 2 usage, a bad adapter, or a server that
    fails: unreachable, too slow or sending what HTTP/1.1 or the bounds do not allow (credemu: NAME: message,
    NAME Unreachable, ExchangeTimedOut, RunTimedOut, MalformedResponse, ResponseTooLarge, CookieOverLimit);
    3 the log vault failed.

    """

    static let topics: [String: String] = [
        "create": create, "get": get, "vault": vault, "password": password, "demo": demo, "profile": profile,
        "autofill": autofill, "signal": signal, "capabilities": capabilities, "clock": clock, "providers": providers,
        "events": events, "user": user, "serve": serve, "offer": offer, "scenario": scenario, "findings": findings, "probe": probe,
    ]
}
