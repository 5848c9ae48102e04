/* zsl.h - the sorted-set engine core: a skip list with spans and dense
 * spans, plus a seeded hash table member -> node. Plain C11, no Python.h,
 * so the same sources build into the Python extension (_zset.c) and into
 * the plain-C benchmark (benchmarks/c/bench_skiplist.c).
 *
 * Layers and prefixes:
 *   zsl_rand_*  process-wide PRNG and hash seed     (zsl_rand.c)
 *   zdict_*     open-addressing hash member -> node (zsl_dict.c)
 *   zsl_*       nodes and the skip list itself      (zsl_list.c)
 *   zset_*      list + dict kept in agreement       (zsl_list.c)
 *
 * Order: (score, member bytes), scores compared with plain C doubles (so
 * -0.0 == 0.0, and a stored -0.0 keeps its sign), members with memcmp and
 * the shorter one first on a common prefix. NaN is never stored: every
 * caller guarantees it. Ranks in this layer are 1-based (the header is
 * rank 0), as in Redis; the binding converts to 0-based indexes.
 */
#ifndef RANKED_ZSL_H
#define RANKED_ZSL_H

#include <stddef.h>
#include <stdint.h>

#define ZSL_MAXLEVEL 32
#define ZSL_MAX_MEMBER_LEN 0xFFFFFFFFu

typedef struct zsl_node zsl_node;

/* One level of a node. span = rank(forward) - rank(this node); dspan = the
 * number of nodes y in (this, forward] that start a score group (y is the
 * first node, or y.score != prev(y).score). When forward is NULL both count
 * everything after the node, so they stay exact through every update. */
typedef struct zsl_link {
    zsl_node *forward;
    uint32_t span;
    uint32_t dspan;
} zsl_link;

/* One slab block (or malloc block when larger than ZSL_SLAB_MAX) per node:
 * this header, nlevel links, then mlen member bytes (not NUL-terminated).
 * 24 + 16 * nlevel + mlen bytes, rounded up to 8. */
struct zsl_node {
    double score;
    zsl_node *backward; /* previous node on level 0, NULL for the first */
    uint32_t mlen;
    uint8_t nlevel;
    uint8_t ascii; /* 1 when every member byte is < 0x80: decodes as-is */
    uint8_t pad_[2];
    zsl_link level[];
};

static inline char *zsl_member(const zsl_node *n) {
    return (char *)(n->level + n->nlevel);
}

/* Open-addressing table with linear probing and backward-shift deletion.
 * One 16-byte slot per entry, four to a cache line: the member's hash (0
 * marks an empty slot; stored hashes are never 0), its score rounded to
 * float, and its node. The rounded score lets a rank descent start while
 * the node is still loading (see zset_find_rank). */
typedef struct zdict_slot {
    uint32_t h;
    float hint; /* (float)node->score, kept equal on every score change */
    zsl_node *node;
} zdict_slot;

typedef struct zdict {
    zdict_slot *slots;
    size_t cap; /* 0 or a power of two */
    size_t used;
} zdict;

/* Node allocator of one zset (deletions compact it, see zsl_list.c): nodes up to ZSL_SLAB_MAX bytes (rounded up to
 * 8) are carved from chunks the zset owns, with one free list per 8-byte
 * size class, so a node costs no allocator header and at most 7 bytes of
 * rounding. Chunks start at ZSL_CHUNK_MIN bytes and double up to
 * ZSL_CHUNK_MAX (small sets stay small); they go back to malloc only on
 * zset_clear / zset_destroy. In a large set, nodes of one level and taller
 * nodes are carved from separate chunks: every search step above level 0
 * reads only tall nodes (a quarter of them), which then sit densely in
 * cache and in few pages. Larger nodes (the header, very tall or long
 * ones) use malloc directly; `big` counts those in the list. */
#define ZSL_SLAB_MAX 512
#define ZSL_SLAB_CLASSES (ZSL_SLAB_MAX / 8 + 1)
#define ZSL_CHUNK_MIN 256
#define ZSL_CHUNK_MAX 65536

typedef struct zsl_slab {
    void *free[ZSL_SLAB_CLASSES]; /* free[c]: free blocks of 8 * c bytes */
    char *bump;                   /* unused tail of the newest chunk of 1-level nodes */
    size_t left;                  /* bytes at bump */
    char *bump_tall;              /* the same for nodes of 2 or more levels */
    size_t left_tall;             /* bytes at bump_tall */
    void *chunks;                 /* chunks linked through their first word */
    size_t next_chunk;            /* size of the next chunk to allocate */
    size_t big;                   /* linked nodes allocated with malloc */
    size_t held;                  /* bytes of all chunks */
    size_t live;                  /* bytes of the slab nodes in use */
} zsl_slab;

typedef struct zset {
    zsl_node *header; /* 32 levels, no member, rank 0 */
    zsl_node *tail;
    size_t length;
    size_t groups;     /* number of distinct scores */
    int level;         /* levels in use, 1..32 */
    uint64_t modcount; /* bumped by every change; iterators compare it */
    size_t bytes;      /* allocator bytes held by chunks, big nodes and the table */
    zdict dict;
    zsl_slab slab;
} zset;

/* Bulk-append state: the rightmost node on each level with its rank and
 * dense rank. Between zset_bulk_begin and zset_bulk_end the links that end
 * the list carry stale spans, so no other zset_* call may run. */
typedef struct zset_bulk {
    zsl_node *last[ZSL_MAXLEVEL];
    size_t rank[ZSL_MAXLEVEL];
    size_t drank[ZSL_MAXLEVEL];
} zset_bulk;

/* ---- zsl_rand.c ---------------------------------------------------------- */
void zsl_rand_init(void);              /* idempotent; seeds from the OS */
uint64_t zsl_rand_next(void);          /* 64 random bits */
uint64_t zsl_rand_below(uint64_t n);   /* uniform in [0, n), n > 0 */
uint64_t zsl_hash(const void *data, size_t len);      /* seeded */
size_t zsl_alloc_size(void *p, size_t requested);     /* real bytes of p */

/* ---- zsl_dict.c ---------------------------------------------------------- */
uint32_t zdict_hash(const char *m, size_t len);
zsl_node *zdict_find(const zdict *d, const char *m, size_t len, uint32_t h);
void zdict_rescore(zdict *d, const zsl_node *n, uint32_t h); /* n's score changed */
void zdict_prefetch(const zdict *d, uint32_t h); /* cache hint for a coming find */
int zdict_reserve(zset *z, size_t extra);
void zdict_insert(zdict *d, zsl_node *n, uint32_t h);
void zdict_remove(zdict *d, const zsl_node *n);
void zdict_release(zset *z);

/* ---- zsl_list.c ---------------------------------------------------------- */
int zsl_cmp_members(const char *a, size_t alen, const char *b, size_t blen);
int zsl_cmp(const zsl_node *n, double score, const char *m, size_t mlen);

int zset_init(zset *z);
void zset_destroy(zset *z);
void zset_clear(zset *z);
zsl_node *zset_find(const zset *z, const char *m, size_t len);
zsl_node *zset_lookup(const zset *z, const char *m, size_t len, uint32_t h);
zsl_node *zset_insert(zset *z, double score, const char *m, size_t len, uint32_t h);
void zset_delete(zset *z, zsl_node *x);
void zset_set_score(zset *z, zsl_node *x, double score, uint32_t h);

/* Where a node stands, read off the descent that reached it. */
typedef struct zset_spot {
    size_t rank;   /* 1-based position, ascending */
    size_t drank;  /* 1-based dense rank (index of its score group), ascending */
    size_t length; /* members in the set at that moment */
    size_t groups; /* distinct scores in the set at that moment */
    int first;     /* the node is the first of its score group */
    int last;      /* the node is the last of its score group */
} zset_spot;

/* Unlink node x of z, give it `score` (not NaN) and link it again, always by
 * two descents run together, O(log n); x stays valid. h = zdict_hash of x's
 * member. *before and *after (either may be NULL) get where x stood before
 * and stands after, at no extra cost. */
void zset_move(zset *z, zsl_node *x, double score, uint32_t h, zset_spot *before,
               zset_spot *after);
size_t zset_rank(const zset *z, const zsl_node *x, size_t *drank);
#define ZSL_NEAR_MAX 64
const zsl_node *zset_find_rank(const zset *z, const char *m, size_t len, size_t *rank,
                               size_t *drank, size_t back, size_t ahead);
size_t zset_count_below(const zset *z, double score, int inclusive);
size_t zset_count_lex_below(const zset *z, const char *m, size_t len, int inclusive);
zsl_node *zset_by_rank(const zset *z, size_t rank);
zsl_node *zset_seek_after(const zset *z, double score, const char *m, size_t len);
zsl_node *zset_seek_before(const zset *z, double score, const char *m, size_t len);
size_t zset_delete_rank_range(zset *z, size_t first, size_t last);
zsl_node *zsl_node_new(zset *z, double score, const char *m, size_t len);
void zsl_node_free(zset *z, zsl_node *n);
void zset_bulk_begin(zset *z, zset_bulk *b);
void zset_bulk_append(zset *z, zset_bulk *b, zsl_node *x);
void zset_bulk_end(zset *z, zset_bulk *b);
int zset_check(const zset *z, char *msg, size_t msgsize);

#endif
