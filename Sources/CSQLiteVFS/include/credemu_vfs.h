#ifndef CREDEMU_VFS_H
#define CREDEMU_VFS_H

/*
 * The "credemu" SQLite VFS: the default VFS, except that a WAL file's writes are gathered and handed to the
 * kernel in one call per commit (see credemu_vfs.c and docs/architecture.md, "The vault file").
 *
 * Declared against an incomplete `struct sqlite3` so that this header does not pull <sqlite3.h> into a second
 * Clang module: Swift sees the connection as the same OpaquePointer that CSQLite's functions take.
 */

struct sqlite3;

/// Registers the "credemu" VFS (once, whichever thread asks first; later calls only look it up) and returns its
/// name, to pass to sqlite3_open_v2, or NULL when the default VFS is missing or too old to wrap.
const char *credemu_vfs_register(void);

/// Writes out what the connection's WAL buffer still holds; the vault calls it from its WAL hook, after every
/// commit: a safety net, since a commit's frames go out with its last page and checksum rewrites go straight
/// through. Returns SQLITE_OK (0) or the failed write's code; a connection whose WAL is not this VFS's is left
/// alone.
int credemu_vfs_write_out_wal(struct sqlite3 *db, const char *schema);

#endif
