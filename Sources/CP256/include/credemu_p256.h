// P-256 keys for ES256 through OpenSSL's EC_KEY interface: generation, import and signing without the
// provider layer's per-call dispatch (EVP_PKEY_todata, EVP_DigestSignInit), which costs a third of a
// fresh key and a sixth of a signature (measured in credemu-bench worker; see docs/architecture.md).
#ifndef CREDEMU_P256_H
#define CREDEMU_P256_H

#include <stddef.h>
#include <stdint.h>

/// An opaque P-256 key pair; safe to sign with from several threads at once.
typedef struct credemu_p256_key credemu_p256_key;

/// The key pair of a fresh big-endian scalar (32 random bytes from the caller, in 1..n-1): writes its uncompressed
/// point (65 bytes). NULL for a scalar out of range (the caller draws again) or on failure. Its EC_KEY is made at
/// its first signature.
credemu_p256_key *credemu_p256_generate(const uint8_t scalar[32], uint8_t point[65]);

/// A key pair from a scalar and an uncompressed point; NULL unless the point is on the curve and the scalar
/// is in 1..n-1. Like OpenSSL's own import, it does not check that the point is the scalar's.
credemu_p256_key *credemu_p256_import(const uint8_t scalar[32], const uint8_t point[65]);

/// ECDSA over SHA-256 of `message`: a DER signature of at most 72 bytes into `signature`; its length, or 0 on failure.
size_t credemu_p256_sign(credemu_p256_key *key, const uint8_t *message, size_t length, uint8_t signature[72]);

void credemu_p256_free(credemu_p256_key *key);

#endif
