/* zsl_board.h - the leaderboard's fused write on the engine core: update a
 * member under a board operator and report its score and rank before and
 * after, in one call that takes the member's node once. Plain C11, no
 * Python.h (the plain-C checker benchmarks/c/check_board.c builds it too).
 *
 * Ranks are 1-based, computed exactly as the binding's SortedSet.rank does:
 * reverse means "higher scores first" (the order of a higher-is-better
 * board), and
 *   unique       position in (score, member) order (ZRANK / ZREVRANK + 1);
 *   competition  1 + members with a strictly better score (1, 1, 3);
 *   dense        1 + distinct strictly better scores      (1, 1, 2).
 */
#ifndef RANKED_ZSL_BOARD_H
#define RANKED_ZSL_BOARD_H

#include "zsl.h"

enum { ZBOARD_BEST = 0, ZBOARD_SET = 1, ZBOARD_INCR = 2, ZBOARD_DECR = 3 };
enum { ZBOARD_UNIQUE = 0, ZBOARD_COMPETITION = 1, ZBOARD_DENSE = 2 };

/* zboard_submit's return values */
#define ZBOARD_OK 0
#define ZBOARD_NOMEM (-1)      /* out of memory: the zset is unchanged */
#define ZBOARD_NOT_FINITE (-2) /* incr/decr would leave a non-finite score: unchanged */
#define ZBOARD_INEXACT (-3)    /* incr/decr result of magnitude >= 2^53 not exact: unchanged */

typedef struct zboard_result {
    double score;         /* the stored score after the write */
    double previous;      /* the stored score before (0.0 when !existed) */
    size_t rank;          /* 1-based rank after */
    size_t previous_rank; /* 1-based rank before (0 when !existed) */
    int existed;          /* the member was there before */
    int changed;          /* the stored score changed (always 1 for a new member) */
} zboard_result;

/* 1-based rank of node x of z in `style` (ZBOARD_*), best first when
 * `reverse`. O(log n): one descent. */
size_t zboard_rank(const zset *z, const zsl_node *x, int style, int reverse);

/* Submit `value` (finite, guaranteed by the caller) for member m[0:len]
 * (h = zdict_hash(m, len)) under operator `op` (ZBOARD_*): a new member gets
 * value (decr: -value); an existing one gets best-of (higher wins when
 * `reverse`, else lower), value (set), old + value (incr) or old - value
 * (decr). An incr/decr result of magnitude 2^53 or more must be the exact
 * sum (zboard_exact_sum; ranked.backends.base.incremented). Every new score
 * is stored as `score + 0.0`, so no -0.0 is ever written. *out gets both
 * scores and both ranks; an unchanged score keeps its rank without a second
 * descent, and a score that moves the member reads both ranks off the move's
 * two descents (zset_move), except a competition rank inside a tie run,
 * which takes one more. Returns ZBOARD_OK, or ZBOARD_NOMEM /
 * ZBOARD_NOT_FINITE / ZBOARD_INEXACT with z untouched. O(log n). */
int zboard_submit(zset *z, const char *m, size_t len, uint32_t h, double value, int op,
                  int style, int reverse, zboard_result *out);

#endif
