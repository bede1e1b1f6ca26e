import CSodium

/// libsodium needs `sodium_init()` once before use; every entry point here goes through `ready`.
enum Sodium {
    static let ready: Bool = sodium_init() >= 0
}

/// For modules that call libsodium directly: makes sure it is initialised.
public enum SodiumLibrary {
    @discardableResult
    public static func ensureInitialized() -> Bool { Sodium.ready }
}
