/// The help texts; `credemu --help` and `credemu COMMAND --help` print these.
enum Help {
    static let main = """
    credemu: a credential-provider emulator (a fake password manager that answers real WebAuthn).

    Usage: credemu [GLOBAL OPTIONS] COMMAND [ARGS]

    Commands:
      create      Register a passkey: creation options JSON in, RegistrationResponseJSON out.
      get         Sign in with a passkey: request options JSON in, AuthenticationResponseJSON out.
      vault       List, show, remove, import and export the vault's passkeys and passwords.
      password    Save and list passwords.
      demo        Register with an example RP, sign in to it, and print both responses.

    Global options (before the command):
      --vault PATH          The vault file (default: $CREDEMU_VAULT, else .credemu/vault.db).
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
    in FILE (or standard input), bare or wrapped as {"publicKey": ...}. The simulated user accepts. Prints the
    RegistrationResponseJSON and stores the passkey.

    Options:
      --origin ORIGIN        https://host[:port], http://localhost[:port] or android:apk-key-hash:HASH.
      --top-origin ORIGIN    The top-level origin when the caller is a cross-origin iframe.
      --options FILE         Read the options from FILE instead of standard input.
    Settings of the new credential (default: a synced passkey, BE=1 BS=1, counter 0, fmt none):
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
      --pick CREDENTIAL_ID   The credential the user picks.

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

      password save --origin ORIGIN --username NAME [--password PASSWORD]
                            Save a password (read from standard input when --password is absent).
      password list [--origin ORIGIN] [--reveal]
                            The saved passwords with their created, last-filled and last-used times;
                            --reveal includes the passwords themselves.

    """

    static let demo = """
    Usage: credemu [GLOBAL OPTIONS] demo [--origin ORIGIN]

    Registers a passkey with an example RP (default https://shop.example.com, RP ID example.com), signs in with
    it, checks both responses the way an RP does, and prints them.

    """
}
