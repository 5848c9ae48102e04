/* zsl_rand.c - process-wide randomness for the engine: a splitmix64 PRNG
 * (tower heights, random members) and the secret SipHash key of the member
 * table. Both are seeded once per process from the OS, so neither tower
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
static uint64_t sip_k0, sip_k1;
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
    uint64_t seed[3] = {0, 0, 0};
    int ok = 0;
#if defined(__GLIBC__)
    ok = getrandom(seed, sizeof seed, 0) == (ssize_t)sizeof seed;
#endif
    if (!ok) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t mix = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^
                       ((uint64_t)getpid() << 40) ^ (uint64_t)(uintptr_t)&seed;
        seed[0] = splitmix64(&mix);
        seed[1] = splitmix64(&mix);
        seed[2] = splitmix64(&mix);
    }
    rand_state = seed[0];
    sip_k0 = seed[1];
    sip_k1 = seed[2];
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

#define ROTL64(x, b) (((x) << (b)) | ((x) >> (64 - (b))))

/* One SipRound on the four state words (add-rotate-xor network). */
#define SIPROUND(v0, v1, v2, v3)                                            \
    do {                                                                    \
        v0 += v1; v1 = ROTL64(v1, 13); v1 ^= v0; v0 = ROTL64(v0, 32);       \
        v2 += v3; v3 = ROTL64(v3, 16); v3 ^= v2;                            \
        v0 += v3; v3 = ROTL64(v3, 21); v3 ^= v0;                            \
        v2 += v1; v1 = ROTL64(v1, 17); v1 ^= v2; v2 = ROTL64(v2, 32);       \
    } while (0)

static inline uint64_t load_le64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* SipHash with 1 compression and 3 finalisation rounds (Aumasson and
 * Bernstein's keyed PRF, the variant CPython uses for str hashing), keyed
 * with the process secret. Reads len bytes of data; data may be NULL only
 * when len == 0. */
uint64_t zsl_siphash13(const void *data, size_t len) {
    const unsigned char *p = data;
    uint64_t v0 = sip_k0 ^ 0x736f6d6570736575ull;
    uint64_t v1 = sip_k1 ^ 0x646f72616e646f6dull;
    uint64_t v2 = sip_k0 ^ 0x6c7967656e657261ull;
    uint64_t v3 = sip_k1 ^ 0x7465646279746573ull;
    size_t blocks = len / 8;
    for (size_t i = 0; i < blocks; i++) {
        uint64_t m = load_le64(p + 8 * i);
        v3 ^= m;
        SIPROUND(v0, v1, v2, v3);
        v0 ^= m;
    }
    uint64_t last = (uint64_t)(len & 0xff) << 56;
    const unsigned char *tail = p + 8 * blocks;
    for (size_t i = 0; i < (len & 7); i++)
        last |= (uint64_t)tail[i] << (8 * i);
    v3 ^= last;
    SIPROUND(v0, v1, v2, v3);
    v0 ^= last;
    v2 ^= 0xff;
    SIPROUND(v0, v1, v2, v3);
    SIPROUND(v0, v1, v2, v3);
    SIPROUND(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
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
