// Between the signing half (credemu_p256.c) and the stocks made ahead (credemu_p256_ahead.c); not part of the
// target's interface.
#ifndef CREDEMU_P256_AHEAD_TAKE_H
#define CREDEMU_P256_AHEAD_TAKE_H

#include <openssl/bn.h>
#include <stdint.h>

/// A setup (k⁻¹ mod n, r) made ahead, now the caller's alone to sign with once and free; 0 when none is ready (the
/// pool not started, empty, or being filled at this instant), and the caller makes its own.
int credemu_p256_ahead_take(BIGNUM **kinv, BIGNUM **r);

/// A key pair made ahead (its scalar and uncompressed point), now the caller's alone; 0 when none is ready.
int credemu_p256_ahead_take_pair(uint8_t scalar[32], uint8_t point[65]);

/// A fresh key pair: a scalar drawn uniformly in 1..n-1 from OpenSSL's private DRBG, as its own key generation
/// draws one, and its point. 1 on success. Defined in credemu_p256.c; the filler makes its stock with it.
int credemu_p256_draw(uint8_t scalar[32], uint8_t point[65]);

#endif
