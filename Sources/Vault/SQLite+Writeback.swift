import CSQLite
import CSQLiteVFS
import Dispatch
import Foundation

/// Writes the WAL to disk on a background thread as it grows, and checkpoints it as SQLite's auto-checkpoint
/// would (this hook replaces SQLite's own).
///
/// With journal_mode=WAL and synchronous=NORMAL a commit never waits for the disk; the wait comes at each
/// checkpoint, which fsyncs every frame appended since the last one: a 4 KB page per b-tree a commit touched,
/// about 20 KB per registration. Syncing the WAL early, off the caller's thread, leaves the checkpoint little to
/// write. An extra fsync never weakens SQLite's guarantees: durability still rests on the checkpoint's own syncs.
final class WALWriteback: @unchecked Sendable {
    /// The WAL size (in frames, 32 MB of 4 KB pages) at which a commit checkpoints it. A checkpoint copies each
    /// page once however often it changed, so fewer, larger ones cost less per commit: per registration about
    /// 7.6 µs at 2000 frames, 4.5 at 4000, 3.3 at 8000, 2.6 at 16000 (measured with `credemu-bench`).
    static let checkpointFrames: Int32 = 8000
    /// How many new frames wait before a background sync (1 MB of 4 KB pages).
    static let syncEveryFrames: Int32 = 256

    private let walPath: String
    private let queue = DispatchQueue(label: "credemu.vault.wal-writeback")
    private let lock = NSLock()
    /// Only on `queue`.
    private var descriptor: Int32 = -1
    /// Only in the hook, which SQLite calls with the connection held.
    private var syncedFrames: Int32 = 0
    /// Under `lock`.
    private var syncing = false
    private var closed = false

    init(databasePath: String) {
        walPath = databasePath + "-wal"
    }

    /// Installs the hook on `handle`; `PRAGMA wal_autocheckpoint` afterwards would replace it.
    func install(on handle: OpaquePointer) {
        sqlite3_wal_hook(handle, { context, db, name, frames in
            guard let context else { return SQLITE_OK }
            Unmanaged<WALWriteback>.fromOpaque(context).takeUnretainedValue().committed(db: db, name: name, frames: frames)
            return SQLITE_OK
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    private func committed(db: OpaquePointer?, name: UnsafePointer<CChar>?, frames: Int32) {
        // The commit is done: whatever of it the VFS still buffers goes to the kernel now (see CSQLiteVFS).
        credemu_vfs_write_out_wal(db, name)
        if frames >= WALWriteback.checkpointFrames {
            // As SQLite's default hook: a passive checkpoint that never waits for readers.
            sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            syncedFrames = 0
            return
        }
        if frames < syncedFrames { syncedFrames = 0 }  // the WAL restarted from its beginning
        guard frames - syncedFrames >= WALWriteback.syncEveryFrames else { return }
        lock.lock()
        let start = !syncing && !closed
        if start { syncing = true }
        lock.unlock()
        guard start else { return }
        syncedFrames = frames
        queue.async { [self] in
            if descriptor < 0 { descriptor = open(walPath, O_RDONLY | O_CLOEXEC) }
            if descriptor >= 0 { _ = fdatasync(descriptor) }
            lock.lock()
            syncing = false
            lock.unlock()
        }
    }

    /// Stops background syncs and closes the file; call before closing the connection.
    func stop() {
        lock.lock()
        closed = true
        lock.unlock()
        queue.sync {
            if descriptor >= 0 { close(descriptor) }
            descriptor = -1
        }
    }
}
