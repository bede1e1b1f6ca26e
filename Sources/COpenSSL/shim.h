#include <openssl/evp.h>
#include <openssl/ec.h>
#include <openssl/rsa.h>
#include <openssl/bn.h>
#include <openssl/x509.h>
#include <openssl/err.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>
#include <openssl/sha.h>
/// EVP_PKEY_PUBLIC_KEY is a macro composed of other macros; Swift does not import it.
static inline int copenssl_selection_public_key(void) { return EVP_PKEY_PUBLIC_KEY; }
/// EVP_PKEY_KEYPAIR, likewise a compound macro.
static inline int copenssl_selection_keypair(void) { return EVP_PKEY_KEYPAIR; }
