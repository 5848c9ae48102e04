/* bench_skiplist.c - the engine core timed from plain C, with no Python in
 * the loop: the floor that the Python binding's per-call cost is compared
 * against. Compiled from the same zsl_*.c sources as the extension.
 *
 *   make bench-c          (or: cc -O3 -std=c11 -o bench bench_skiplist.c ../../src/ranked/engine/zsl_*.c)
 *
 * For each size n: insert = building a set of n members "player:<i>" with
 * random scores, in ns per insert; rank = 1-based rank (hash lookup + one
 * descent) of n random members of the full set; score = hash lookup only.
 * Each figure is the median of RUNS runs. */
#define _POSIX_C_SOURCE 199309L
#include "../../src/ranked/engine/zsl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RUNS 5

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

int main(int argc, char **argv) {
    static const size_t sizes[] = {10000, 100000, 1000000};
    size_t nsizes = argc > 1 ? (size_t)atoi(argv[1]) : 3;
    zsl_rand_init();
    printf("%-9s %12s %12s %12s %14s\n", "n", "insert ns", "rank ns", "score ns", "bytes/member");
    for (size_t si = 0; si < nsizes && si < 3; si++) {
        size_t n = sizes[si];
        char (*names)[16] = malloc(n * sizeof *names);
        size_t *lens = malloc(n * sizeof *lens);
        double *scores = malloc(n * sizeof *scores);
        size_t *probe = malloc(n * sizeof *probe);
        double ins[RUNS], rnk[RUNS], sco[RUNS], bytes = 0;
        volatile size_t sink = 0;
        for (size_t i = 0; i < n; i++)
            lens[i] = (size_t)snprintf(names[i], sizeof names[i], "player:%zu", i);
        for (int run = 0; run < RUNS; run++) {
            for (size_t i = 0; i < n; i++) {
                scores[i] = (double)(zsl_rand_next() >> 11) * 0x1p-53 * 1e6;
                probe[i] = (size_t)zsl_rand_below(n);
            }
            zset z;
            if (zset_init(&z) < 0)
                return 2;
            double t0 = now_ns();
            for (size_t i = 0; i < n; i++)
                zset_insert(&z, scores[i], names[i], lens[i], zdict_hash(names[i], lens[i]));
            double t1 = now_ns();
            for (size_t i = 0; i < n; i++) {
                size_t k = probe[i];
                zsl_node *x = zset_find(&z, names[k], lens[k]);
                sink += zset_rank(&z, x, NULL);
            }
            double t2 = now_ns();
            for (size_t i = 0; i < n; i++) {
                size_t k = probe[i];
                sink += zset_find(&z, names[k], lens[k]) != NULL;
            }
            double t3 = now_ns();
            ins[run] = (t1 - t0) / (double)n;
            rnk[run] = (t2 - t1) / (double)n;
            sco[run] = (t3 - t2) / (double)n;
            bytes = (double)z.bytes / (double)n;
            zset_destroy(&z);
        }
        printf("%-9zu %12.0f %12.0f %12.0f %14.1f\n", n, median(ins, RUNS), median(rnk, RUNS),
               median(sco, RUNS), bytes);
        (void)sink;
        free(names);
        free(lens);
        free(scores);
        free(probe);
    }
    return 0;
}
