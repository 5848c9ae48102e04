/* bench_skiplist.c - the engine core timed from plain C, with no Python in
 * the loop: the floor that each Python call of the binding is compared
 * against (benchmarks/c/bench_vs_python.py runs the same operations through
 * the Python class). Compiled from the same zsl_*.c sources as the extension.
 *
 *   make bench-c          (or: cc -O3 -std=c11 -o bench bench_skiplist.c ../../src/ranked/engine/zsl_*.c)
 *   build/c/bench_skiplist [sizes] [calls] [runs]
 *
 * For each size n (comma-separated, default 10000,100000,1000000) a set of
 * members "player:<i>" with random integer scores in [0, 1e6] is built
 * (build = ns per insert in random order; bulk = ns per append of
 * pre-sorted pairs, the core of load()).
 * Then each operation runs `calls` times (add_new: n/5 at most, removed
 * again untimed), and the median ns per call over `runs` runs is printed,
 * twice: `free` lets the CPU overlap consecutive calls (throughput), while
 * `chained` makes each call wait for the previous one's result (latency:
 * what a caller making one call at a time, such as a Python loop, gets):
 *   add_new     hash + lookup miss + insert          (add, new member)
 *   add_update  hash + lookup + score change         (add, existing member)
 *   incr        hash + lookup + score += step        (incr)
 *   score       hash + lookup                        (score)
 *   index       hash + lookup + rank descent         (index)
 *   rank        hash + lookup + count-below descent  (rank, competition)
 *   at          descent by rank, read the pair       (at)
 *   top10       ranks 1..10, read the pairs          (range_by_index(0, 9))
 *   around      hash + lookup + rank descent with the window's walks, then
 *               the 11 pairs around the member       (range_around(m, 5, 5))
 */
#define _POSIX_C_SOURCE 199309L
#include "../../src/ranked/engine/zsl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXRUNS 51

static volatile double sink;

/* Monotonic clock in ns. */
static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* qsort order of doubles, ascending. */
static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n-1] (reorders v). */
static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

/* Random integer score in [0, 1e6], as the Python benchmark draws them. */
static double rand_score(void) { return (double)zsl_rand_below(1000001); }

typedef struct {
    size_t n;     /* members in the set */
    size_t calls; /* calls per run */
    char (*names)[24];
    size_t *lens;
} bench;

/* Read the pair of x the way the binding does before building objects. */
static double touch(const zsl_node *x) { return x->score + (double)(unsigned char)zsl_member(x)[0]; }

/* Read k pairs from 1-based rank `rank` on, as range_by_index does. */
static double walk(const zset *z, size_t rank, size_t k) {
    double acc = 0;
    const zsl_node *x = zset_by_rank(z, rank);
    for (size_t i = 0; i < k && x; i++, x = x->level[0].forward)
        acc += touch(x);
    return acc;
}

/* Always 0, but read at run time: multiplying by it keeps a data dependency
 * that the compiler cannot see through. */
static volatile size_t zero;

/* 0, computed from acc's bits, so that whatever uses it waits for acc. */
static size_t after(double acc) {
    uint64_t bits;
    memcpy(&bits, &acc, sizeof bits);
    return (size_t)bits * zero;
}

/* One timed run of operation `op` over b->calls calls; ns per call. The
 * random inputs are drawn before the clock starts. With `chained`, each call
 * picks its input only once the previous call's result is known, so no two
 * calls overlap in the CPU: the figure is one call's latency, as a caller
 * that makes one call at a time (a Python loop) meets it. Without, the CPU
 * overlaps the cache misses of consecutive calls: a throughput figure. */
static double run_op(zset *z, const bench *b, int op, int chained) {
    size_t calls = b->calls, n = b->n;
    size_t *pick = malloc(calls * sizeof *pick);
    double *val = malloc(calls * sizeof *val);
    char (*fresh)[24] = NULL;
    size_t *flen = NULL;
    for (size_t i = 0; i < calls; i++) {
        pick[i] = (size_t)zsl_rand_below(n);
        val[i] = op == 2 ? (double)zsl_rand_below(2001) - 1000.0 : rand_score();
    }
    if (op == 0) {
        calls = n / 5 < calls ? n / 5 : calls;
        fresh = malloc(calls * sizeof *fresh);
        flen = malloc(calls * sizeof *flen);
        static size_t serial;
        for (size_t i = 0; i < calls; i++)
            flen[i] = (size_t)snprintf(fresh[i], sizeof fresh[i], "player:%zu", n + serial++);
    }
    double acc = 0;
    double t0 = now_ns();
    for (size_t i = 0; i < calls; i++) {
        size_t k = chained ? pick[i] + after(acc) : pick[i];
        const char *m = b->names[k];
        size_t len = b->lens[k];
        switch (op) {
        case 0: { /* add_new; x->backward is known only once x is linked */
            size_t j = chained ? i + after(acc) : i;
            uint32_t h = zdict_hash(fresh[j], flen[j]);
            if (!zset_lookup(z, fresh[j], flen[j], h)) {
                zsl_node *x = zset_insert(z, val[j], fresh[j], flen[j], h);
                acc += 1 + (double)((uintptr_t)x->backward * zero);
            }
            break;
        }
        case 1:   /* add_update */
        case 2: { /* incr */
            uint32_t h = zdict_hash(m, len);
            zsl_node *x = zset_lookup(z, m, len, h);
            double now = op == 1 ? val[i] : x->score + val[i];
            if (now != x->score)
                zset_set_score(z, x, now, h);
            acc += now + (double)((uintptr_t)x->backward * zero); /* known once relinked */
            break;
        }
        case 3: /* score */
            acc += zset_find(z, m, len)->score;
            break;
        case 4: { /* index: the find and the rank in one call, as SortedSet.index */
            size_t r = 0;
            zset_find_rank(z, m, len, &r, NULL, 0, 0);
            acc += (double)r;
            break;
        }
        case 5: /* rank, competition */
            acc += (double)zset_count_below(z, zset_find(z, m, len)->score, 0);
            break;
        case 6: /* at */
            acc += touch(zset_by_rank(z, k + 1));
            break;
        case 7: /* top10 */
            acc += walk(z, 1 + after(acc), 10);
            break;
        case 8: { /* around: the member's rank, then ranks r-5 .. r+5, shifted at the ends */
            size_t r = 0;
            const zsl_node *x = zset_find_rank(z, m, len, &r, NULL, 5, 5);
            size_t width = z->length < 11 ? z->length : 11;
            size_t lo = r > 5 ? r - 5 : 1;
            if (lo > z->length - width + 1)
                lo = z->length - width + 1;
            for (size_t j = r - lo; j; j--)
                x = x->backward;
            for (size_t j = 0; j < width; j++, x = x->level[0].forward)
                acc += touch(x);
            break;
        }
        }
    }
    double t1 = now_ns();
    if (op == 0)
        for (size_t i = 0; i < calls; i++)
            zset_delete(z, zset_find(z, fresh[i], flen[i]));
    sink += acc;
    free(pick);
    free(val);
    free(fresh);
    free(flen);
    return (t1 - t0) / (double)calls;
}

static const char *const op_names[] = {"add_new", "add_update", "incr", "score", "index",
                                       "rank",    "at",         "top10", "around"};
#define NOPS 9

/* bench_skiplist [sizes] [calls] [runs]: one table per size, sizes
 * comma-separated. */
int main(int argc, char **argv) {
    size_t sizes[16], nsizes = 0;
    const char *list = argc > 1 ? argv[1] : "10000,100000,1000000";
    for (const char *p = list; *p && nsizes < 16;) {
        char *end;
        unsigned long long v = strtoull(p, &end, 10);
        if (end == p || v < 11) {
            fprintf(stderr, "sizes: comma-separated integers >= 11, got '%s'\n", list);
            return 2;
        }
        sizes[nsizes++] = (size_t)v;
        p = *end == ',' ? end + 1 : end;
    }
    size_t calls = argc > 2 ? (size_t)atol(argv[2]) : 20000;
    int runs = argc > 3 ? atoi(argv[3]) : 7;
    if (runs < 1 || runs > MAXRUNS)
        runs = 7;
    zsl_rand_init();
    for (size_t si = 0; si < nsizes; si++) {
        bench b = {sizes[si], calls, NULL, NULL};
        size_t n = b.n;
        b.names = malloc(n * sizeof *b.names);
        b.lens = malloc(n * sizeof *b.lens);
        double *scores = malloc(n * sizeof *scores);
        for (size_t i = 0; i < n; i++) {
            b.lens[i] = (size_t)snprintf(b.names[i], sizeof b.names[i], "player:%zu", i);
            scores[i] = rand_score();
        }
        /* build in random order, timed */
        zset z;
        if (zset_init(&z) < 0)
            return 2;
        double t0 = now_ns();
        for (size_t i = 0; i < n; i++)
            zset_insert(&z, scores[i], b.names[i], b.lens[i], zdict_hash(b.names[i], b.lens[i]));
        double build = (now_ns() - t0) / (double)n;
        double bytes = (double)z.bytes / (double)n;
        /* bulk append of the same pairs in order (the core of load()) */
        zset z2;
        if (zset_init(&z2) < 0 || zdict_reserve(&z2, n) < 0)
            return 2;
        zset_bulk bk;
        t0 = now_ns();
        zset_bulk_begin(&z2, &bk);
        for (const zsl_node *x = z.header->level[0].forward; x; x = x->level[0].forward)
            zset_bulk_append(&z2, &bk, zsl_node_new(&z2, x->score, zsl_member(x), x->mlen));
        zset_bulk_end(&z2, &bk);
        double bulk = (now_ns() - t0) / (double)n;
        zset_destroy(&z2);
        printf("n=%zu build %.0f ns/insert, bulk %.0f ns/pair, %.1f bytes/member\n", n, build,
               bulk, bytes);
        printf("  %-11s %8s %8s\n", "op", "free", "chained");
        for (int op = 0; op < NOPS; op++) {
            double t[MAXRUNS], tc[MAXRUNS];
            for (int r = 0; r < runs; r++) {
                t[r] = run_op(&z, &b, op, 0);
                tc[r] = run_op(&z, &b, op, 1);
            }
            printf("  %-11s %8.0f %8.0f ns\n", op_names[op], median(t, runs), median(tc, runs));
        }
        fflush(stdout);
        zset_destroy(&z);
        free(b.names);
        free(b.lens);
        free(scores);
    }
    return 0;
}
