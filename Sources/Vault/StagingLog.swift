import Foundation

/// The file a held vault appends its staged registrations to (`<vault>-staged`, beside the `-wal`): one `write` a
/// registration, where a commit into SQLite wrote a 4 KB WAL frame through the b-tree, the pager and the commit hook.
///
/// A record is the row `passkeys` will hold (`Vault.stagedColumns`' values, the private key sealed as in the table)
/// with its sequence number, whether it shadows the account's older passkeys, and a checksum:
/// `length u32 | seq i64 | flags u8 | count u8 | values | checksum u64`, little-endian; a value is its tag (0 null,
/// 1 integer, 2 text, 3 blob) and an i64, or a u32 length and the bytes. `Vault.moveStaged` moves every record after
/// the vault's `staged_through` mark into `passkeys` in one transaction that also advances the mark; only then is
/// the file emptied, so a crash anywhere leaves each registration in one place or the other, and the next open moves
/// what the file still holds. A record cut short by a crash (the write was never acknowledged) ends the file's
/// valid part: its length or its checksum does not hold.
///
/// It is what the mirror (`StagedPasskeys`) says, on disk: written once by the registration, read back only by a
/// move. The same durability as a commit with `synchronous=NORMAL`: in the kernel when the call returns, so a
/// killed process loses nothing; synced to the disk by the move's commit and checkpoint, not before.
final class StagingLog {
    /// One staged registration read back.
    struct Record {
        let seq: Int64
        /// A create that shadows the account's older passkeys (`PriorOfSameUser.shadowed`): the move shadows them
        /// again right after inserting it, as the registration did (`Vault.shadowPriorSQL`).
        let shadows: Bool
        let values: [SQLValue]
    }

    private(set) var path: String
    private let descriptor: Int32
    /// The file's length as this process wrote it.
    private(set) var length: Int
    /// Reused for each record, so that appending allocates nothing once it has grown.
    private var buffer: [UInt8] = []

    /// The log beside the vault at `vaultPath`.
    static func path(forVault vaultPath: String) -> String { vaultPath + "-staged" }
    /// Where a log goes while a move on another thread reads it (`rotate`): its records are older than the log's.
    static func movingPath(forVault vaultPath: String) -> String { vaultPath + "-staged-moving" }

    /// Opens the log for appending, created (mode 0600) or emptied; the caller holds the vault alone, and has moved
    /// every record it held (`Vault.moveLeftoverStaged`).
    init(vaultPath: String) throws(VaultError) {
        path = StagingLog.path(forVault: vaultPath)
        descriptor = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_TRUNC, 0o600)
        guard descriptor >= 0 else { throw VaultError(.storage, "The staging log \(path) could not be opened: \(String(cString: strerror(errno))).") }
        // 0600 whatever the umask, as SQLite makes the -wal and -shm: a umask that takes the owner's write bit would
        // leave a file the next holder could not open for writing.
        fchmod(descriptor, 0o600)
        var info = stat()
        length = fstat(descriptor, &info) == 0 ? Int(info.st_size) : 0
        buffer.reserveCapacity(1024)
    }

    deinit { close() }

    private var closed = false

    func close() {
        guard !closed else { return }
        closed = true
        Glibc.close(descriptor)
    }

    /// Appends one record in one `write`; on failure the file is cut back to where it was.
    func append(seq: Int64, shadows: Bool, values: [SQLValue]) throws(VaultError) {
        buffer.removeAll(keepingCapacity: true)
        buffer += [0, 0, 0, 0]
        StagingLog.put(UInt64(bitPattern: seq), 8, into: &buffer)
        buffer.append(shadows ? 1 : 0)
        buffer.append(UInt8(values.count))
        for value in values {
            switch value {
            case .null: buffer.append(0)
            case .int(let n):
                buffer.append(1)
                StagingLog.put(UInt64(bitPattern: n), 8, into: &buffer)
            case .text(let s):
                buffer.append(2)
                var s = s
                s.withUTF8 { utf8 in
                    StagingLog.put(UInt64(utf8.count), 4, into: &buffer)
                    buffer.append(contentsOf: utf8)
                }
            case .blob(let b):
                buffer.append(3)
                StagingLog.put(UInt64(b.count), 4, into: &buffer)
                buffer += b
            }
        }
        let sum = StagingLog.checksum(buffer[4...])
        StagingLog.put(sum, 8, into: &buffer)
        let body = UInt64(buffer.count - 4)
        for i in 0..<4 { buffer[i] = UInt8(truncatingIfNeeded: body >> (8 * UInt64(i))) }
        let written = buffer.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == buffer.count else {
            let reason = written < 0 ? String(cString: strerror(errno)) : "a short write"
            truncate(to: length)
            throw VaultError(.storage, "A staged registration could not be written to \(path): \(reason).")
        }
        length += written
    }

    /// Renames this log to `movingPath` for a move to read, and returns a new, empty log in its place for the
    /// registrations that arrive meanwhile (the caller holds the lock and the vault alone, and no moving log is
    /// left: renaming over one would lose what it holds). On failure everything is as it was.
    func rotate(vaultPath: String) throws(VaultError) -> StagingLog {
        let moving = StagingLog.movingPath(forVault: vaultPath)
        guard rename(path, moving) == 0 else {
            throw VaultError(.storage, "The staging log \(path) could not be renamed: \(String(cString: strerror(errno))).")
        }
        do throws(VaultError) {
            let fresh = try StagingLog(vaultPath: vaultPath)
            path = moving
            return fresh
        } catch {
            rename(moving, path)
            throw error
        }
    }

    /// Cuts the file back to `offset` bytes (an append whose registration then failed; every record moved).
    func truncate(to offset: Int) {
        if ftruncate(descriptor, off_t(offset)) == 0 { length = offset }
    }

    /// The valid records of this log whose sequence number is after `mark`, oldest first, read through the descriptor
    /// it appends to (the file may have been unlinked since: the vault's directory removed under a running server).
    func records(after mark: Int64) throws(VaultError) -> [Record] {
        try StagingLog.records(descriptor, path: path, after: mark)
    }

    /// The records after `mark` that the logs beside the vault at `vaultPath` hold (a moving one's first), for a
    /// process that does not append to them.
    static func records(forVault vaultPath: String, after mark: Int64) throws(VaultError) -> [Record] {
        try records(at: movingPath(forVault: vaultPath), after: mark) + records(at: path(forVault: vaultPath), after: mark)
    }

    /// The same for the log at `path`: none when there is no file. Reading stops at the first record cut short or
    /// failing its checksum.
    static func records(at path: String, after mark: Int64) throws(VaultError) -> [Record] {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            if errno == ENOENT { return [] }
            throw VaultError(.storage, "The staging log \(path) could not be read: \(String(cString: strerror(errno))).")
        }
        defer { Glibc.close(fd) }
        return try records(fd, path: path, after: mark)
    }

    private static func records(_ fd: Int32, path: String, after mark: Int64) throws(VaultError) -> [Record] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(bytes.count)) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw VaultError(.storage, "The staging log \(path) could not be read: \(String(cString: strerror(errno))).") }
            if n == 0 { break }
            bytes += chunk[0..<n]
        }
        var records: [Record] = []
        var at = 0
        while let (record, next) = parse(bytes, at: at) {
            if record.seq > mark { records.append(record) }
            at = next
        }
        return records
    }

    /// The record at `start`, and where the next one begins; nil when none is whole there.
    private static func parse(_ bytes: [UInt8], at start: Int) -> (Record, Int)? {
        guard start + 4 <= bytes.count else { return nil }
        let body = Int(get(bytes, start, 4))
        let end = start + 4 + body
        guard body >= 8 + 2 + 8, end <= bytes.count,
              checksum(bytes[(start + 4)..<(end - 8)]) == get(bytes, end - 8, 8) else { return nil }
        var at = start + 4
        let seq = Int64(bitPattern: get(bytes, at, 8))
        let shadows = bytes[at + 8] & 1 == 1
        let count = Int(bytes[at + 9])
        at += 10
        var values: [SQLValue] = []
        values.reserveCapacity(count)
        for _ in 0..<count {
            guard at < end - 8 else { return nil }
            let tag = bytes[at]
            at += 1
            switch tag {
            case 0: values.append(.null)
            case 1:
                guard at + 8 <= end - 8 else { return nil }
                values.append(.int(Int64(bitPattern: get(bytes, at, 8))))
                at += 8
            case 2, 3:
                guard at + 4 <= end - 8 else { return nil }
                let n = Int(get(bytes, at, 4))
                at += 4
                guard n <= end - 8 - at else { return nil }
                let run = Array(bytes[at..<(at + n)])
                values.append(tag == 2 ? .text(String(decoding: run, as: UTF8.self)) : .blob(run))
                at += n
            default: return nil
            }
        }
        guard at == end - 8 else { return nil }
        return (Record(seq: seq, shadows: shadows, values: values), end)
    }

    private static func put(_ value: UInt64, _ width: Int, into buffer: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { buffer.append(contentsOf: $0.prefix(width)) }
    }

    private static func get(_ bytes: [UInt8], _ at: Int, _ width: Int) -> UInt64 {
        var value: UInt64 = 0
        for i in 0..<width { value |= UInt64(bytes[at + i]) << (8 * UInt64(i)) }
        return value
    }

    /// A 64-bit checksum (FNV-1a's prime over 8-byte words, with a final mix): it tells a record cut short or
    /// half-written from a whole one; nothing here needs it to resist a forger (whoever can write the file can
    /// write the vault).
    static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(bytes.count)
        bytes.withUnsafeBytes { raw in
            var i = 0
            while i + 8 <= raw.count {
                h = (h ^ UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))) &* 0x100_0000_01b3
                h ^= h >> 29
                i += 8
            }
            var tail: UInt64 = 0
            var shift: UInt64 = 0
            while i < raw.count {
                tail |= UInt64(raw[i]) << shift
                shift += 8
                i += 1
            }
            h = (h ^ tail) &* 0x100_0000_01b3
        }
        h ^= h >> 33
        h = h &* 0xff51_afd7_ed55_8ccd
        return h ^ (h >> 33)
    }
}
