/* check_skiplist.c - randomized self-test of the engine core against a
 * naive sorted-array model; runs zset_check() after every operation.
 * Build and run: make check-c (also what `make valgrind` runs under
 * memcheck). Exit status 0 when every comparison held. */
#include "../../src/ranked/engine/zsl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    double score;
    char m[8];
    size_t len;
} entry;

static entry model[4096];
static size_t nmodel;

/* qsort order of model entries: by score, then member bytes. */
static int entry_cmp(const void *a, const void *b) {
    const entry *x = a, *y = b;
    if (x->score < y->score) return -1;
    if (x->score > y->score) return 1;
    return zsl_cmp_members(x->m, x->len, y->m, y->len);
}

/* Index of member m[0:len] in the model, or -1. */
static long model_find(const char *m, size_t len) {
    for (size_t i = 0; i < nmodel; i++)
        if (model[i].len == len && memcmp(model[i].m, m, len) == 0) return (long)i;
    return -1;
}

#define EXPECT(cond, ...)                                  \
    do {                                                   \
        if (!(cond)) {                                     \
            fprintf(stderr, "step %ld: ", step);           \
            fprintf(stderr, __VA_ARGS__);                  \
            fputc('\n', stderr);                           \
            return 1;                                      \
        }                                                  \
    } while (0)

/* Start z empty and insert members <prefix>0 .. <prefix>n-1 (%03u-padded
 * when pad) with random integer scores below `scores`. 0, or 1 when
 * memory runs out. */
static int fill(zset *z, unsigned n, const char *prefix, int pad, unsigned scores) {
    char m[16];
    if (zset_init(z) < 0) return 1;
    for (unsigned i = 0; i < n; i++) {
        size_t len = (size_t)snprintf(m, sizeof m, pad ? "%s%03u" : "%s%u", prefix, i);
        if (!zset_insert(z, (double)zsl_rand_below(scores), m, len, zdict_hash(m, len))) return 1;
    }
    return 0;
}

/* A set large enough that tall nodes get chunks of their own, then mass
 * removals (which compact the slab into one chunk split the same way), then
 * growth again; zset_check and member lookups after each phase. */
static int check_large(void) {
    enum { N = 20000, KEEP = 3000 };
    static unsigned order[N];
    zset z;
    char m[16], msg[256];
    long step = 0;
    EXPECT(fill(&z, N, "L", 0, 5000) == 0, "oom");
    for (unsigned i = 0; i < N; i++)
        order[i] = i;
    EXPECT(z.slab.bump_tall != NULL, "a large set did not give tall nodes their own chunks");
    EXPECT(zset_check(&z, msg, sizeof msg) == 0, "after growth: %s", msg);
    for (unsigned i = N - 1; i > 0; i--) { /* removal order: a shuffle */
        unsigned j = (unsigned)zsl_rand_below(i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (unsigned i = 0; i < N - KEEP; i++, step++) {
        size_t len = (size_t)snprintf(m, sizeof m, "L%u", order[i]);
        zsl_node *n = zset_find(&z, m, len);
        EXPECT(n, "member %s lost", m);
        zset_delete(&z, n);
        if (i % 2000 == 0)
            EXPECT(zset_check(&z, msg, sizeof msg) == 0, "during removals: %s", msg);
    }
    EXPECT(zset_check(&z, msg, sizeof msg) == 0, "after removals: %s", msg);
    EXPECT(z.slab.held < (size_t)N * 40, "removals did not give memory back");
    for (unsigned i = N - KEEP; i < N; i++) {
        size_t len = (size_t)snprintf(m, sizeof m, "L%u", order[i]);
        EXPECT(zset_find(&z, m, len), "kept member %s lost", m);
    }
    for (unsigned i = N; i < N + N / 2; i++) {
        size_t len = (size_t)snprintf(m, sizeof m, "L%u", i);
        EXPECT(zset_insert(&z, (double)zsl_rand_below(5000), m, len, zdict_hash(m, len)), "oom");
    }
    EXPECT(zset_check(&z, msg, sizeof msg) == 0, "after regrowth: %s", msg);
    printf("check_skiplist: large set ok, final length %zu, %zu bytes\n", z.length, z.bytes);
    zset_destroy(&z);
    return 0;
}

/* Every member of a small set with few distinct scores moved to every
 * score from below the lowest to above the highest (so to each side of
 * every node, into every score group and out of it, past tall nodes and
 * onto them), by zset_move with and without spots; after each move
 * zset_check, the member's rank against a count, and the spots against
 * zset_rank; then the member goes back. */
static int check_moves(void) {
    enum { N = 120 };
    zset z;
    char m[16], msg[256];
    long step = 0;
    EXPECT(fill(&z, N, "v", 1, 8) == 0, "oom");
    for (unsigned i = 0; i < N; i++) {
        size_t len = (size_t)snprintf(m, sizeof m, "v%03u", i);
        zsl_node *x = zset_find(&z, m, len);
        uint32_t h = zdict_hash(m, len);
        double home = x->score;
        for (int s = -1; s <= 8; s++, step++) {
            zset_spot was, now;
            size_t old = zset_rank(&z, x, NULL);
            int spots = s & 1;
            zset_move(&z, x, (double)s, h, spots ? &was : NULL, spots ? &now : NULL);
            EXPECT(zset_check(&z, msg, sizeof msg) == 0, "move to %d: %s", s, msg);
            size_t before = 0;
            for (const zsl_node *y = z.header->level[0].forward; y; y = y->level[0].forward)
                before += zsl_cmp(y, x->score, m, len) < 0;
            size_t dr, r = zset_rank(&z, x, &dr);
            EXPECT(r == before + 1, "rank after move %zu != %zu", r, before + 1);
            EXPECT(!spots || (was.rank == old && now.rank == r && now.drank == dr), "spots");
            zset_move(&z, x, home, h, NULL, NULL);
            EXPECT(zset_check(&z, msg, sizeof msg) == 0, "move back: %s", msg);
            EXPECT(zset_rank(&z, x, NULL) == old, "rank after moving back");
        }
    }
    printf("check_skiplist: %ld moves ok\n", step);
    zset_destroy(&z);
    return 0;
}

/* check_skiplist [steps]: 0 when every invariant and model check holds, else 1. */
int main(int argc, char **argv) {
    long steps = argc > 1 ? atol(argv[1]) : 200000;
    zset z;
    char msg[256];
    if (zset_init(&z) < 0) return 2;
    for (long step = 0; step < steps; step++) {
        int op = (int)zsl_rand_below(100);
        char m[8];
        size_t len = (size_t)snprintf(m, sizeof m, "m%u", (unsigned)zsl_rand_below(600));
        double score = (double)((int)zsl_rand_below(40) - 20);
        if (zsl_rand_below(10) == 0) score = -0.0;
        /* scores that round to one float, so the table's score hint ties */
        if (zsl_rand_below(10) == 1) score += (double)zsl_rand_below(4) * 1e-9;
        if (zsl_rand_below(50) == 2) score = (score < 0 ? -1e300 : 1e300) * (1 + (double)zsl_rand_below(3));
        long at = model_find(m, len);
        zsl_node *n = zset_find(&z, m, len);
        EXPECT((at >= 0) == (n != NULL), "find disagrees");
        size_t fr = 0, fdr = 0;
        EXPECT(zset_find_rank(&z, m, len, &fr, &fdr, zsl_rand_below(3), zsl_rand_below(3)) == n,
               "find_rank disagrees with find");
        size_t dr0 = 0, r0 = n ? zset_rank(&z, n, &dr0) : 0;
        EXPECT(!n || (fr == r0 && fdr == dr0), "find_rank's rank %zu/%zu", fr, fdr);
        if (op < 45) {                                  /* add or update */
            if (at < 0) {
                EXPECT(zset_insert(&z, score, m, len, zdict_hash(m, len)), "oom");
                model[nmodel].score = score;
                memcpy(model[nmodel].m, m, len);
                model[nmodel++].len = len;
            } else if (n->score != score) {
                zset_set_score(&z, n, score, zdict_hash(m, len));
                model[at].score = score;
            }
        } else if (op < 65) {                           /* delete */
            if (at >= 0) {
                zset_delete(&z, n);
                model[at] = model[--nmodel];
            }
        } else if (op < 68 && nmodel) {                 /* rank range delete */
            size_t a = 1 + (size_t)zsl_rand_below(nmodel);
            size_t b = a + (size_t)zsl_rand_below(4);
            if (b > nmodel) b = nmodel;
            qsort(model, nmodel, sizeof(entry), entry_cmp);
            EXPECT(zset_delete_rank_range(&z, a, b) == b - a + 1, "range delete count");
            memmove(model + a - 1, model + b, (nmodel - b) * sizeof(entry));
            nmodel -= b - a + 1;
        } else if (op < 69) {                           /* clear + bulk reload */
            qsort(model, nmodel, sizeof(entry), entry_cmp);
            zset_clear(&z);
            zset_bulk b;
            EXPECT(zdict_reserve(&z, nmodel) == 0, "oom");
            zset_bulk_begin(&z, &b);
            for (size_t i = 0; i < nmodel; i++)
                zset_bulk_append(&z, &b, zsl_node_new(&z, model[i].score, model[i].m, model[i].len));
            zset_bulk_end(&z, &b);
        } else if (at >= 0) {                           /* reads */
            qsort(model, nmodel, sizeof(entry), entry_cmp);
            at = model_find(m, len);
            size_t dr, r = zset_rank(&z, n, &dr);
            size_t less = 0, groups = 0, lessg = 0;
            for (size_t i = 0; i < nmodel; i++) {
                int starts = i == 0 || model[i - 1].score != model[i].score;
                groups += (size_t)starts;
                if (model[i].score < n->score) { less++; lessg += (size_t)starts; }
            }
            EXPECT(r == (size_t)at + 1, "rank %zu != %ld", r, at + 1);
            size_t wr = 0;
            zset_find_rank(&z, m, len, &wr, NULL, zsl_rand_below(80), zsl_rand_below(80));
            EXPECT(wr == r, "rank with walks");
            EXPECT(dr == lessg + 1, "dense rank %zu != %zu", dr, lessg + 1);
            EXPECT(groups == z.groups, "groups");
            EXPECT(zset_count_below(&z, n->score, 0) == less, "count_below");
            EXPECT(zset_by_rank(&z, r) == n, "by_rank");
            zsl_node *after = zset_seek_after(&z, n->score, m, len);
            EXPECT(after == n->level[0].forward, "seek_after");
            EXPECT(zset_seek_before(&z, n->score, m, len) == n->backward, "seek_before");
        }
        if (zset_check(&z, msg, sizeof msg) < 0) {
            fprintf(stderr, "step %ld op %d: %s\n", step, op, msg);
            return 1;
        }
    }
    printf("check_skiplist: %ld steps ok, final length %zu, %zu groups, %zu bytes\n", steps,
           z.length, z.groups, z.bytes);
    zset_destroy(&z);
    return check_large() || check_moves() ? 1 : 0;
}
