#ifndef CREDEMU_PUBLIC_SUFFIX_H
#define CREDEMU_PUBLIC_SUFFIX_H

#include <libpsl.h>

/// The public suffix list compiled into the executable (Debian's `publicsuffix` package's DAFSA, as built), loaded
/// into a new libpsl context; NULL only when libpsl cannot read it. The caller owns the context (psl_free).
psl_ctx_t *credemu_public_suffix_list(void);

#endif
