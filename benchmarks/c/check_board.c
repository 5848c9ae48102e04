/* check_board.c - randomized self-test of the leaderboard's fused write
 * (zsl_board.c) against a naive array model: every operator, rank style and
 * direction, ties, -0.0, new and existing members, incr/decr overflow.
 * zset_check() runs after every write, and every member's rank in every
 * style is compared with the model now and then.
 * Build and run: make check-c (also run by `make valgrind`). Exit status 0
 * when every comparison held. */
#include "../../src/ranked/backends/native/zsl_board.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    double score;
    char m[8];
    size_t len;
} entry;

static entry model[512];
static size_t nmodel;

/* Index of member m[0:len] in the model, or -1. */
static long model_find(const char *m, size_t len) {
    for (size_t i = 0; i < nmodel; i++)
        if (model[i].len == len && memcmp(model[i].m, m, len) == 0)
            return (long)i;
    return -1;
}

/* Does a come before b in the board's order (best first when reverse)? */
static int model_before(const entry *a, const entry *b, int reverse) {
    if (a->score != b->score)
        return reverse ? a->score > b->score : a->score < b->score;
    int c = zsl_cmp_members(a->m, a->len, b->m, b->len);
    return reverse ? c > 0 : c < 0;
}

/* The naive rank of model[i] in style/direction: count, never search. */
static size_t model_rank(size_t i, int style, int reverse) {
    const entry *x = &model[i];
    size_t r = 1;
    for (size_t j = 0; j < nmodel; j++) {
        const entry *y = &model[j];
        if (j == i)
            continue;
        if (style == ZBOARD_UNIQUE) {
            r += (size_t)model_before(y, x, reverse);
        } else if (style == ZBOARD_COMPETITION) {
            r += (size_t)(reverse ? y->score > x->score : y->score < x->score);
        } else { /* dense: y counts once per distinct better score */
            int better = reverse ? y->score > x->score : y->score < x->score;
            int first = 1;
            for (size_t k = 0; k < j && better; k++)
                if (k != i && model[k].score == y->score)
                    first = 0;
            r += (size_t)(better && first);
        }
    }
    return r;
}

#define EXPECT(cond, ...)                                  \
    do {                                                   \
        if (!(cond)) {                                     \
            fprintf(stderr, "step %ld: ", step);           \
            fprintf(stderr, __VA_ARGS__);                  \
            fputc('\n', stderr);                           \
            zset_destroy(&z);                              \
            return 1;                                      \
        }                                                  \
    } while (0)

/* check_board [steps]: 0 when every step agrees with the model, else 1. */
int main(int argc, char **argv) {
    long steps = argc > 1 ? atol(argv[1]) : 100000;
    long refused[2] = {0, 0}; /* not finite, not exact */
    zset z;
    char msg[256];
    if (zset_init(&z) < 0)
        return 2;
    for (long step = 0; step < steps; step++) {
        char m[8];
        size_t len = (size_t)snprintf(m, sizeof m, "m%u", (unsigned)zsl_rand_below(300));
        int op = (int)zsl_rand_below(4);
        int style = (int)zsl_rand_below(3);
        int reverse = (int)zsl_rand_below(2);
        double value = (double)((int)zsl_rand_below(30) - 15);
        unsigned pick = (unsigned)zsl_rand_below(40);
        if (pick == 0)
            value = -0.0;
        else if (pick == 1)
            value = DBL_MAX; /* incr/decr of an existing member may overflow */
        else if (pick == 2)
            value = 0.5;
        else if (pick == 3)
            value = 0x1p53; /* at 2^53 an incr of 1 would round: it must be refused */
        long at = model_find(m, len);
        double old = at >= 0 ? model[at].score : 0.0;
        size_t before = at >= 0 ? model_rank((size_t)at, style, reverse) : 0;
        double want;
        if (at < 0)
            want = (op == ZBOARD_DECR ? -value : value) + 0.0;
        else if (op == ZBOARD_BEST)
            want = (reverse ? value > old : value < old) ? value + 0.0 : old;
        else if (op == ZBOARD_SET)
            want = value + 0.0;
        else
            want = (op == ZBOARD_INCR ? old + value : old - value) + 0.0;
        /* The model's exactness test (not the writer's two-sum): s = a + b rounded is
         * exact iff s - a == b and s - b == a, as the subtraction by the larger
         * operand is itself exact (the Fast2Sum lemma). */
        double delta = op == ZBOARD_INCR ? value : -value;
        int inexact = at >= 0 && op >= ZBOARD_INCR && isfinite(want) && fabs(want) >= 0x1p53 &&
                      !(want - old == delta && want - delta == old);
        zboard_result out;
        uint64_t mod = z.modcount;
        int rc = zboard_submit(&z, m, len, zdict_hash(m, len), value, op, style, reverse, &out);
        if (!isfinite(want) || inexact) {
            EXPECT(rc == (inexact ? ZBOARD_INEXACT : ZBOARD_NOT_FINITE),
                   "refusal not reported (rc %d)", rc);
            EXPECT(z.modcount == mod, "a refused write changed the set");
            refused[inexact]++;
            continue;
        }
        EXPECT(rc == ZBOARD_OK, "rc %d", rc);
        EXPECT(zset_check(&z, msg, sizeof msg) == 0, "%s", msg);
        EXPECT(out.existed == (at >= 0), "existed");
        EXPECT(out.score == want && !signbit(out.score) == !signbit(want), "score %g != %g",
               out.score, want);
        EXPECT(!signbit(zset_find(&z, m, len)->score) || zset_find(&z, m, len)->score != 0,
               "-0.0 stored");
        if (at < 0) {
            EXPECT(out.changed && out.previous_rank == 0, "new member");
            at = (long)nmodel;
            model[nmodel].score = want;
            memcpy(model[nmodel].m, m, len);
            model[nmodel++].len = len;
        } else {
            EXPECT(out.previous == old, "previous score");
            EXPECT(out.previous_rank == before, "previous rank %zu != %zu (style %d rev %d)",
                   out.previous_rank, before, style, reverse);
            EXPECT(out.changed == (want != old), "changed");
            EXPECT(out.changed || z.modcount == mod, "an unchanged write changed the set");
            model[at].score = want;
        }
        size_t after = model_rank((size_t)at, style, reverse);
        EXPECT(out.rank == after, "rank %zu != %zu (style %d rev %d op %d)", out.rank, after,
               style, reverse, op);
        if (step % 997 == 0) { /* every member, every style, both directions */
            for (size_t i = 0; i < nmodel; i++) {
                zsl_node *x = zset_find(&z, model[i].m, model[i].len);
                EXPECT(x && x->score == model[i].score, "model and set disagree");
                for (int s = 0; s < 3; s++)
                    for (int rv = 0; rv < 2; rv++)
                        EXPECT(zboard_rank(&z, x, s, rv) == model_rank(i, s, rv),
                               "zboard_rank style %d rev %d", s, rv);
            }
        }
        if (zsl_rand_below(5000) == 0) { /* start over now and then: small sets too */
            zset_clear(&z);
            nmodel = 0;
        }
    }
    zset_destroy(&z);
    printf("check_board: %ld steps OK (%ld refused as not finite, %ld as not exact)\n", steps,
           refused[0], refused[1]);
    return 0;
}
