#include "credemu_vfs.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

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
 * SQLite calls right after every commit, writes out anything left all the same (`credemu_vfs_write_out_wal`).
 * So when a commit returns to the vault, all of it is in the kernel, as without the buffer, and a failed write
 * fails the commit as it would without it; only frames of a transaction still being written wait in memory,
 * and SQLite ignores those after a crash anyway.
 */
typedef struct credemu_wal_file {
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
} credemu_wal_file;

#define CREDEMU_WAL_FRAME_HEADER 24
/* The unix VFS writes at most 0x1ffff bytes per call (os_unix.c, seekAndWriteFd): stay below it. */
#define CREDEMU_WAL_BUFFER_LIMIT (120 * 1024)

static int credemu_wal_flush(credemu_wal_file *f) {
    if (f->buffer_length == 0) return SQLITE_OK;
    int rc = f->real->pMethods->xWrite(f->real, f->buffer, f->buffer_length, f->buffer_offset);
    /* Dropped even when the write failed, as SQLite's own failed write would be: a buffer written later could put
       a transaction SQLite rolled back on disk, complete and valid. */
    f->buffer_length = 0;
    f->commit_pending = 0;
    return rc;
}

static int credemu_wal_close(sqlite3_file *file) {
    credemu_wal_file *f = (credemu_wal_file *)file;
    int rc = credemu_wal_flush(f);
    int rc2 = f->real->pMethods->xClose(f->real);
    free(f->buffer);
    f->buffer = NULL;
    return rc != SQLITE_OK ? rc : rc2;
}

static int credemu_wal_read(sqlite3_file *file, void *out, int amount, sqlite3_int64 offset) {
    credemu_wal_file *f = (credemu_wal_file *)file;
    int rc = credemu_wal_flush(f);
    if (rc != SQLITE_OK) return rc;
    f->last_read_offset = offset;
    return f->real->pMethods->xRead(f->real, out, amount, offset);
}

static int credemu_wal_write(sqlite3_file *file, const void *data, int amount, sqlite3_int64 offset) {
    credemu_wal_file *f = (credemu_wal_file *)file;
    int rewrite = amount == CREDEMU_WAL_FRAME_HEADER && offset == f->last_read_offset;
    f->last_read_offset = -1;
    if (rewrite) {
        int rc = credemu_wal_flush(f);
        if (rc != SQLITE_OK) return rc;
        return f->real->pMethods->xWrite(f->real, data, amount, offset);
    }
    int contiguous = f->buffer_length == 0 || offset == f->buffer_offset + f->buffer_length;
    /* The page right after a buffered commit header: once it is in, the commit goes out. */
    int completes_commit = f->commit_pending && contiguous;
    if (!contiguous || amount > CREDEMU_WAL_BUFFER_LIMIT || f->buffer_length + amount > CREDEMU_WAL_BUFFER_LIMIT) {
        int rc = credemu_wal_flush(f);
        if (rc != SQLITE_OK) return rc;
        if (amount > CREDEMU_WAL_BUFFER_LIMIT) return f->real->pMethods->xWrite(f->real, data, amount, offset);
    }
    if (f->buffer_length + amount > f->buffer_capacity) {
        int capacity = f->buffer_capacity ? f->buffer_capacity : 32768;
        while (capacity < f->buffer_length + amount) capacity *= 2;
        unsigned char *grown = (unsigned char *)realloc(f->buffer, (size_t)capacity);
        if (!grown) {
            int rc = credemu_wal_flush(f);
            if (rc != SQLITE_OK) return rc;
            return f->real->pMethods->xWrite(f->real, data, amount, offset);
        }
        f->buffer = grown;
        f->buffer_capacity = capacity;
    }
    if (f->buffer_length == 0) f->buffer_offset = offset;
    memcpy(f->buffer + f->buffer_length, data, (size_t)amount);
    f->buffer_length += amount;
    if (completes_commit) return credemu_wal_flush(f);
    if (amount == CREDEMU_WAL_FRAME_HEADER) {
        const unsigned char *h = (const unsigned char *)data;
        if (h[4] | h[5] | h[6] | h[7]) f->commit_pending = 1;
    }
    return SQLITE_OK;
}

static int credemu_wal_truncate(sqlite3_file *file, sqlite3_int64 size) {
    credemu_wal_file *f = (credemu_wal_file *)file;
    int rc = credemu_wal_flush(f);
    if (rc != SQLITE_OK) return rc;
    return f->real->pMethods->xTruncate(f->real, size);
}

static int credemu_wal_sync(sqlite3_file *file, int flags) {
    credemu_wal_file *f = (credemu_wal_file *)file;
    int rc = credemu_wal_flush(f);
    if (rc != SQLITE_OK) return rc;
    return f->real->pMethods->xSync(f->real, flags);
}

static int credemu_wal_file_size(sqlite3_file *file, sqlite3_int64 *size) {
    credemu_wal_file *f = (credemu_wal_file *)file;
    int rc = credemu_wal_flush(f);
    if (rc != SQLITE_OK) return rc;
    return f->real->pMethods->xFileSize(f->real, size);
}

static int credemu_wal_lock(sqlite3_file *file, int level) {
    credemu_wal_file *f = (credemu_wal_file *)file;
    return f->real->pMethods->xLock(f->real, level);
}

static int credemu_wal_unlock(sqlite3_file *file, int level) {
    credemu_wal_file *f = (credemu_wal_file *)file;
    return f->real->pMethods->xUnlock(f->real, level);
}

static int credemu_wal_check_reserved(sqlite3_file *file, int *out) {
    credemu_wal_file *f = (credemu_wal_file *)file;
    return f->real->pMethods->xCheckReservedLock(f->real, out);
}

static int credemu_wal_file_control(sqlite3_file *file, int op, void *arg) {
    credemu_wal_file *f = (credemu_wal_file *)file;
    int rc = credemu_wal_flush(f);
    if (rc != SQLITE_OK) return rc;
    return f->real->pMethods->xFileControl(f->real, op, arg);
}

static int credemu_wal_sector_size(sqlite3_file *file) {
    credemu_wal_file *f = (credemu_wal_file *)file;
    return f->real->pMethods->xSectorSize(f->real);
}

static int credemu_wal_device_characteristics(sqlite3_file *file) {
    credemu_wal_file *f = (credemu_wal_file *)file;
    return f->real->pMethods->xDeviceCharacteristics(f->real);
}

static const sqlite3_io_methods *credemu_wal_methods(void) {
    static const sqlite3_io_methods methods = {
        1,
        credemu_wal_close, credemu_wal_read, credemu_wal_write, credemu_wal_truncate, credemu_wal_sync,
        credemu_wal_file_size, credemu_wal_lock, credemu_wal_unlock, credemu_wal_check_reserved,
        credemu_wal_file_control, credemu_wal_sector_size, credemu_wal_device_characteristics,
    };
    return &methods;
}

/* A file-control opcode no VFS knows: a WAL of this VFS writes its buffer out on any file control first. */
#define CREDEMU_FCNTL_WRITE_OUT 0x63726564

/* Other files answer the unknown opcode with SQLITE_NOTFOUND and nothing happens. */
int credemu_vfs_write_out_wal(struct sqlite3 *db, const char *schema) {
    sqlite3_file *wal = NULL;
    if (sqlite3_file_control(db, schema, SQLITE_FCNTL_JOURNAL_POINTER, &wal) != SQLITE_OK || !wal || !wal->pMethods) return SQLITE_OK;
    int rc = wal->pMethods->xFileControl(wal, CREDEMU_FCNTL_WRITE_OUT, NULL);
    return rc == SQLITE_NOTFOUND ? SQLITE_OK : rc;
}

static int credemu_vfs_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *out_flags) {
    sqlite3_vfs *real = (sqlite3_vfs *)vfs->pAppData;
    if (!(flags & SQLITE_OPEN_WAL)) {
        /* Every other file is the default VFS's own, unchanged. */
        return real->xOpen(real, name, file, flags, out_flags);
    }
    credemu_wal_file *f = (credemu_wal_file *)file;
    memset(f, 0, sizeof(*f));
    f->last_read_offset = -1;
    f->real = (sqlite3_file *)&f[1];
    int rc = real->xOpen(real, name, f->real, flags, out_flags);
    f->base.pMethods = (rc == SQLITE_OK && f->real->pMethods) ? credemu_wal_methods() : NULL;
    return rc;
}

static int credemu_vfs_delete(sqlite3_vfs *vfs, const char *name, int sync_dir) {
    sqlite3_vfs *real = (sqlite3_vfs *)vfs->pAppData;
    return real->xDelete(real, name, sync_dir);
}

static int credemu_vfs_access(sqlite3_vfs *vfs, const char *name, int flags, int *out) {
    sqlite3_vfs *real = (sqlite3_vfs *)vfs->pAppData;
    return real->xAccess(real, name, flags, out);
}

static int credemu_vfs_full_pathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    sqlite3_vfs *real = (sqlite3_vfs *)vfs->pAppData;
    return real->xFullPathname(real, name, size, out);
}

static void *credemu_vfs_dlopen(sqlite3_vfs *vfs, const char *name) {
    sqlite3_vfs *real = (sqlite3_vfs *)vfs->pAppData;
    return real->xDlOpen(real, name);
}

static void credemu_vfs_dlerror(sqlite3_vfs *vfs, int size, char *out) {
    sqlite3_vfs *real = (sqlite3_vfs *)vfs->pAppData;
    real->xDlError(real, size, out);
}

static void (*credemu_vfs_dlsym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    sqlite3_vfs *real = (sqlite3_vfs *)vfs->pAppData;
    return real->xDlSym(real, handle, symbol);
}

static void credemu_vfs_dlclose(sqlite3_vfs *vfs, void *handle) {
    sqlite3_vfs *real = (sqlite3_vfs *)vfs->pAppData;
    real->xDlClose(real, handle);
}

static int credemu_vfs_randomness(sqlite3_vfs *vfs, int size, char *out) {
    sqlite3_vfs *real = (sqlite3_vfs *)vfs->pAppData;
    return real->xRandomness(real, size, out);
}

static int credemu_vfs_sleep(sqlite3_vfs *vfs, int micros) {
    sqlite3_vfs *real = (sqlite3_vfs *)vfs->pAppData;
    return real->xSleep(real, micros);
}

static int credemu_vfs_current_time(sqlite3_vfs *vfs, double *out) {
    sqlite3_vfs *real = (sqlite3_vfs *)vfs->pAppData;
    return real->xCurrentTime(real, out);
}

static int credemu_vfs_last_error(sqlite3_vfs *vfs, int size, char *out) {
    sqlite3_vfs *real = (sqlite3_vfs *)vfs->pAppData;
    return real->xGetLastError ? real->xGetLastError(real, size, out) : 0;
}

static int credemu_vfs_current_time_int64(sqlite3_vfs *vfs, sqlite3_int64 *out) {
    sqlite3_vfs *real = (sqlite3_vfs *)vfs->pAppData;
    return real->xCurrentTimeInt64(real, out);
}

static sqlite3_vfs credemu_vfs;
static const char *const credemu_vfs_name = "credemu";
static pthread_once_t credemu_vfs_once = PTHREAD_ONCE_INIT;

static void credemu_vfs_register_once(void) {
    /* Before SQLite initializes (the lookup below does): no memory statistics, which nothing reads and which take a
       global mutex in every allocation SQLite makes. Refused (SQLITE_MISUSE) if SQLite is already in use. */
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    if (sqlite3_vfs_find(credemu_vfs_name)) return;
    sqlite3_vfs *real = sqlite3_vfs_find(NULL);
    if (!real || real->iVersion < 2 || !real->xCurrentTimeInt64) return;
    memset(&credemu_vfs, 0, sizeof(credemu_vfs));
    credemu_vfs.iVersion = 2;
    credemu_vfs.szOsFile = (int)sizeof(credemu_wal_file) + real->szOsFile;
    credemu_vfs.mxPathname = real->mxPathname;
    credemu_vfs.zName = credemu_vfs_name;
    credemu_vfs.pAppData = real;
    credemu_vfs.xOpen = credemu_vfs_open;
    credemu_vfs.xDelete = credemu_vfs_delete;
    credemu_vfs.xAccess = credemu_vfs_access;
    credemu_vfs.xFullPathname = credemu_vfs_full_pathname;
    credemu_vfs.xDlOpen = credemu_vfs_dlopen;
    credemu_vfs.xDlError = credemu_vfs_dlerror;
    credemu_vfs.xDlSym = credemu_vfs_dlsym;
    credemu_vfs.xDlClose = credemu_vfs_dlclose;
    credemu_vfs.xRandomness = credemu_vfs_randomness;
    credemu_vfs.xSleep = credemu_vfs_sleep;
    credemu_vfs.xCurrentTime = credemu_vfs_current_time;
    credemu_vfs.xGetLastError = credemu_vfs_last_error;
    credemu_vfs.xCurrentTimeInt64 = credemu_vfs_current_time_int64;
    sqlite3_vfs_register(&credemu_vfs, 0);
}

const char *credemu_vfs_register(void) {
    pthread_once(&credemu_vfs_once, credemu_vfs_register_once);
    return sqlite3_vfs_find(credemu_vfs_name) ? credemu_vfs_name : NULL;
}
