import CP256

/// ES256 signatures' setups and new key pairs made ahead on an otherwise idle core, for a process that answers
/// requests one at a time.
///
/// An ECDSA signature's setup (a random k, r = x(k·G) mod n and k⁻¹; SEC 1 §4.1.3 steps 1-3) is 18 µs of its
/// 19-21 µs here and depends on neither the key nor the message; a new key is another multiplication by G. Started,
/// one SCHED_IDLE thread keeps up to `pool` of each ready; each is used once, then freed or wiped. A signature or key
/// that finds none ready (a busy machine, where the idle-class thread does not run) makes its own, as before: the
/// CPU a ceremony costs is unchanged, and only its latency moves. `credemu serve` starts it (`APIServer`); the
/// in-process engine, whose goals `make bench` measures against the raw signature, does not.
public enum SignAhead {
    /// The setups, and the key pairs, kept ready: the thread tops both up when either falls to half.
    public static let pool: UInt32 = 64

    /// Starts the thread (once a process); whether it runs.
    @discardableResult
    public static func start() -> Bool { credemu_p256_ahead_start(pool) == 1 }

    /// Setups and key pairs made ahead so far; signatures and keys that took one; those that made their own while
    /// the thread ran.
    public static var counts: (made: UInt, taken: UInt, missed: UInt) {
        var made: UInt = 0, taken: UInt = 0, missed: UInt = 0
        credemu_p256_ahead_counts(&made, &taken, &missed)
        return (made, taken, missed)
    }
}
