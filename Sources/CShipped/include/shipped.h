#ifndef CREDEMU_SHIPPED_H
#define CREDEMU_SHIPPED_H

#include <stddef.h>

/// One file of the source tree compiled into the executable: its path from the repository root and its bytes.
typedef struct {
    const char *path;
    const unsigned char *bytes;
    size_t count;
} credemu_shipped_file;

/// Every shipped file; `*count` receives how many.
const credemu_shipped_file *credemu_shipped_files(size_t *count);

#endif
