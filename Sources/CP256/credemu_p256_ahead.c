// ES256's fixed-base multiplications made ahead, on a thread that runs only on an otherwise idle core.
//
// Of an ES256 signature's 19-21 µs here, 18 µs is its setup (SEC 1 §4.1.3 steps 1-3: a random k, r = x(k·G) mod n,
// and k⁻¹ mod n), which depends on neither the key nor the message; a new key pair is another multiplication by G
// (SEC 1 §3.2.1). A server answers one ceremony at a time and then waits: the setups and key pairs made meanwhile
// let the next signature take 0.7 µs and the next key none, and keep P-256's 150 KB table of multiples of G out of
// the serving thread's caches. Each setup and each key pair is handed out once and wiped or freed after it: a k
// used twice would give away the key.
#define _GNU_SOURCE
#define OPENSSL_SUPPRESS_DEPRECATED 1

#include "credemu_p256.h"
#include "credemu_p256_ahead_take.h"

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/obj_mac.h>
#include <openssl/crypto.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

enum { POOL_MAX = 256 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wanted = PTHREAD_COND_INITIALIZER;
// Two stocks under one lock: signatures' setups, and key pairs (a registration's other fixed-base multiplication).
static BIGNUM *kinvs[POOL_MAX], *rs[POOL_MAX];
static unsigned setups;
static struct { uint8_t scalar[32]; uint8_t point[65]; } pairs[POOL_MAX];
static unsigned key_pairs;
static unsigned capacity, low_water;
// Off until started, and in a forked child: a child's copy of the stocks would sign with its parent's nonces.
static atomic_int enabled;
static atomic_ulong made, taken, missed;
static pthread_once_t start_once = PTHREAD_ONCE_INIT;
// The filler's start, which `credemu_p256_ahead_start` waits for.
static pthread_cond_t settled = PTHREAD_COND_INITIALIZER;
static enum { STARTING, RUNNING, FAILED } state = STARTING;

static void forked_child(void) { atomic_store(&enabled, 0); }

// Adds one to whichever stock is short; 0 once both are full, -1 when OpenSSL failed.
static int top_up(EC_KEY *setup_key, BN_CTX *ctx) {
    pthread_mutex_lock(&lock);
    int setup_wanted = setups < capacity, pair_wanted = key_pairs < capacity;
    pthread_mutex_unlock(&lock);
    if (setup_wanted) {
        BIGNUM *kinv = NULL, *r = NULL;
        if (ECDSA_sign_setup(setup_key, ctx, &kinv, &r) != 1) return -1;
        pthread_mutex_lock(&lock);
        kinvs[setups] = kinv;
        rs[setups] = r;
        setups += 1;
        pthread_mutex_unlock(&lock);
    }
    if (pair_wanted) {
        uint8_t scalar[32], point[65];
        if (!credemu_p256_draw(scalar, point)) return -1;
        pthread_mutex_lock(&lock);
        memcpy(pairs[key_pairs].scalar, scalar, 32);
        memcpy(pairs[key_pairs].point, point, 65);
        key_pairs += 1;
        pthread_mutex_unlock(&lock);
        OPENSSL_cleanse(scalar, sizeof scalar);
    }
    atomic_fetch_add_explicit(&made, (unsigned long)(setup_wanted + pair_wanted), memory_order_relaxed);
    return setup_wanted || pair_wanted;
}

// The filler: tops both stocks up to capacity whenever either falls to half, and otherwise sleeps. Only it adds to
// the stocks, so what it saw short under the lock is still short when it adds.
static void *fill(void *unused) {
    (void)unused;
    // glibc's attributes take no SCHED_IDLE (pthread_attr_setschedpolicy: EINVAL): the thread moves itself first.
    struct sched_param none = {0};
    int idle = pthread_setschedparam(pthread_self(), SCHED_IDLE, &none) == 0;
    // ECDSA_sign_setup asks for a key that can sign; it uses only its group (k is drawn by BN_priv_rand_range).
    EC_KEY *setup_key = idle ? EC_KEY_new_by_curve_name(NID_X9_62_prime256v1) : NULL;
    BN_CTX *ctx = idle ? BN_CTX_new() : NULL;
    int ready = setup_key != NULL && ctx != NULL && EC_KEY_generate_key(setup_key) == 1;
    pthread_mutex_lock(&lock);
    atomic_store(&enabled, ready);
    state = ready ? RUNNING : FAILED;
    pthread_cond_broadcast(&settled);
    pthread_mutex_unlock(&lock);
    // Not ready: nothing to make with; 1: tops up when asked, until OpenSSL fails (-1).
    for (int result = ready ? 1 : -1; result >= 0;) {
        pthread_mutex_lock(&lock);
        while (setups > low_water && key_pairs > low_water) pthread_cond_wait(&wanted, &lock);
        pthread_mutex_unlock(&lock);
        while ((result = top_up(setup_key, ctx)) > 0) {}
    }
    // Not seen: no idle class, or OpenSSL failed to make a setup or a key; ceremonies make their own from here on.
    atomic_store(&enabled, 0);
    ERR_clear_error();
    EC_KEY_free(setup_key);
    BN_CTX_free(ctx);
    return NULL;
}

static void start_filler(void) {
    pthread_attr_t attributes;
    pthread_t thread;
    if (pthread_atfork(NULL, NULL, forked_child) != 0 || pthread_attr_init(&attributes) != 0) return;
    int created = pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED) == 0
        && pthread_create(&thread, &attributes, fill, NULL) == 0;
    pthread_attr_destroy(&attributes);
    if (!created) return;
    pthread_setname_np(thread, "credemu-ahead");
    pthread_mutex_lock(&lock);
    while (state == STARTING) pthread_cond_wait(&settled, &lock);
    pthread_mutex_unlock(&lock);
}

int credemu_p256_ahead_start(unsigned pool) {
    if (pool < 2 || pool > POOL_MAX) return 0;
    pthread_mutex_lock(&lock);
    if (capacity == 0) {
        capacity = pool;
        low_water = pool / 2;
    }
    pthread_mutex_unlock(&lock);
    pthread_once(&start_once, start_filler);
    return atomic_load(&enabled);
}

void credemu_p256_ahead_counts(unsigned long *made_out, unsigned long *taken_out, unsigned long *missed_out) {
    *made_out = atomic_load(&made);
    *taken_out = atomic_load(&taken);
    *missed_out = atomic_load(&missed);
}

// Moves a stock's last item out, under the lock, into what the caller gave `take`.
typedef void (*move_out)(unsigned index, void *into);

// One item of a stock, if the lock is free and the stock not empty; it wakes the filler when the stock falls to
// half. Never waits for the lock: the filler may hold it while an idle-class thread is not scheduled for a while.
static int take(unsigned *stock, move_out move, void *into) {
    if (!atomic_load_explicit(&enabled, memory_order_acquire)) return 0;
    int got = 0;
    if (pthread_mutex_trylock(&lock) == 0) {
        if (*stock > 0) {
            *stock -= 1;
            move(*stock, into);
            got = 1;
            if (*stock == low_water) pthread_cond_signal(&wanted);
        }
        pthread_mutex_unlock(&lock);
    }
    atomic_fetch_add_explicit(got ? &taken : &missed, 1, memory_order_relaxed);
    return got;
}

struct setup { BIGNUM *kinv, *r; };

static void move_setup(unsigned index, void *into) {
    struct setup *out = into;
    out->kinv = kinvs[index];
    out->r = rs[index];
    kinvs[index] = NULL;
    rs[index] = NULL;
}

int credemu_p256_ahead_take(BIGNUM **kinv, BIGNUM **r) {
    struct setup out;
    if (!take(&setups, move_setup, &out)) return 0;
    *kinv = out.kinv;
    *r = out.r;
    return 1;
}

struct key_pair { uint8_t *scalar, *point; };

static void move_key_pair(unsigned index, void *into) {
    struct key_pair *out = into;
    memcpy(out->scalar, pairs[index].scalar, 32);
    memcpy(out->point, pairs[index].point, 65);
    OPENSSL_cleanse(&pairs[index], sizeof pairs[index]);
}

int credemu_p256_ahead_take_pair(uint8_t scalar[32], uint8_t point[65]) {
    struct key_pair out = {scalar, point};
    return take(&key_pairs, move_key_pair, &out);
}
