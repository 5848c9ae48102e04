/* zsl_board.c - the leaderboard's fused write (see zsl_board.h). Only the
 * public core API (zsl.h) is used: the rank styles are the same descents
 * SortedSet.rank makes, or are read off the two descents that move a node
 * (zset_move), which reach the same nodes. What the fusion saves: one member
 * lookup for the whole write, no rank descent after a write that leaves the
 * score (or its neighbourhood) as it was, and none at all for a move unless
 * a competition rank falls inside a tie run. */
#ifdef RANKED_ZSET_CAPI
#include "native.h" /* in the native module: the core through the engine's C API */
#endif
#include "zsl_board.h"

#include <math.h>

size_t zboard_rank(const zset *z, const zsl_node *x, int style, int reverse) {
    if (style == ZBOARD_COMPETITION)
        return reverse ? 1 + z->length - zset_count_below(z, x->score, 1)
                       : 1 + zset_count_below(z, x->score, 0);
    size_t dr;
    size_t r = zset_rank(z, x, &dr);
    if (style == ZBOARD_DENSE)
        return reverse ? z->groups - dr + 1 : dr;
    return reverse ? z->length - r + 1 : r;
}

/* The rank of a spot in `style`, or 0 when the spot cannot tell: a
 * competition rank counts the better scores, which the spot's position gives
 * only when x is at the better end of its score group. */
static size_t zboard_spot_rank(const zset_spot *s, int style, int reverse) {
    if (style == ZBOARD_DENSE)
        return reverse ? s->groups - s->drank + 1 : s->drank;
    if (style == ZBOARD_COMPETITION && !(reverse ? s->last : s->first))
        return 0;
    return reverse ? s->length - s->rank + 1 : s->rank;
}

/* Would giving x `score` leave it between the same neighbours, alone in
 * its score group before and after? Then no member's rank changes in any
 * style (the test zset_set_score makes before updating in place). */
static int zboard_stays(const zsl_node *x, double score) {
    const zsl_node *p = x->backward;
    const zsl_node *q = x->level[0].forward;
    return (!p || (p->score < score && p->score != x->score)) &&
           (!q || (q->score > score && q->score != x->score));
}

/* Whether sum, the float64 result of a + b (all finite), is the exact sum
 * where it has to be: always below 2^53 in magnitude, else when Knuth's
 * two-sum finds no rounding error (six IEEE additions; the same test as
 * ranked.backends.base.incremented and the Lua submit script). */
static int zboard_exact_sum(double a, double b, double sum) {
    if (sum > -0x1p53 && sum < 0x1p53)
        return 1;
    double back = sum - a;
    return (a - (sum - back)) + (b - back) == 0.0;
}

int zboard_submit(zset *z, const char *m, size_t len, uint32_t h, double value, int op,
                  int style, int reverse, zboard_result *out) {
    zsl_node *x = zset_lookup(z, m, len, h);
    if (!x) {
        double fresh = (op == ZBOARD_DECR ? -value : value) + 0.0;
        x = zset_insert(z, fresh, m, len, h);
        if (!x)
            return ZBOARD_NOMEM;
        out->score = fresh;
        out->previous = 0.0;
        out->previous_rank = 0;
        out->existed = 0;
        out->changed = 1;
        out->rank = zboard_rank(z, x, style, reverse);
        return ZBOARD_OK;
    }
    double old = x->score;
    double fresh;
    switch (op) {
    case ZBOARD_BEST:
        fresh = (reverse ? value > old : value < old) ? value + 0.0 : old;
        break;
    case ZBOARD_SET:
        fresh = value + 0.0;
        break;
    case ZBOARD_INCR:
        fresh = old + value;
        break;
    default:
        fresh = old - value;
        break;
    }
    if (!isfinite(fresh))
        return ZBOARD_NOT_FINITE;
    if (op >= ZBOARD_INCR) {
        if (!zboard_exact_sum(old, op == ZBOARD_INCR ? value : -value, fresh))
            return ZBOARD_INEXACT;
        fresh += 0.0;
    }
    out->existed = 1;
    out->previous = old;
    out->score = fresh;
    out->changed = fresh != old;
    if (!out->changed || zboard_stays(x, fresh)) {
        out->previous_rank = out->rank = zboard_rank(z, x, style, reverse);
        if (out->changed)
            zset_set_score(z, x, fresh, h); /* in place: no rank changes */
        return ZBOARD_OK;
    }
    /* A move: both ranks come from its two descents where the spots tell. A
     * competition rank inside a tie run takes one descent of its own. */
    zset_spot was, now;
    const zsl_node *p = x->backward, *q = x->level[0].forward;
    int told = !(style == ZBOARD_COMPETITION &&
                 (reverse ? q && q->score == old : p && p->score == old));
    size_t before = told ? 0 : zboard_rank(z, x, style, reverse);
    zset_move(z, x, fresh, h, &was, &now);
    out->previous_rank = told ? zboard_spot_rank(&was, style, reverse) : before;
    size_t after = zboard_spot_rank(&now, style, reverse);
    out->rank = after ? after : zboard_rank(z, x, style, reverse);
    return ZBOARD_OK;
}
