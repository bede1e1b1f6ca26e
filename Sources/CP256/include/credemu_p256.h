// P-256 keys for ES256 through OpenSSL's EC_KEY interface: generation, import and signing without the
// provider layer's per-call dispatch (EVP_PKEY_todata, EVP_DigestSignInit), which costs a third of a
// fresh key and a sixth of a signature (measured in credemu-bench worker; see docs/architecture.md).
#ifndef CREDEMU_P256_H
#define CREDEMU_P256_H

#include <stddef.h>
#include <stdint.h>

/// An opaque P-256 key pair; safe to sign with from several threads at once.
typedef struct credemu_p256_key credemu_p256_key;

/// A fresh key pair: its big-endian scalar (uniform in 1..n-1, from OpenSSL's private DRBG) and uncompressed point
/// written out, for the caller's PKCS#8. One made ahead when `credemu_p256_ahead_start` has one ready, else made
/// now. NULL on failure. Its EC_KEY is made at its first signature.
credemu_p256_key *credemu_p256_new(uint8_t scalar[32], uint8_t point[65]);

/// What `credemu_p256_check` found of a scalar and a point.
typedef enum {
    CREDEMU_P256_KEY_PAIR = 0,
    CREDEMU_P256_SCALAR_OUT_OF_RANGE = 1,
    CREDEMU_P256_POINT_NOT_ON_CURVE = 2,
    CREDEMU_P256_POINT_NOT_THE_SCALARS = 3,
    CREDEMU_P256_CHECK_FAILED = 4,
} credemu_p256_check_result;

/// Whether a big-endian scalar and an uncompressed point are one key pair: the scalar in 1..n-1, the point on the
/// curve and equal to scalar·G, as BoringSSL's EC_KEY_check_key checks every key EC_KEY_parse_private_key reads
/// (and Chrome's virtual authenticator imports through it); OpenSSL 3's decoder checks none of the three.
/// One fixed-base multiplication, about 5 µs.
credemu_p256_check_result credemu_p256_check(const uint8_t scalar[32], const uint8_t point[65]);

/// A key pair from a scalar and an uncompressed point; NULL unless the point is on the curve and the scalar
/// is in 1..n-1. It does not check that the point is the scalar's: `credemu_p256_check` does.
credemu_p256_key *credemu_p256_import(const uint8_t scalar[32], const uint8_t point[65]);

/// ECDSA over SHA-256 of `message`: a DER signature of at most 72 bytes into `signature`; its length, or 0 on failure.
size_t credemu_p256_sign(credemu_p256_key *key, const uint8_t *message, size_t length, uint8_t signature[72]);

void credemu_p256_free(credemu_p256_key *key);

/// Starts making ES256 signatures' setups (k⁻¹ mod n and r, which depend on neither key nor message) and key pairs
/// ahead on one SCHED_IDLE thread, "credemu-ahead", keeping up to `pool` (2 to 256) of each ready;
/// `credemu_p256_sign` and `credemu_p256_new` take one when they can and otherwise make their own. For a process that waits between requests: on a busy machine the thread
/// does not run and nothing changes. Once per process (a later call's size is ignored); a forked child signs
/// without it. 1 when the thread runs, 0 when it could not be started.
int credemu_p256_ahead_start(unsigned pool);

/// Setups and key pairs made ahead so far; signatures and keys that took one; those that made their own while started.
void credemu_p256_ahead_counts(unsigned long *made, unsigned long *taken, unsigned long *missed);

/// SHA-256 of `data` into `digest` (the hash ES256 signs, and every ceremony's clientDataHash and rpIdHash), through
/// OpenSSL's low-level interface: its SHA extensions where the CPU has them, without the provider fetch of OpenSSL 3's
/// one-shot SHA256(). 1 on success, 0 on failure.
int credemu_sha256(const uint8_t *data, size_t length, uint8_t digest[32]);

#endif
