import CSodium
import Synchronization

/// Cryptographically secure random bytes (libsodium `randombytes_buf`, the kernel's getrandom).
///
/// Small requests are served from a pool filled 512 bytes at a time: a registration asks more than once (its
/// credential ID, its sealing nonce), and each ask was a system call. Each pooled byte is handed out once and
/// zeroed. The pool is not fork-safe; credemu never forks (subprocesses are spawned).
public enum SecureRandom {
    public static func bytes(_ count: Int) -> [UInt8] {
        precondition(Sodium.ready, "libsodium failed to initialise")
        var out = [UInt8](repeating: 0, count: count)
        if count > Pool.size / 4 {
            out.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, count) }
            return out
        }
        pool.withLock { pool in pool.take(into: &out) }
        return out
    }

    struct Pool {
        static let size = 512
        var bytes = [UInt8](repeating: 0, count: Pool.size)
        var used = Pool.size

        mutating func take(into out: inout [UInt8]) {
            if used + out.count > Pool.size {
                bytes.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, Pool.size) }
                used = 0
            }
            for i in 0..<out.count {
                out[i] = bytes[used + i]
                bytes[used + i] = 0
            }
            used += out.count
        }
    }

    private static let pool = Mutex(Pool())
}
