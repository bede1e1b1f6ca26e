#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

/// SQLITE_TRANSIENT is a cast macro Swift cannot import.
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }

/*
 * The "credemu" VFS: the default VFS, except that a WAL file's writes are gathered and handed to the kernel
 * in one call per commit.
 *
 * SQLite writes each WAL frame as two calls (the 24-byte frame header, then the page), so a commit touching
 * five b-trees costs ten write() calls. Here consecutive writes to a WAL file collect in a buffer, written out
 * in one pwrite with the page that follows a commit frame's header (its "database size after commit" field is
 * non-zero: SQLite file format §4.1). Anything else that touches the file (a read, sync, truncate, size query,
 * file control, close, or a write elsewhere in it) writes the buffer out first. The one case where a commit
 * header is not followed by its page is SQLite rewriting checksums in place after a large transaction (it reads
 * each frame, then writes its header back): such headers go straight through, and the vault's WAL hook, which
 * SQLite calls right after every commit, writes out anything left all the same (`csqlite_wal_flush_connection`).
 * So when a commit returns to the vault, all of it is in the kernel, as without the buffer, and a failed write
 * fails the commit as it would without it; only frames of a transaction still being written wait in memory,
 * and SQLite ignores those after a crash anyway.
 */
typedef struct csqlite_wal_file {
    sqlite3_file base;
    sqlite3_file *real;
    unsigned char *buffer;
    sqlite3_int64 buffer_offset;
    int buffer_length;
    int buffer_capacity;
    /* Set once a commit frame's header is in the buffer: the write of its page completes the commit. */
    int commit_pending;
    /* Where the last call, if a read, read from: SQLite rewrites a frame's checksums by reading the frame and
       writing its header back, and those headers are written straight through. */
    sqlite3_int64 last_read_offset;
} csqlite_wal_file;

#define CSQLITE_WAL_FRAME_HEADER 24
/* The unix VFS writes at most 0x1ffff bytes per call (os_unix.c, seekAndWriteFd): stay below it. */
#define CSQLITE_WAL_BUFFER_LIMIT (120 * 1024)

static inline int csqlite_wal_flush(csqlite_wal_file *f) {
    if (f->buffer_length == 0) return SQLITE_OK;
    int rc = f->real->pMethods->xWrite(f->real, f->buffer, f->buffer_length, f->buffer_offset);
    /* Dropped even when the write failed, as SQLite's own failed write would be: a buffer written later could put
       a transaction SQLite rolled back on disk, complete and valid. */
    f->buffer_length = 0;
    f->commit_pending = 0;
    return rc;
}

static inline int csqlite_wal_close(sqlite3_file *file) {
    csqlite_wal_file *f = (csqlite_wal_file *)file;
    int rc = csqlite_wal_flush(f);
    int rc2 = f->real->pMethods->xClose(f->real);
    free(f->buffer);
    f->buffer = NULL;
    return rc != SQLITE_OK ? rc : rc2;
}

static inline int csqlite_wal_read(sqlite3_file *file, void *out, int amount, sqlite3_int64 offset) {
    csqlite_wal_file *f = (csqlite_wal_file *)file;
    int rc = csqlite_wal_flush(f);
    if (rc != SQLITE_OK) return rc;
    f->last_read_offset = offset;
    return f->real->pMethods->xRead(f->real, out, amount, offset);
}

static inline int csqlite_wal_write(sqlite3_file *file, const void *data, int amount, sqlite3_int64 offset) {
    csqlite_wal_file *f = (csqlite_wal_file *)file;
    int rewrite = amount == CSQLITE_WAL_FRAME_HEADER && offset == f->last_read_offset;
    f->last_read_offset = -1;
    if (rewrite) {
        int rc = csqlite_wal_flush(f);
        if (rc != SQLITE_OK) return rc;
        return f->real->pMethods->xWrite(f->real, data, amount, offset);
    }
    int contiguous = f->buffer_length == 0 || offset == f->buffer_offset + f->buffer_length;
    /* The page right after a buffered commit header: once it is in, the commit goes out. */
    int completes_commit = f->commit_pending && contiguous;
    if (!contiguous || amount > CSQLITE_WAL_BUFFER_LIMIT || f->buffer_length + amount > CSQLITE_WAL_BUFFER_LIMIT) {
        int rc = csqlite_wal_flush(f);
        if (rc != SQLITE_OK) return rc;
        if (amount > CSQLITE_WAL_BUFFER_LIMIT) return f->real->pMethods->xWrite(f->real, data, amount, offset);
    }
    if (f->buffer_length + amount > f->buffer_capacity) {
        int capacity = f->buffer_capacity ? f->buffer_capacity : 32768;
        while (capacity < f->buffer_length + amount) capacity *= 2;
        unsigned char *grown = (unsigned char *)realloc(f->buffer, (size_t)capacity);
        if (!grown) {
            int rc = csqlite_wal_flush(f);
            if (rc != SQLITE_OK) return rc;
            return f->real->pMethods->xWrite(f->real, data, amount, offset);
        }
        f->buffer = grown;
        f->buffer_capacity = capacity;
    }
    if (f->buffer_length == 0) f->buffer_offset = offset;
    memcpy(f->buffer + f->buffer_length, data, (size_t)amount);
    f->buffer_length += amount;
    if (completes_commit) return csqlite_wal_flush(f);
    if (amount == CSQLITE_WAL_FRAME_HEADER) {
        const unsigned char *h = (const unsigned char *)data;
        if (h[4] | h[5] | h[6] | h[7]) f->commit_pending = 1;
    }
    return SQLITE_OK;
}

static inline int csqlite_wal_truncate(sqlite3_file *file, sqlite3_int64 size) {
    csqlite_wal_file *f = (csqlite_wal_file *)file;
    int rc = csqlite_wal_flush(f);
    if (rc != SQLITE_OK) return rc;
    return f->real->pMethods->xTruncate(f->real, size);
}

static inline int csqlite_wal_sync(sqlite3_file *file, int flags) {
    csqlite_wal_file *f = (csqlite_wal_file *)file;
    int rc = csqlite_wal_flush(f);
    if (rc != SQLITE_OK) return rc;
    return f->real->pMethods->xSync(f->real, flags);
}

static inline int csqlite_wal_file_size(sqlite3_file *file, sqlite3_int64 *size) {
    csqlite_wal_file *f = (csqlite_wal_file *)file;
    int rc = csqlite_wal_flush(f);
    if (rc != SQLITE_OK) return rc;
    return f->real->pMethods->xFileSize(f->real, size);
}

static inline int csqlite_wal_lock(sqlite3_file *file, int level) {
    csqlite_wal_file *f = (csqlite_wal_file *)file;
    return f->real->pMethods->xLock(f->real, level);
}

static inline int csqlite_wal_unlock(sqlite3_file *file, int level) {
    csqlite_wal_file *f = (csqlite_wal_file *)file;
    return f->real->pMethods->xUnlock(f->real, level);
}

static inline int csqlite_wal_check_reserved(sqlite3_file *file, int *out) {
    csqlite_wal_file *f = (csqlite_wal_file *)file;
    return f->real->pMethods->xCheckReservedLock(f->real, out);
}

static inline int csqlite_wal_file_control(sqlite3_file *file, int op, void *arg) {
    csqlite_wal_file *f = (csqlite_wal_file *)file;
    int rc = csqlite_wal_flush(f);
    if (rc != SQLITE_OK) return rc;
    return f->real->pMethods->xFileControl(f->real, op, arg);
}

static inline int csqlite_wal_sector_size(sqlite3_file *file) {
    csqlite_wal_file *f = (csqlite_wal_file *)file;
    return f->real->pMethods->xSectorSize(f->real);
}

static inline int csqlite_wal_device_characteristics(sqlite3_file *file) {
    csqlite_wal_file *f = (csqlite_wal_file *)file;
    return f->real->pMethods->xDeviceCharacteristics(f->real);
}

static inline const sqlite3_io_methods *csqlite_wal_methods(void) {
    static const sqlite3_io_methods methods = {
        1,
        csqlite_wal_close, csqlite_wal_read, csqlite_wal_write, csqlite_wal_truncate, csqlite_wal_sync,
        csqlite_wal_file_size, csqlite_wal_lock, csqlite_wal_unlock, csqlite_wal_check_reserved,
        csqlite_wal_file_control, csqlite_wal_sector_size, csqlite_wal_device_characteristics,
    };
    return &methods;
}

/* A file-control opcode no VFS knows: a WAL of this VFS writes its buffer out on any file control first. */
#define CSQLITE_FCNTL_WRITE_OUT 0x63726564

/// Writes out what the connection's WAL buffer still holds; the vault calls it from its WAL hook, after every
/// commit: a safety net, since a commit's frames go out with its last page and checksum rewrites go straight
/// through. Other files answer the unknown opcode with SQLITE_NOTFOUND and nothing happens.
static inline int csqlite_wal_flush_connection(sqlite3 *db, const char *schema) {
    sqlite3_file *wal = NULL;
    if (sqlite3_file_control(db, schema, SQLITE_FCNTL_JOURNAL_POINTER, &wal) != SQLITE_OK || !wal || !wal->pMethods) return SQLITE_OK;
    int rc = wal->pMethods->xFileControl(wal, CSQLITE_FCNTL_WRITE_OUT, NULL);
    return rc == SQLITE_NOTFOUND ? SQLITE_OK : rc;
}

static inline int csqlite_vfs_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *out_flags) {
    sqlite3_vfs *real = (sqlite3_vfs *)vfs->pAppData;
    if (!(flags & SQLITE_OPEN_WAL)) {
        /* Every other file is the default VFS's own, unchanged. */
        return real->xOpen(real, name, file, flags, out_flags);
    }
    csqlite_wal_file *f = (csqlite_wal_file *)file;
    memset(f, 0, sizeof(*f));
    f->last_read_offset = -1;
    f->real = (sqlite3_file *)&f[1];
    int rc = real->xOpen(real, name, f->real, flags, out_flags);
    f->base.pMethods = (rc == SQLITE_OK && f->real->pMethods) ? csqlite_wal_methods() : NULL;
    return rc;
}

static inline int csqlite_vfs_delete(sqlite3_vfs *vfs, const char *name, int sync_dir) {
    sqlite3_vfs *real = (sqlite3_vfs *)vfs->pAppData;
    return real->xDelete(real, name, sync_dir);
}

static inline int csqlite_vfs_access(sqlite3_vfs *vfs, const char *name, int flags, int *out) {
    sqlite3_vfs *real = (sqlite3_vfs *)vfs->pAppData;
    return real->xAccess(real, name, flags, out);
}

static inline int csqlite_vfs_full_pathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    sqlite3_vfs *real = (sqlite3_vfs *)vfs->pAppData;
    return real->xFullPathname(real, name, size, out);
}

static inline void *csqlite_vfs_dlopen(sqlite3_vfs *vfs, const char *name) {
    sqlite3_vfs *real = (sqlite3_vfs *)vfs->pAppData;
    return real->xDlOpen(real, name);
}

static inline void csqlite_vfs_dlerror(sqlite3_vfs *vfs, int size, char *out) {
    sqlite3_vfs *real = (sqlite3_vfs *)vfs->pAppData;
    real->xDlError(real, size, out);
}

static inline void (*csqlite_vfs_dlsym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    sqlite3_vfs *real = (sqlite3_vfs *)vfs->pAppData;
    return real->xDlSym(real, handle, symbol);
}

static inline void csqlite_vfs_dlclose(sqlite3_vfs *vfs, void *handle) {
    sqlite3_vfs *real = (sqlite3_vfs *)vfs->pAppData;
    real->xDlClose(real, handle);
}

static inline int csqlite_vfs_randomness(sqlite3_vfs *vfs, int size, char *out) {
    sqlite3_vfs *real = (sqlite3_vfs *)vfs->pAppData;
    return real->xRandomness(real, size, out);
}

static inline int csqlite_vfs_sleep(sqlite3_vfs *vfs, int micros) {
    sqlite3_vfs *real = (sqlite3_vfs *)vfs->pAppData;
    return real->xSleep(real, micros);
}

static inline int csqlite_vfs_current_time(sqlite3_vfs *vfs, double *out) {
    sqlite3_vfs *real = (sqlite3_vfs *)vfs->pAppData;
    return real->xCurrentTime(real, out);
}

static inline int csqlite_vfs_last_error(sqlite3_vfs *vfs, int size, char *out) {
    sqlite3_vfs *real = (sqlite3_vfs *)vfs->pAppData;
    return real->xGetLastError ? real->xGetLastError(real, size, out) : 0;
}

static inline int csqlite_vfs_current_time_int64(sqlite3_vfs *vfs, sqlite3_int64 *out) {
    sqlite3_vfs *real = (sqlite3_vfs *)vfs->pAppData;
    return real->xCurrentTimeInt64(real, out);
}

/// Registers the "credemu" VFS (once; later calls only look it up) and returns its name, or NULL when the
/// default VFS is missing or too old to wrap.
static inline const char *csqlite_register_wal_coalescing_vfs(void) {
    static sqlite3_vfs vfs;
    static const char *name = "credemu";
    if (sqlite3_vfs_find(name)) return name;
    sqlite3_vfs *real = sqlite3_vfs_find(NULL);
    if (!real || real->iVersion < 2 || !real->xCurrentTimeInt64) return NULL;
    memset(&vfs, 0, sizeof(vfs));
    vfs.iVersion = 2;
    vfs.szOsFile = (int)sizeof(csqlite_wal_file) + real->szOsFile;
    vfs.mxPathname = real->mxPathname;
    vfs.zName = name;
    vfs.pAppData = real;
    vfs.xOpen = csqlite_vfs_open;
    vfs.xDelete = csqlite_vfs_delete;
    vfs.xAccess = csqlite_vfs_access;
    vfs.xFullPathname = csqlite_vfs_full_pathname;
    vfs.xDlOpen = csqlite_vfs_dlopen;
    vfs.xDlError = csqlite_vfs_dlerror;
    vfs.xDlSym = csqlite_vfs_dlsym;
    vfs.xDlClose = csqlite_vfs_dlclose;
    vfs.xRandomness = csqlite_vfs_randomness;
    vfs.xSleep = csqlite_vfs_sleep;
    vfs.xCurrentTime = csqlite_vfs_current_time;
    vfs.xGetLastError = csqlite_vfs_last_error;
    vfs.xCurrentTimeInt64 = csqlite_vfs_current_time_int64;
    return sqlite3_vfs_register(&vfs, 0) == SQLITE_OK ? name : NULL;
}
