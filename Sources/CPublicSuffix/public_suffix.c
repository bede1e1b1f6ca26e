// The public suffix list, compiled in with C23 `#embed` from Debian's `publicsuffix` package on the build machine
// (`make deps-debian` installs it), so RP ID checks never depend on a file the running system may lack: a clean
// root has no /usr/share/publicsuffix, and libpsl's fallback (`psl_builtin()`) is empty in a build without it.
// Clang lists the embedded file in the object's dependency file: a newer package's list rebuilds this file.
#define _GNU_SOURCE
#include "public_suffix.h"

#include <stdio.h>

#pragma clang diagnostic ignored "-Wc23-extensions"

static const unsigned char list[] = {
#embed "/usr/share/publicsuffix/public_suffix_list.dafsa"
};

psl_ctx_t *credemu_public_suffix_list(void) {
    // libpsl reads a list only from a file (psl_load_fp tells a DAFSA by its ".DAFSA@PSL_" first line); fmemopen
    // reads the bytes in place, never writing in "r" mode.
    FILE *file = fmemopen((void *)list, sizeof list, "r");
    if (file == NULL) return NULL;
    psl_ctx_t *context = psl_load_fp(file);
    fclose(file);
    return context;
}
