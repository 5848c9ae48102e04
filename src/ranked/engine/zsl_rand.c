/* zsl_rand.c - process-wide randomness for the engine: a splitmix64 PRNG
 * (tower heights, random members) and the secret keys of the member-table
 * hash. Both are seeded once per process from the OS, so neither tower
 * shapes nor hash slots can be predicted by whoever picks member names. */
#define _GNU_SOURCE
#include "zsl.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#include <sys/random.h>
#endif

static uint64_t rand_state;
static uint64_t hash_k[4]; /* secret keys of zsl_hash */
static int rand_ready;

/* One splitmix64 step on *state: a Weyl increment followed by a bijective
 * mix; passes BigCrush and needs one word of state. */
static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Seed the PRNG and the hash key from getrandom(), falling back to the clock
 * and pid. Safe to call many times; only the first call seeds. */
void zsl_rand_init(void) {
    if (rand_ready)
        return;
    uint64_t seed[5] = {0, 0, 0, 0, 0};
    int ok = 0;
#if defined(__GLIBC__)
    ok = getrandom(seed, sizeof seed, 0) == (ssize_t)sizeof seed;
#endif
    if (!ok) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t mix = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^
                       ((uint64_t)getpid() << 40) ^ (uint64_t)(uintptr_t)&seed;
        for (int i = 0; i < 5; i++)
            seed[i] = splitmix64(&mix);
    }
    rand_state = seed[0];
    for (int i = 0; i < 4; i++) /* odd keys: a zero key word would weaken a fold */
        hash_k[i] = seed[i + 1] | 1;
    rand_ready = 1;
}

/* 64 random bits. Not thread-safe: the binding runs under the GIL and the
 * benchmark is single-threaded. */
uint64_t zsl_rand_next(void) { return splitmix64(&rand_state); }

/* Uniform integer in [0, n) for n > 0, by rejecting the short top bucket. */
uint64_t zsl_rand_below(uint64_t n) {
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t r;
    do {
        r = zsl_rand_next();
    } while (r >= limit);
    return r % n;
}

/* Unaligned little-endian-ish loads; the byte order only changes which
 * hash values come out, never their quality, and hashes never leave the
 * process. */
static inline uint64_t load64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* 4 bytes at p as a host-order integer, any alignment (as load64). */
static inline uint64_t load32(const unsigned char *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* Full 64x64 -> 128-bit product of a and b, folded to 64 bits by xoring
 * its halves: every input bit reaches the middle output bits. */
static inline uint64_t fold_mul(uint64_t a, uint64_t b) {
#if defined(__SIZEOF_INT128__)
    __uint128_t p = (__uint128_t)a * b;
    return (uint64_t)p ^ (uint64_t)(p >> 64);
#else
    uint64_t al = (uint32_t)a, ah = a >> 32, bl = (uint32_t)b, bh = b >> 32;
    uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
    uint64_t mid = (ll >> 32) + (uint32_t)lh + (uint32_t)hl;
    uint64_t lo = (mid << 32) | (uint32_t)ll;
    uint64_t hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
    return lo ^ hi;
#endif
}

/* Seeded multiply-fold hash of data[0:len] (data may be NULL only when len
 * == 0). Each 16-byte block is xored with two secret words and folded
 * through one 128-bit multiply into the running state; the last 1..16 bytes
 * are read as two (possibly overlapping) words, and the length is mixed in
 * up front because overlapping reads alone would not separate lengths. Two
 * more secret-keyed folds finish it. Keys come from getrandom(), so an
 * attacker who picks member names cannot aim them at one table slot; for
 * the short members of a leaderboard this costs a few ns where SipHash-1-3
 * cost ~30. */
uint64_t zsl_hash(const void *data, size_t len) {
    const unsigned char *p = data;
    uint64_t h = hash_k[0] ^ fold_mul((uint64_t)len ^ hash_k[1], 0x9E3779B97F4A7C15ull);
    size_t rest = len;
    while (rest > 16) {
        h = fold_mul(load64(p) ^ hash_k[1], load64(p + 8) ^ h);
        p += 16;
        rest -= 16;
    }
    uint64_t a = 0, b = 0;
    if (rest >= 8) {
        a = load64(p);
        b = load64(p + rest - 8);
    } else if (rest >= 4) {
        a = load32(p);
        b = load32(p + rest - 4);
    } else if (rest > 0) {
        a = ((uint64_t)p[0] << 16) | ((uint64_t)p[rest >> 1] << 8) | p[rest - 1];
    }
    h = fold_mul(a ^ hash_k[2], b ^ h);
    return fold_mul(h ^ hash_k[3], hash_k[1] | 1);
}

/* Bytes the allocator really holds for block p that was asked for
 * `requested` bytes: with glibc the usable size plus the chunk's size word,
 * elsewhere the request itself. */
size_t zsl_alloc_size(void *p, size_t requested) {
#if defined(__GLIBC__)
    (void)requested;
    return malloc_usable_size(p) + sizeof(size_t);
#else
    (void)p;
    return requested;
#endif
}
