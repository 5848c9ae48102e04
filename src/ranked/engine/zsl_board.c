/* zsl_board.c - the leaderboard's fused write (see zsl_board.h). Only the
 * public core API (zsl.h) is used: the rank styles are the same descents
 * SortedSet.rank makes, so both always agree. What the fusion saves is the
 * layers around them: one member lookup for the whole write, no rank
 * descent after a write that leaves the score (or its neighbourhood) as it
 * was. */
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

/* Would giving x `score` leave it between the same neighbours, alone in
 * its score group before and after? Then no member's rank changes in any
 * style (the test zset_set_score makes before updating in place). */
static int zboard_stays(const zsl_node *x, double score) {
    const zsl_node *p = x->backward;
    const zsl_node *q = x->level[0].forward;
    return (!p || (p->score < score && p->score != x->score)) &&
           (!q || (q->score > score && q->score != x->score));
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
        fresh = old + value + 0.0;
        break;
    default:
        fresh = old - value + 0.0;
        break;
    }
    if (!isfinite(fresh))
        return ZBOARD_NOT_FINITE;
    size_t before = zboard_rank(z, x, style, reverse);
    out->existed = 1;
    out->previous = old;
    out->previous_rank = before;
    out->score = fresh;
    out->changed = fresh != old;
    if (!out->changed) {
        out->rank = before;
        return ZBOARD_OK;
    }
    int stays = zboard_stays(x, fresh);
    zset_set_score(z, x, fresh);
    out->rank = stays ? before : zboard_rank(z, x, style, reverse);
    return ZBOARD_OK;
}
