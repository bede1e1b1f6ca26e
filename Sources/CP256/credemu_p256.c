// The EC_KEY functions are deprecated in OpenSSL 3 in favour of EVP_PKEY, which is what costs the time here.
#define OPENSSL_SUPPRESS_DEPRECATED 1

#include "credemu_p256.h"

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/obj_mac.h>
#include <openssl/sha.h>
#include <pthread.h>

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

credemu_p256_key *credemu_p256_generate(uint8_t scalar[32], uint8_t point[65]) {
    EC_KEY *key = new_key();
    if (key == NULL) return NULL;
    if (EC_KEY_generate_key(key) != 1
        || BN_bn2binpad(EC_KEY_get0_private_key(key), scalar, 32) != 32
        || EC_POINT_point2oct(group, EC_KEY_get0_public_key(key), POINT_CONVERSION_UNCOMPRESSED, point, 65, NULL) != 65) {
        EC_KEY_free(key);
        ERR_clear_error();
        return NULL;
    }
    return (credemu_p256_key *)key;
}

credemu_p256_key *credemu_p256_import(const uint8_t scalar[32], const uint8_t point[65]) {
    EC_KEY *key = new_key();
    if (key == NULL) return NULL;
    BIGNUM *d = BN_bin2bn(scalar, 32, NULL);
    EC_POINT *q = EC_POINT_new(group);
    int ok = d != NULL && q != NULL
        && !BN_is_zero(d) && BN_cmp(d, EC_GROUP_get0_order(group)) < 0
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
    return (credemu_p256_key *)key;
}

size_t credemu_p256_sign(const credemu_p256_key *key, const uint8_t *message, size_t length, uint8_t signature[72]) {
    unsigned char digest[SHA256_DIGEST_LENGTH];
    unsigned int written = 0;
    // The low-level digest: OpenSSL 3's one-shot SHA256() fetches the algorithm from the provider on every call.
    SHA256_CTX sha;
    if (SHA256_Init(&sha) != 1 || SHA256_Update(&sha, message, length) != 1 || SHA256_Final(digest, &sha) != 1
        || ECDSA_sign(0, digest, SHA256_DIGEST_LENGTH, signature, &written, (EC_KEY *)key) != 1 || written > 72) {
        ERR_clear_error();
        return 0;
    }
    return written;
}

void credemu_p256_free(credemu_p256_key *key) { EC_KEY_free((EC_KEY *)key); }
