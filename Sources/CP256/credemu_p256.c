// The EC_KEY functions are deprecated in OpenSSL 3 in favour of EVP_PKEY, which is what costs the time here.
#define OPENSSL_SUPPRESS_DEPRECATED 1

#include "credemu_p256.h"
#include "credemu_p256_ahead_take.h"

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/obj_mac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

static EC_GROUP *group;
static pthread_once_t group_once = PTHREAD_ONCE_INIT;

// Built once: setting up the curve (its Montgomery constants) costs more than a key.
static void make_group(void) { group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1); }

static EC_KEY *new_key(void) {
    pthread_once(&group_once, make_group);
    if (group == NULL) return NULL;
    EC_KEY *key = EC_KEY_new();
    if (key != NULL && EC_KEY_set_group(key, group) != 1) {
        EC_KEY_free(key);
        return NULL;
    }
    return key;
}

// A key pair: its parts, and the EC_KEY signing needs, made at the first signature. A new key's EC_KEY (a copy of
// the group, the scalar and point set into it, freed later) costs a tenth of the key: a registration that never
// signs with it pays none of it.
struct credemu_p256_key {
    uint8_t scalar[32];
    uint8_t point[65];
    _Atomic(EC_KEY *) key;
};

static EC_KEY *key_from_parts(const uint8_t scalar[32], const uint8_t point[65], int check) {
    EC_KEY *key = new_key();
    if (key == NULL) return NULL;
    BIGNUM *d = BN_bin2bn(scalar, 32, NULL);
    EC_POINT *q = EC_POINT_new(group);
    int ok = d != NULL && q != NULL
        && (!check || (!BN_is_zero(d) && BN_cmp(d, EC_GROUP_get0_order(group)) < 0))
        && EC_POINT_oct2point(group, q, point, 65, NULL) == 1   // refuses a point off the curve
        && EC_KEY_set_private_key(key, d) == 1
        && EC_KEY_set_public_key(key, q) == 1;
    BN_clear_free(d);
    EC_POINT_free(q);
    if (!ok) {
        EC_KEY_free(key);
        ERR_clear_error();
        return NULL;
    }
    return key;
}

int credemu_p256_draw(uint8_t scalar[32], uint8_t point[65]) {
    pthread_once(&group_once, make_group);
    if (group == NULL) return 0;
    BIGNUM *d = BN_secure_new();
    EC_POINT *q = EC_POINT_new(group);
    int ok = d != NULL && q != NULL;
    if (ok) {
        BN_set_flags(d, BN_FLG_CONSTTIME);
        // Uniform in 1..n-1: a draw of 0, or of n or more (odds about 2^-32), is drawn again.
        int drawn = 0;
        for (int tries = 0; ok && !drawn && tries < 64; tries++) {
            ok = RAND_priv_bytes(scalar, 32) == 1 && BN_bin2bn(scalar, 32, d) != NULL;
            drawn = ok && !BN_is_zero(d) && BN_cmp(d, EC_GROUP_get0_order(group)) < 0;
        }
        ok = drawn && EC_POINT_mul(group, q, d, NULL, NULL, NULL) == 1
            && EC_POINT_point2oct(group, q, POINT_CONVERSION_UNCOMPRESSED, point, 65, NULL) == 65;
    }
    BN_clear_free(d);
    EC_POINT_free(q);
    if (!ok) {
        OPENSSL_cleanse(scalar, 32);
        ERR_clear_error();
    }
    return ok;
}

credemu_p256_key *credemu_p256_new(uint8_t scalar[32], uint8_t point[65]) {
    if (!credemu_p256_ahead_take_pair(scalar, point) && !credemu_p256_draw(scalar, point)) return NULL;
    credemu_p256_key *out = OPENSSL_zalloc(sizeof *out);
    if (out == NULL) {
        OPENSSL_cleanse(scalar, 32);
        return NULL;
    }
    memcpy(out->scalar, scalar, 32);
    memcpy(out->point, point, 65);
    atomic_init(&out->key, NULL);
    return out;
}

credemu_p256_check_result credemu_p256_check(const uint8_t scalar[32], const uint8_t point[65]) {
    pthread_once(&group_once, make_group);
    if (group == NULL) return CREDEMU_P256_CHECK_FAILED;
    BIGNUM *d = BN_new();
    EC_POINT *given = EC_POINT_new(group), *derived = EC_POINT_new(group);
    credemu_p256_check_result result = CREDEMU_P256_CHECK_FAILED;
    if (d == NULL || given == NULL || derived == NULL) goto done;
    BN_set_flags(d, BN_FLG_CONSTTIME);
    if (BN_bin2bn(scalar, 32, d) == NULL) goto done;
    if (BN_is_zero(d) || BN_cmp(d, EC_GROUP_get0_order(group)) >= 0) {
        result = CREDEMU_P256_SCALAR_OUT_OF_RANGE;
    } else if (EC_POINT_oct2point(group, given, point, 65, NULL) != 1) {
        result = CREDEMU_P256_POINT_NOT_ON_CURVE;
    } else if (EC_POINT_mul(group, derived, d, NULL, NULL, NULL) == 1) {
        int cmp = EC_POINT_cmp(group, given, derived, NULL);
        result = cmp == 0 ? CREDEMU_P256_KEY_PAIR : cmp == 1 ? CREDEMU_P256_POINT_NOT_THE_SCALARS : CREDEMU_P256_CHECK_FAILED;
    }
done:
    BN_clear_free(d);
    EC_POINT_free(given);
    EC_POINT_free(derived);
    ERR_clear_error();
    return result;
}

credemu_p256_key *credemu_p256_import(const uint8_t scalar[32], const uint8_t point[65]) {
    EC_KEY *key = key_from_parts(scalar, point, 1);
    if (key == NULL) return NULL;
    credemu_p256_key *out = OPENSSL_zalloc(sizeof *out);
    if (out == NULL) {
        EC_KEY_free(key);
        return NULL;
    }
    memcpy(out->scalar, scalar, 32);
    memcpy(out->point, point, 65);
    atomic_init(&out->key, key);
    return out;
}

// The key's EC_KEY, made on first use; two threads racing keep one and free the other.
static EC_KEY *signing_key(credemu_p256_key *key) {
    EC_KEY *existing = atomic_load_explicit(&key->key, memory_order_acquire);
    if (existing != NULL) return existing;
    EC_KEY *made = key_from_parts(key->scalar, key->point, 0);
    if (made == NULL) return NULL;
    if (atomic_compare_exchange_strong_explicit(&key->key, &existing, made, memory_order_acq_rel, memory_order_acquire)) return made;
    EC_KEY_free(made);
    return existing;
}

int credemu_sha256(const uint8_t *data, size_t length, uint8_t digest[32]) {
    // The low-level digest: OpenSSL 3's one-shot SHA256() fetches the algorithm from the provider on every call.
    SHA256_CTX sha;
    return SHA256_Init(&sha) == 1 && SHA256_Update(&sha, data, length) == 1 && SHA256_Final(digest, &sha) == 1;
}

size_t credemu_p256_sign(credemu_p256_key *key, const uint8_t *message, size_t length, uint8_t signature[72]) {
    EC_KEY *ec = signing_key(key);
    if (ec == NULL) return 0;
    unsigned char digest[SHA256_DIGEST_LENGTH];
    unsigned int written = 0;
    if (!credemu_sha256(message, length, digest)) return 0;
    int ok = 0;
    BIGNUM *kinv = NULL, *r = NULL;
    if (credemu_p256_ahead_take(&kinv, &r)) {
        ok = ECDSA_sign_ex(0, digest, SHA256_DIGEST_LENGTH, signature, &written, kinv, r, ec) == 1;
        BN_clear_free(kinv);
        BN_clear_free(r);
        // A setup that gives s = 0 (odds 2^-256) is refused, not retried: the signature makes its own.
        if (!ok) ERR_clear_error();
    }
    if (!ok) ok = ECDSA_sign(0, digest, SHA256_DIGEST_LENGTH, signature, &written, ec) == 1;
    if (!ok || written > 72) {
        ERR_clear_error();
        return 0;
    }
    return written;
}

void credemu_p256_free(credemu_p256_key *key) {
    if (key == NULL) return;
    EC_KEY_free(atomic_load_explicit(&key->key, memory_order_acquire));
    OPENSSL_clear_free(key, sizeof *key);
}
