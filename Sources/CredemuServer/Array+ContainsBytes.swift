#if canImport(Glibc)
import Glibc
#endif

extension Array where Element == UInt8 {
    /// Whether `word` occurs anywhere in these bytes, for the bodies the server bounds (its body cap) and asks one
    /// fixed word of (`APIServer.mentionsConditional`, `DevToolsChannel.literalSafe`): `memchr` skips to each
    /// occurrence of the word's first byte and `memcmp` compares there, where a byte-by-byte scan cost about 1.5
    /// instructions a byte of every reply.
    func containsBytes(_ word: [UInt8]) -> Bool {
        guard let first = word.first else { return true }
        return withUnsafeBufferPointer { bytes in
            word.withUnsafeBufferPointer { word in
                guard bytes.count >= word.count, let base = bytes.baseAddress else { return false }
                let last = bytes.count - word.count   // the last offset the word can start at
                var offset = 0
                while offset <= last {
                    guard let found = memchr(base + offset, Int32(first), last - offset + 1) else { return false }
                    let at = UnsafeRawPointer(found).assumingMemoryBound(to: UInt8.self) - base
                    if memcmp(base + at, word.baseAddress!, word.count) == 0 { return true }
                    offset = at + 1
                }
                return false
            }
        }
    }
}
