import CP256

/// ES256 signatures' setups made ahead on an otherwise idle core, for a process that answers requests one at a time.
///
/// An ECDSA signature's setup (a random k, r = x(k·G) mod n and k⁻¹; SEC 1 §4.1.3 steps 1-3) is 18 µs of its
/// 19-21 µs here and depends on neither the key nor the message. Started, one SCHED_IDLE thread keeps up to
/// `pool` setups ready; each is used by one signature and freed. A signature that finds none ready (a busy machine,
/// where the idle-class thread does not run) makes its own, as before: the CPU a signature costs is unchanged, and
/// only its latency moves. `credemu serve` starts it; the in-process engine, whose goals `make bench` measures
/// against the raw signature, does not.
public enum SignAhead {
    /// The setups kept ready: a burst of 32 signatures at half the pool wakes the thread once.
    public static let pool: UInt32 = 64

    /// Starts the thread (once a process); whether it runs.
    @discardableResult
    public static func start() -> Bool { credemu_p256_ahead_start(pool) == 1 }

    /// Setups made ahead so far, signatures that took one, and signatures that made their own since the start.
    public static var counts: (made: UInt, taken: UInt, missed: UInt) {
        var made: UInt = 0, taken: UInt = 0, missed: UInt = 0
        credemu_p256_ahead_counts(&made, &taken, &missed)
        return (made, taken, missed)
    }
}
