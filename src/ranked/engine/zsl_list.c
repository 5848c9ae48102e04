/* zsl_list.c - the skip list with spans (rank by summing spans, as Redis's
 * t_zset.c describes) plus "dense spans" that count score-group starts, so
 * the dense rank is also a sum along one search path. zset_* functions keep
 * the list and the member table (zsl_dict.c) in agreement.
 *
 * Ranks here are 1-based; the header has rank 0. A node y "starts a group"
 * when it is the first node or y.score != prev(y).score; z->groups counts
 * them (the number of distinct scores). Inserting or removing x can flip
 * the start flag of x's successor q, so every link covering q is adjusted
 * by the same delta `dq`; those links are exactly the update[] path. */
#include "zsl.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Under AddressSanitizer, free slab blocks and unused chunk tails are
 * poisoned, so a use after zsl_node_free is still reported. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define ZSL_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define ZSL_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define ZSL_POISON(p, n) ((void)(p), (void)(n))
#define ZSL_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

/* Compare member bytes like Python bytes: memcmp over the common length,
 * then the shorter first. Returns <0, 0 or >0. */
int zsl_cmp_members(const char *a, size_t alen, const char *b, size_t blen) {
    size_t n = alen < blen ? alen : blen;
    int c = n ? memcmp(a, b, n) : 0;
    if (c)
        return c;
    return alen < blen ? -1 : (alen > blen);
}

/* zsl_cmp's contract, inlined into the descents: the score test decides
 * almost every step without a call. */
static inline int zsl_cmp_fast(const zsl_node *n, double score, const char *m, size_t mlen) {
    if (n->score < score)
        return -1;
    if (n->score > score)
        return 1;
    return zsl_cmp_members(zsl_member(n), n->mlen, m, mlen);
}

/* Compare node n with the point (score, m[0:mlen]) in set order. */
int zsl_cmp(const zsl_node *n, double score, const char *m, size_t mlen) {
    return zsl_cmp_fast(n, score, m, mlen);
}

/* Tower height: 1, plus one while a fair 1-in-4 draw succeeds, at most
 * ZSL_MAXLEVEL; two random bits per draw, so P(level >= k) = 4^-(k-1). */
static int zsl_random_level(void) {
    uint64_t r = zsl_rand_next();
    int level = 1;
    while ((r & 3) == 0 && level < ZSL_MAXLEVEL) {
        level++;
        r >>= 2;
    }
    return level;
}

/* 1 when every byte of m[0:len] is below 0x80, 8 bytes per step. */
static uint8_t zsl_is_ascii(const char *m, size_t len) {
    uint64_t acc = 0;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, m + i, 8);
        acc |= w;
    }
    for (; i < len; i++)
        acc |= (unsigned char)m[i];
    return (acc & 0x8080808080808080ull) == 0;
}

/* Bytes a node of nlevel links and a len-byte member occupies, rounded up
 * to the slab's 8-byte classes. */
static inline size_t zsl_node_size(size_t nlevel, size_t len) {
    return (sizeof(zsl_node) + nlevel * sizeof(zsl_link) + len + 7) & ~(size_t)7;
}

/* Push the free block p of `size` bytes (a multiple of 8, <= ZSL_SLAB_MAX)
 * on its class's free list. */
static inline void zsl_slab_push(zsl_slab *sl, void *p, size_t size) {
    void **cell = p;
    *cell = sl->free[size >> 3];
    sl->free[size >> 3] = p;
    ZSL_POISON(p, size);
}

/* Chunks hold tall nodes apart only once the slab holds this many bytes. */
#define ZSL_SPLIT_MIN (4 * ZSL_CHUNK_MAX)

/* Does the slab now carve tall nodes from chunks of their own? */
static inline int zsl_slab_split(const zsl_slab *sl) {
    return sl->held >= ZSL_SPLIT_MIN;
}

/* A block of `size` bytes (a multiple of 8, 8..ZSL_SLAB_MAX) from z's slab
 * for a node of one level (tall == 0) or more (tall == 1): its class's free
 * list, else the tail of the newest chunk of that kind (one kind while the
 * slab holds less than ZSL_SPLIT_MIN bytes), else a new chunk
 * (charged to z->bytes; the old tail goes to the free list of its size).
 * NULL when memory runs out. O(1). */
static void *zsl_slab_alloc(zset *z, size_t size, int tall) {
    zsl_slab *sl = &z->slab;
    void *p = sl->free[size >> 3];
    if (p) {
        ZSL_UNPOISON(p, size);
        sl->free[size >> 3] = *(void **)p;
        sl->live += size;
        return p;
    }
    if (!zsl_slab_split(sl))
        tall = 0; /* a small set stays in one stream of chunks: it is cached anyway */
    char **bump = tall ? &sl->bump_tall : &sl->bump;
    size_t *left = tall ? &sl->left_tall : &sl->left;
    if (*left < size) {
        size_t csize = sl->next_chunk ? sl->next_chunk : ZSL_CHUNK_MIN;
        while (csize < size + 16)
            csize *= 2;
        char *chunk = malloc(csize);
        if (!chunk)
            return NULL;
        if (*left >= 8) {
            ZSL_UNPOISON(*bump, *left);
            zsl_slab_push(sl, *bump, *left);
        }
        ((void **)chunk)[0] = sl->chunks; /* 16-byte chunk head: next, size */
        ((size_t *)chunk)[1] = csize;
        sl->chunks = chunk;
        sl->next_chunk = csize < ZSL_CHUNK_MAX ? 2 * csize : ZSL_CHUNK_MAX;
        z->bytes += zsl_alloc_size(chunk, csize);
        sl->held += csize;
        *bump = chunk + 16;
        *left = csize - 16;
        ZSL_POISON(*bump, *left);
    }
    p = *bump;
    *bump += size;
    *left -= size;
    sl->live += size;
    ZSL_UNPOISON(p, size);
    return p;
}

/* Return every chunk to malloc and empty the free lists. Nodes carved from
 * the chunks become invalid; big nodes are not touched. */
static void zsl_slab_release(zset *z) {
    zsl_slab *sl = &z->slab;
    void *c = sl->chunks;
    while (c) {
        void *next = ((void **)c)[0];
        z->bytes -= zsl_alloc_size(c, ((size_t *)c)[1]);
        free(c);
        c = next;
    }
    size_t big = sl->big;
    memset(sl, 0, sizeof *sl);
    sl->big = big;
}

/* A node of nlevel empty links holding score and a copy of m[0:len], from
 * the slab or (when larger than ZSL_SLAB_MAX) from malloc, charged to
 * z->bytes; NULL when memory runs out. */
static zsl_node *zsl_node_alloc(zset *z, int nlevel, double score, const char *m, size_t len) {
    size_t size = zsl_node_size((size_t)nlevel, len);
    zsl_node *n;
    if (size <= ZSL_SLAB_MAX) {
        n = zsl_slab_alloc(z, size, nlevel > 1);
    } else {
        n = malloc(size);
        if (n) {
            z->bytes += zsl_alloc_size(n, size);
            z->slab.big++;
        }
    }
    if (!n)
        return NULL;
    n->score = score;
    n->backward = NULL;
    n->mlen = (uint32_t)len;
    n->nlevel = (uint8_t)nlevel;
    n->pad_[0] = n->pad_[1] = 0;
    for (int i = 0; i < nlevel; i++) {
        n->level[i].forward = NULL;
        n->level[i].span = 0;
        n->level[i].dspan = 0;
    }
    if (len)
        memcpy(zsl_member(n), m, len);
    n->ascii = zsl_is_ascii(m, len);
    return n;
}

/* A new unlinked node with a random height holding a copy of m[0:len]
 * (len <= ZSL_MAX_MEMBER_LEN, guaranteed by the caller). Owned by the
 * caller until linked (zset_bulk_append) or freed with zsl_node_free.
 * NULL when memory runs out. */
zsl_node *zsl_node_new(zset *z, double score, const char *m, size_t len) {
    return zsl_node_alloc(z, zsl_random_level(), score, m, len);
}

/* Free node n (unlinked, or being unlinked by the caller) into z, the zset
 * it was allocated for: a slab block goes to its class's free list (its
 * chunk stays charged to z), a big node back to malloc. */
void zsl_node_free(zset *z, zsl_node *n) {
    size_t size = zsl_node_size(n->nlevel, n->mlen);
    if (size <= ZSL_SLAB_MAX) {
        z->slab.live -= size;
        zsl_slab_push(&z->slab, n, size);
        return;
    }
    z->bytes -= zsl_alloc_size(n, size);
    z->slab.big--;
    free(n);
}

/* Make an empty zset. Returns 0, or -1 when the header cannot be allocated
 * (then *z holds nothing to free). */
int zset_init(zset *z) {
    memset(z, 0, sizeof *z);
    zsl_rand_init();
    z->header = zsl_node_alloc(z, ZSL_MAXLEVEL, 0.0, NULL, 0);
    if (!z->header)
        return -1;
    z->slab.big = 0; /* the header is big, but not in the list */
    z->level = 1;
    return 0;
}

/* Free every node and the table; the header stays, the zset is empty and
 * usable afterwards. Slab nodes go with their chunks, so the list is walked
 * only when big nodes are linked. */
void zset_clear(zset *z) {
    for (zsl_node *x = z->header->level[0].forward; x && z->slab.big;) {
        zsl_node *next = x->level[0].forward;
        if (zsl_node_size(x->nlevel, x->mlen) > ZSL_SLAB_MAX)
            zsl_node_free(z, x);
        x = next;
    }
    zsl_slab_release(z);
    for (int i = 0; i < ZSL_MAXLEVEL; i++) {
        z->header->level[i].forward = NULL;
        z->header->level[i].span = 0;
        z->header->level[i].dspan = 0;
    }
    zdict_release(z);
    z->tail = NULL;
    z->length = 0;
    z->groups = 0;
    z->level = 1;
    z->modcount++;
}

/* Free everything, header included. *z must not be used again except by
 * zset_init. Safe on a zset whose init failed. */
void zset_destroy(zset *z) {
    if (!z->header)
        return;
    zset_clear(z);
    z->bytes -= zsl_alloc_size(z->header, zsl_node_size(ZSL_MAXLEVEL, 0));
    free(z->header); /* malloc'ed, and not counted in slab.big */
    z->header = NULL;
}

/* The node holding member m[0:len], or NULL; h = zdict_hash(m, len), so a
 * caller that also inserts hashes once. O(1) expected. */
zsl_node *zset_lookup(const zset *z, const char *m, size_t len, uint32_t h) {
    if (z->dict.used == 0)
        return NULL;
    return zdict_find(&z->dict, m, len, h);
}

/* zset_lookup that hashes for the caller. */
zsl_node *zset_find(const zset *z, const char *m, size_t len) {
    return zset_lookup(z, m, len, zdict_hash(m, len));
}

/* While node y (reached on level i) is being compared, start loading both
 * nodes a descent may visit next: y's successor on level i (if the search
 * moves right) and on level i - 1 (if it drops there). Both pointers sit in
 * y's own links, so this costs no extra miss and overlaps the next two. */
static inline void zsl_prefetch_next(const zsl_node *y, int i) {
#if defined(__GNUC__)
    __builtin_prefetch(y->level[i].forward);
    if (i > 0)
        __builtin_prefetch(y->level[i - 1].forward);
#else
    (void)y;
    (void)i;
#endif
}

/* Hint the cache lines first..last (negative: before p) around p, by
 * address alone: p is not read. Integer arithmetic, as the lines may lie
 * outside p's block. */
static inline void zsl_prefetch_lines(const void *p, long first, long last) {
#if defined(__GNUC__)
    for (long k = first; k <= last; k++)
        __builtin_prefetch((const void *)((uintptr_t)p + (uintptr_t)(k * 64)));
#else
    (void)p;
    (void)first;
    (void)last;
#endif
}

/* A large set loaded in order (load(), or compacted) keeps its nodes of two
 * or more levels in rank order in their own chunks, and its one-level nodes
 * in rank order in theirs. A rank descent's last steps then read nodes that
 * sit right after its node cur on levels 2 and 1, and right before its
 * target x on level 0. Hinting those lines when the descent reaches each
 * level makes their misses overlap instead of following one another
 * (cooled 100k set: 5-10% off a rank). In a set grown by inserts the lines
 * hold other nodes, and the hints cost bandwidth, not waiting. */
static inline void zsl_prefetch_level(const zsl_node *cur, int i) {
    if (i == 2)
        zsl_prefetch_lines(cur, 1, 8);
    else if (i == 1)
        zsl_prefetch_lines(cur, 1, 4);
}

/* One descent's state: at node cur on level i, with cur's rank and dense
 * rank. */
typedef struct zsl_walker {
    zsl_node *cur;
    int i;
    size_t r, dr;
} zsl_walker;

/* One step of a descent toward the point (score, m[0:len]) with a strict
 * "less than", stopping at node `stop` too (NULL: none): move right on
 * level i, or record update/rank/drank[i] and drop a level. */
static inline void zsl_step(zsl_walker *w, const zsl_node *stop, double score, const char *m,
                            size_t len, zsl_node **update, size_t *rank, size_t *drank) {
    zsl_node *y = w->cur->level[w->i].forward;
    if (y && y != stop) {
        zsl_prefetch_next(y, w->i);
        if (zsl_cmp_fast(y, score, m, len) < 0) {
            w->r += w->cur->level[w->i].span;
            w->dr += w->cur->level[w->i].dspan;
            w->cur = y;
            return;
        }
    }
    update[w->i] = w->cur;
    rank[w->i] = w->r;
    drank[w->i] = w->dr;
    w->i--;
}

/* Descend to the point (score, m) with a strict "less than": update[i] is
 * the last node on level i before the point, rank[i]/drank[i] its rank and
 * dense rank. Fills levels 0..z->level-1. */
static void zsl_descend(const zset *z, double score, const char *m, size_t len,
                        zsl_node **update, size_t *rank, size_t *drank) {
    zsl_walker w = {z->header, z->level - 1, 0, 0};
    while (w.i >= 0)
        zsl_step(&w, NULL, score, m, len, update, rank, drank);
}

/* The node before x on level 0: its backward pointer, or the header. */
static inline zsl_node *zsl_prev(const zset *z, const zsl_node *x) {
    return x->backward ? x->backward : z->header;
}

/* update[i] = the last node before node x (which belongs to z) on each
 * level, all that unlinking x needs. The descent stops on level 1: on
 * level 0 the backward pointer names that node, which saves the level-0
 * steps (three node loads on average, each a cache miss in a large set). */
static void zsl_descend_node(const zset *z, zsl_node *x, zsl_node **update) {
    size_t rank[ZSL_MAXLEVEL], drank[ZSL_MAXLEVEL];
    zsl_walker a = {z->header, z->level - 1, 0, 0};
    while (a.i >= 1)
        zsl_step(&a, x, x->score, zsl_member(x), x->mlen, update, rank, drank);
    update[0] = zsl_prev(z, x);
}

/* Does node y start a score group, given its predecessor p (NULL or the
 * header when y is first)? */
static inline int zsl_starts(const zset *z, const zsl_node *p, const zsl_node *y) {
    return p == NULL || p == z->header || p->score != y->score;
}

/* Link unlinked node x after update[0], using the descent results for its
 * position (update/rank/drank for levels 0..z->level-1). Raises z->level
 * when x is taller. Does not touch the table or modcount. */
static void zsl_link_node(zset *z, zsl_node *x, zsl_node **update, size_t *rank, size_t *drank) {
    int lvl = x->nlevel;
    if (lvl > z->level) {
        for (int i = z->level; i < lvl; i++) {
            update[i] = z->header;
            rank[i] = 0;
            drank[i] = 0;
            z->header->level[i].forward = NULL;
            z->header->level[i].span = (uint32_t)z->length;
            z->header->level[i].dspan = (uint32_t)z->groups;
        }
        z->level = lvl;
    }
    zsl_node *p = update[0];
    zsl_node *q = p->level[0].forward;
    int sx = zsl_starts(z, p, x);
    int dq = 0;
    if (q)
        dq = (x->score != q->score) - zsl_starts(z, p, q);
    for (int i = 0; i < lvl; i++) {
        zsl_link *u = &update[i]->level[i];
        uint32_t below = (uint32_t)(rank[0] - rank[i]);
        uint32_t dbelow = (uint32_t)(drank[0] - drank[i]);
        x->level[i].forward = u->forward;
        u->forward = x;
        x->level[i].span = u->span - below;
        u->span = below + 1;
        x->level[i].dspan = u->dspan - dbelow + (uint32_t)dq;
        u->dspan = dbelow + (uint32_t)sx;
    }
    for (int i = lvl; i < z->level; i++) {
        update[i]->level[i].span++;
        update[i]->level[i].dspan += (uint32_t)(sx + dq);
    }
    x->backward = (p == z->header) ? NULL : p;
    if (q)
        q->backward = x;
    else
        z->tail = x;
    z->length++;
    z->groups += (size_t)(sx + dq);
}

/* Unlink x; update[i] must be the last node before x on each level
 * 0..z->level-1. x is not freed and stays in the table. */
static void zsl_unlink(zset *z, zsl_node *x, zsl_node **update) {
    zsl_node *p = x->backward;
    zsl_node *q = x->level[0].forward;
    int sx = zsl_starts(z, p, x);
    int dq = 0;
    if (q)
        dq = zsl_starts(z, p, q) - (x->score != q->score);
    for (int i = 0; i < z->level; i++) {
        zsl_link *u = &update[i]->level[i];
        if (u->forward == x) {
            u->span += x->level[i].span - 1;
            u->dspan += x->level[i].dspan - (uint32_t)sx + (uint32_t)dq;
            u->forward = x->level[i].forward;
        } else {
            u->span--;
            u->dspan += (uint32_t)(dq - sx);
        }
    }
    if (q)
        q->backward = p;
    else
        z->tail = p;
    while (z->level > 1 && z->header->level[z->level - 1].forward == NULL)
        z->level--;
    z->length--;
    z->groups -= (size_t)(sx - dq);
}

/* Chunks are compacted once they hold at least this many bytes and less
 * than 3/4 of them are live nodes: memory comes back after mass removals,
 * and each compaction (O(n)) follows at least ~n/3 removals, so removals
 * stay O(log n) amortized. */
#define ZSL_COMPACT_MIN 16384

/* The new address of node p during zsl_slab_compact: a moved node left it
 * in its old copy's backward field; big nodes do not move. */
static inline zsl_node *zsl_moved(zsl_node *p) {
    if (!p || zsl_node_size(p->nlevel, p->mlen) > ZSL_SLAB_MAX)
        return p;
    return p->backward;
}

/* Move every slab node of z into fresh chunks in list order, rewrite every
 * pointer to them (links, backward, tail, table), then free the old chunks.
 * Node addresses change: callers hold none across it. Leaves z unchanged
 * when memory runs out. O(n). */
static void zsl_slab_compact(zset *z) {
    zset fresh; /* only its slab and byte count are used */
    memset(&fresh, 0, sizeof fresh);
    zsl_node *x;
    size_t total = 0, tall = 0;
    for (x = z->header->level[0].forward; x; x = x->level[0].forward) {
        size_t size = zsl_node_size(x->nlevel, x->mlen);
        total += size <= ZSL_SLAB_MAX ? size : 0;
        tall += size <= ZSL_SLAB_MAX && x->nlevel > 1 ? size : 0;
    }
    if (total + 16 < ZSL_SPLIT_MIN)
        tall = 0; /* as zsl_slab_alloc will decide for the fresh slab */
    if (total) { /* one chunk that fits every slab node exactly: short ones, then tall */
        char *chunk = malloc(total + 16);
        if (!chunk)
            return; /* out of memory: keep the old chunks */
        ((void **)chunk)[0] = NULL;
        ((size_t *)chunk)[1] = total + 16;
        fresh.slab.chunks = chunk;
        fresh.slab.held = total + 16;
        fresh.slab.bump = chunk + 16;
        fresh.slab.left = total - tall;
        fresh.slab.bump_tall = chunk + 16 + (total - tall);
        fresh.slab.left_tall = tall;
        fresh.slab.next_chunk = ZSL_CHUNK_MAX;
        fresh.bytes = zsl_alloc_size(chunk, total + 16);
        ZSL_POISON(chunk + 16, total);
    }
    for (x = z->header->level[0].forward; x; x = x->level[0].forward) {
        size_t size = zsl_node_size(x->nlevel, x->mlen);
        if (size > ZSL_SLAB_MAX)
            continue;
        /* cannot fail: each kind's sizes just fit its part of the chunk */
        zsl_node *y = zsl_slab_alloc(&fresh, size, x->nlevel > 1);
        memcpy(y, x, size);
        x->backward = y; /* forwarding address; x's own links stay readable */
    }
    zsl_node *prev = NULL, *next;
    for (x = z->header; x; x = next) { /* walk the old copies */
        next = x->level[0].forward;       /* before a big node's links change */
        zsl_node *nx = x == z->header ? x : zsl_moved(x);
        for (int i = 0; i < nx->nlevel; i++)
            nx->level[i].forward = zsl_moved(x->level[i].forward);
        if (x != z->header) {
            nx->backward = prev;
            prev = nx;
        }
    }
    z->tail = prev;
    for (size_t i = 0; i < z->dict.cap; i++)
        if (z->dict.slots[i].h)
            z->dict.slots[i].node = zsl_moved(z->dict.slots[i].node);
    size_t big = z->slab.big;
    zsl_slab_release(z);
    z->slab = fresh.slab;
    z->slab.big = big;
    z->bytes += fresh.bytes;
}

/* Compact z's chunks when deletions left them mostly free. */
static void zsl_slab_maybe_compact(zset *z) {
    if (z->slab.held >= ZSL_COMPACT_MIN && z->slab.live < z->slab.held / 4 * 3)
        zsl_slab_compact(z);
}

/* Insert member m[0:len] with score (not NaN); h = zdict_hash(m, len). The
 * caller guarantees the member is absent. Returns the new node, or NULL on
 * out-of-memory with the zset unchanged. O(log n). */
zsl_node *zset_insert(zset *z, double score, const char *m, size_t len, uint32_t h) {
    if (zdict_reserve(z, 1) < 0)
        return NULL;
    zsl_node *x = zsl_node_new(z, score, m, len);
    if (!x)
        return NULL;
    zsl_node *update[ZSL_MAXLEVEL];
    size_t rank[ZSL_MAXLEVEL], drank[ZSL_MAXLEVEL];
    zsl_descend(z, score, m, len, update, rank, drank);
    zsl_link_node(z, x, update, rank, drank);
    zdict_insert(&z->dict, x, h);
    z->modcount++;
    return x;
}

/* Remove node x (which the caller guarantees belongs to z) from list and
 * table and free it; x is dangling afterwards. O(log n). */
void zset_delete(zset *z, zsl_node *x) {
    zsl_node *update[ZSL_MAXLEVEL];
    zsl_descend_node(z, x, update);
    zsl_unlink(z, x, update);
    zdict_remove(&z->dict, x);
    zsl_node_free(z, x);
    z->modcount++;
    zsl_slab_maybe_compact(z);
}

/* Give node x of z a new score (not NaN; the caller has checked it differs
 * from the current one); h = zdict_hash of x's member. Stays in place, O(1),
 * when both neighbours are strictly on their side and no group-start flag
 * changes; otherwise the same node is unlinked and relinked, O(log n). x
 * stays valid. */
void zset_set_score(zset *z, zsl_node *x, double score, uint32_t h) {
    zsl_node *p = x->backward;
    zsl_node *q = x->level[0].forward;
    if ((!p || (p->score < score && p->score != x->score)) &&
        (!q || (q->score > score && q->score != x->score))) {
        z->modcount++;
        x->score = score;
        zdict_rescore(&z->dict, x, h);
        return;
    }
    zset_move(z, x, score, h, NULL, NULL);
}

/* Where x stands, from the descent that reached it: p = update[0] (the
 * node before x, or the header), r/dr = p's rank and dense rank. */
static void zsl_spot_of(const zset *z, const zsl_node *x, const zsl_node *p, size_t r, size_t dr,
                        zset_spot *out) {
    const zsl_node *q = x->level[0].forward;
    out->first = zsl_starts(z, p, x);
    out->last = q == NULL || q->score != x->score;
    out->rank = r + 1;
    out->drank = dr + (size_t)out->first;
    out->length = z->length;
    out->groups = z->groups;
}

/* The two descents of a move, run step by step together so that their
 * cache misses overlap: toward node x (old_*, levels `low` and up; a low of
 * 1 leaves level 0 to zsl_prev) and toward x's new point (update/rank/drank,
 * every level), in the list as it still is, x included. */
static void zsl_descend_both(const zset *z, zsl_node *x, int low, double score,
                             zsl_node **old_update, size_t *old_rank, size_t *old_drank,
                             zsl_node **update, size_t *rank, size_t *drank) {
    const char *m = zsl_member(x);
    zsl_walker a = {z->header, z->level - 1, 0, 0}, b = a;
    while (a.i >= low || b.i >= 0) {
        if (a.i >= low)
            zsl_step(&a, x, x->score, m, x->mlen, old_update, old_rank, old_drank);
        if (b.i >= 0)
            zsl_step(&b, NULL, score, m, x->mlen, update, rank, drank);
    }
}

/* Turn the new point's descent, made with x still linked at its old point
 * (which is before the new one), into the descent of the list without x:
 * a level that ended on x ends on x's predecessor there instead (its rank
 * from the descent toward x, or x's own less one on level 0), and ranks
 * past x drop by one, dense ranks too when x is alone in its score group. */
static void zsl_descent_without(const zset *z, const zsl_node *x, zsl_node **old_update,
                                size_t *old_rank, size_t *old_drank, zsl_node **update,
                                size_t *rank, size_t *drank) {
    const zsl_node *q = x->level[0].forward;
    size_t sx = (size_t)zsl_starts(z, x->backward, x);
    size_t alone = sx && (q == NULL || q->score != x->score);
    for (int i = 0; i < z->level; i++) {
        if (update[i] == x) {
            if (i == 0) {
                update[0] = zsl_prev(z, x);
                rank[0] -= 1;
                drank[0] -= sx;
            } else {
                update[i] = old_update[i];
                rank[i] = old_rank[i];
                drank[i] = old_drank[i];
            }
        } else if (update[i] != z->header &&
                   zsl_cmp_fast(update[i], x->score, zsl_member(x), x->mlen) > 0) {
            rank[i] -= 1;
            drank[i] -= alone;
        }
    }
}

/* Unlink x, give it `score` and link it again: O(log n), two descents run
 * together (zsl_descend_both); h = zdict_hash of x's member, for its table
 * slot's score hint. before/after (each may be NULL) get where x
 * stood and stands, read off those same descents. x stays valid. */
void zset_move(zset *z, zsl_node *x, double score, uint32_t h, zset_spot *before,
               zset_spot *after) {
    zsl_node *update[ZSL_MAXLEVEL], *old_update[ZSL_MAXLEVEL];
    size_t rank[ZSL_MAXLEVEL], drank[ZSL_MAXLEVEL];
    size_t old_rank[ZSL_MAXLEVEL], old_drank[ZSL_MAXLEVEL];
    z->modcount++;
    zsl_descend_both(z, x, before ? 0 : 1, score, old_update, old_rank, old_drank, update, rank,
                     drank);
    if (before) {
        zsl_spot_of(z, x, old_update[0], old_rank[0], old_drank[0], before);
    } else {
        old_update[0] = zsl_prev(z, x);
    }
    if (zsl_cmp_fast(x, score, zsl_member(x), x->mlen) < 0)
        zsl_descent_without(z, x, old_update, old_rank, old_drank, update, rank, drank);
    zsl_unlink(z, x, old_update);
    x->score = score;
    zdict_rescore(&z->dict, x, h);
    for (int i = 0; i < x->nlevel; i++) {
        x->level[i].forward = NULL;
        x->level[i].span = 0;
        x->level[i].dspan = 0;
    }
    zsl_link_node(z, x, update, rank, drank);
    if (after)
        zsl_spot_of(z, x, update[0], rank[0], drank[0], after);
}

/* The neighbours of float f (not NaN) one step down and up, as doubles. Past
 * the infinities the bit step gives NaN, which no comparison passes. */
static inline double zsl_float_step(float f, int up) {
    if (f == 0.0f)
        return up ? (double)FLT_TRUE_MIN : -(double)FLT_TRUE_MIN;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    u = (f > 0.0f) == (up != 0) ? u + 1 : u - 1;
    memcpy(&f, &u, sizeof f);
    return (double)f;
}

/* Bounds around the score s of a node whose table slot holds hint =
 * (float)s: a score <= lo is below s and a score >= hi above it, as rounding
 * to float is monotone and lo < hint < hi are floats. In between, only s
 * itself can tell. */
typedef struct zsl_hint {
    double lo, hi;
} zsl_hint;

/* The bounds for a slot's hint (a float, not NaN). */
static inline zsl_hint zsl_hint_of(float hint) {
    zsl_hint b = {zsl_float_step(hint, 0), zsl_float_step(hint, 1)};
    return b;
}

/* Compare node y with the point (x's score, m[0:len]) in set order, where
 * x is the node of member m. With `hinted`, the bounds of x's score decide
 * without reading x when y's score lies outside them; otherwise x's exact
 * score decides. */
static inline int zsl_cmp_point(const zsl_node *y, const zsl_node *x, int hinted, zsl_hint b,
                                const char *m, size_t len) {
    if (hinted) {
        if (y->score <= b.lo)
            return -1;
        if (y->score >= b.hi)
            return 1;
    }
    return zsl_cmp_fast(y, x->score, m, len);
}

/* The 1-based rank of node x, the point (x's score, m[0:len]), with its
 * dense rank in *drank (if not NULL); 0 when the descent does not reach x.
 * With `hinted`, comparisons try the bounds first (zsl_cmp_point). It also
 * walks up to `back` nodes back and `ahead` nodes on from x along level 0
 * (at most ZSL_NEAR_MAX each), one step of each walk per step of the
 * descent: the three pointer chases are independent, so their cache misses
 * overlap, and a caller that next reads the nodes around x finds them
 * loaded. Inlined into each public function, so that zset_rank (no walks,
 * no hint) compiles without their steps. */
static inline size_t zsl_rank_walk(const zset *z, const zsl_node *x, int hinted, zsl_hint bounds,
                                   const char *m, size_t len, size_t *drank, size_t back,
                                   size_t ahead) {
    const zsl_node *cur = z->header, *b = x, *f = x;
    size_t r = 0, dr = 0;
    if (back > ZSL_NEAR_MAX)
        back = ZSL_NEAR_MAX;
    if (ahead > ZSL_NEAR_MAX)
        ahead = ZSL_NEAR_MAX;
    int hint_lines = zsl_slab_split(&z->slab); /* else one chunk stream, cached anyway */
    if (hint_lines) /* the one-level nodes just before x, and after it for a walk ahead */
        zsl_prefetch_lines(x, -3, ahead ? 3 : -1);
    for (int i = z->level - 1; i >= 0 && cur != x; i--) {
        const zsl_node *y;
        if (hint_lines)
            zsl_prefetch_level(cur, i);
        while ((y = cur->level[i].forward)) {
            zsl_prefetch_next(y, i);
            if (back && b) {
                b = b->backward;
                back--;
            }
            if (ahead && f) {
                f = f->level[0].forward;
                ahead--;
            }
            if (!(y == x || zsl_cmp_point(y, x, hinted, bounds, m, len) < 0))
                break;
            r += cur->level[i].span;
            dr += cur->level[i].dspan;
            cur = y;
            if (cur == x)
                break;
        }
    }
    for (; back && b; back--)
        b = b->backward;
    for (; ahead && f; ahead--)
        f = f->level[0].forward;
#if defined(__GNUC__)
    __asm__ volatile("" : : "r"(b), "r"(f)); /* the walks' loads are the point: keep them */
#endif
    if (drank)
        *drank = cur == x ? dr : 0;
    return cur == x ? r : 0;
}

/* 1-based rank of node x of z; *drank (if not NULL) gets its dense rank,
 * the 1-based index of its score group. O(log n). */
size_t zset_rank(const zset *z, const zsl_node *x, size_t *drank) {
    return zsl_rank_walk(z, x, 0, (zsl_hint){0.0, 0.0}, zsl_member(x), x->mlen, drank, 0, 0);
}

/* zset_find_rank's contract; inlined twice so that the call without walks
 * compiles without their steps. */
static inline const zsl_node *zsl_find_rank(const zset *z, const char *m, size_t len,
                                            size_t *rank, size_t *drank, size_t back,
                                            size_t ahead) {
    const zdict *d = &z->dict;
    if (d->used == 0)
        return NULL;
    uint32_t h = zdict_hash(m, len);
    size_t mask = d->cap - 1;
    for (size_t i = h & mask; d->slots[i].h != 0; i = (i + 1) & mask) {
        if (d->slots[i].h != h)
            continue;
        const zsl_node *x = d->slots[i].node;
#if defined(__GNUC__)
        __builtin_prefetch(x);
#endif
        zsl_hint bounds = zsl_hint_of(d->slots[i].hint);
        size_t r = zsl_rank_walk(z, x, 1, bounds, m, len, drank, back, ahead);
        if (r && x->mlen == len && memcmp(zsl_member(x), m, len) == 0) {
            *rank = r;
            return x;
        }
    }
    return NULL;
}

/* The node of member m[0:len] (NULL when absent), with its 1-based rank in
 * *rank and dense rank in *drank (if not NULL), walking `back` and `ahead`
 * nodes around it as zsl_rank_walk does. The descent starts from the table slot's score hint while the node
 * is still loading, and the member is checked against the node after it:
 * find + rank as one chain of cache misses shorter by the node's. O(log n). */
const zsl_node *zset_find_rank(const zset *z, const char *m, size_t len, size_t *rank,
                               size_t *drank, size_t back, size_t ahead) {
    if (back || ahead)
        return zsl_find_rank(z, m, len, rank, drank, back, ahead);
    return zsl_find_rank(z, m, len, rank, drank, 0, 0);
}

/* Number of nodes with score < s, or <= s when inclusive. O(log n). */
size_t zset_count_below(const zset *z, double s, int inclusive) {
    const zsl_node *x = z->header;
    size_t r = 0;
    for (int i = z->level - 1; i >= 0; i--) {
        const zsl_node *y;
        while ((y = x->level[i].forward)) {
            zsl_prefetch_next(y, i);
            if (!(y->score < s || (inclusive && y->score == s)))
                break;
            r += x->level[i].span;
            x = y;
        }
    }
    return r;
}

/* Number of leading nodes whose member is < m (<= m when inclusive),
 * comparing members only. Exact when all scores are equal, like Redis's lex
 * ranges. O(log n). */
size_t zset_count_lex_below(const zset *z, const char *m, size_t len, int inclusive) {
    const zsl_node *x = z->header;
    size_t r = 0;
    for (int i = z->level - 1; i >= 0; i--) {
        const zsl_node *y;
        while ((y = x->level[i].forward)) {
            int c = zsl_cmp_members(zsl_member(y), y->mlen, m, len);
            if (!(c < 0 || (inclusive && c == 0)))
                break;
            r += x->level[i].span;
            x = y;
        }
    }
    return r;
}

/* Ranks this close to the end are reached by walking back from the tail:
 * a few pointer hops instead of a descent that runs the whole width. */
#define ZSL_TAIL_WALK 8

/* The node of 1-based rank `rank` (1..length), or NULL when out of range.
 * O(log n); O(1) for the first rank and the last ZSL_TAIL_WALK ranks (the
 * top of a leaderboard read in reverse). */
zsl_node *zset_by_rank(const zset *z, size_t rank) {
    zsl_node *x = z->header;
    size_t traversed = 0;
    if (rank == 0 || rank > z->length)
        return NULL;
    if (rank == 1)
        return x->level[0].forward;
    if (z->length - rank < ZSL_TAIL_WALK) {
        x = z->tail;
        for (size_t k = z->length - rank; k; k--)
            x = x->backward;
        return x;
    }
    for (int i = z->level - 1; i >= 0; i--) {
        while (x->level[i].forward && traversed + x->level[i].span <= rank) {
            traversed += x->level[i].span;
            x = x->level[i].forward;
            zsl_prefetch_next(x, i);
        }
        if (traversed == rank)
            return x;
    }
    return NULL;
}

/* The last node of z before the point (score, m[0:len]), or at it too when
 * `at_too`; the header when there is none. The point need not be a member.
 * Inlined with a constant `at_too` into both seeks below. O(log n). */
static inline zsl_node *zsl_seek(const zset *z, double score, const char *m, size_t len,
                                 int at_too) {
    zsl_node *x = z->header;
    for (int i = z->level - 1; i >= 0; i--) {
        zsl_node *y;
        while ((y = x->level[i].forward)) {
            zsl_prefetch_next(y, i);
            if (at_too ? zsl_cmp_fast(y, score, m, len) > 0
                       : zsl_cmp_fast(y, score, m, len) >= 0)
                break;
            x = y;
        }
    }
    return x;
}

/* First node strictly after the point (score, m), or NULL. The point need
 * not be a member. O(log n). */
zsl_node *zset_seek_after(const zset *z, double score, const char *m, size_t len) {
    return zsl_seek(z, score, m, len, 1)->level[0].forward;
}

/* Last node strictly before the point (score, m), or NULL. O(log n). */
zsl_node *zset_seek_before(const zset *z, double score, const char *m, size_t len) {
    zsl_node *x = zsl_seek(z, score, m, len, 0);
    return x == z->header ? NULL : x;
}

/* Delete the nodes of 1-based ranks first..last (1 <= first <= last <=
 * length, guaranteed by the caller). Returns how many were removed.
 * O(log n + k). */
size_t zset_delete_rank_range(zset *z, size_t first, size_t last) {
    zsl_node *update[ZSL_MAXLEVEL];
    zsl_node *x = z->header;
    size_t traversed = 0;
    for (int i = z->level - 1; i >= 0; i--) {
        while (x->level[i].forward && traversed + x->level[i].span < first) {
            traversed += x->level[i].span;
            x = x->level[i].forward;
        }
        update[i] = x;
    }
    x = x->level[0].forward;
    size_t removed = 0;
    for (size_t r = first; x && r <= last; r++) {
        zsl_node *next = x->level[0].forward;
        zsl_unlink(z, x, update);
        zdict_remove(&z->dict, x);
        zsl_node_free(z, x);
        removed++;
        x = next;
    }
    if (removed)
        z->modcount++;
    zsl_slab_maybe_compact(z);
    return removed;
}

/* Start appending after the current tail: record the rightmost node of
 * every level with its rank and dense rank. O(log n). */
void zset_bulk_begin(zset *z, zset_bulk *b) {
    zsl_node *x = z->header;
    size_t r = 0, dr = 0;
    for (int i = z->level - 1; i >= 0; i--) {
        while (x->level[i].forward) {
            r += x->level[i].span;
            dr += x->level[i].dspan;
            x = x->level[i].forward;
        }
        b->last[i] = x;
        b->rank[i] = r;
        b->drank[i] = dr;
    }
}

/* Append unlinked node x (from zsl_node_new) after the tail and into the
 * table. The caller guarantees x sorts strictly after the tail, its member
 * is absent, and zdict_reserve made room. O(height of x): no search, and
 * the links that end the list get their spans only in zset_bulk_end. */
void zset_bulk_append(zset *z, zset_bulk *b, zsl_node *x) {
    int lvl = x->nlevel;
    if (lvl > z->level) {
        for (int i = z->level; i < lvl; i++) {
            b->last[i] = z->header;
            b->rank[i] = 0;
            b->drank[i] = 0;
        }
        z->level = lvl;
    }
    zsl_node *p = z->tail;
    int sx = zsl_starts(z, p, x);
    size_t r = z->length + 1;
    size_t dr = z->groups + (size_t)sx;
    for (int i = 0; i < lvl; i++) {
        zsl_link *u = &b->last[i]->level[i];
        u->forward = x;
        u->span = (uint32_t)(r - b->rank[i]);
        u->dspan = (uint32_t)(dr - b->drank[i]);
        x->level[i].forward = NULL;
        b->last[i] = x;
        b->rank[i] = r;
        b->drank[i] = dr;
    }
    x->backward = p;
    z->tail = x;
    z->length = r;
    z->groups = dr;
    zdict_insert(&z->dict, x, zdict_hash(zsl_member(x), x->mlen));
    z->modcount++;
}

/* Finish a bulk append: give the last link of every level its "rest of
 * the list" spans. O(log n). */
void zset_bulk_end(zset *z, zset_bulk *b) {
    for (int i = 0; i < z->level; i++) {
        zsl_link *u = &b->last[i]->level[i];
        u->span = (uint32_t)(z->length - b->rank[i]);
        u->dspan = (uint32_t)(z->groups - b->drank[i]);
    }
}

/* Verify every invariant in one level-0 walk: order, backward pointers,
 * tail, length, group count, heights, every link's span and dense span
 * (also the final links, which count the rest of the list), unused header
 * levels, and table <-> list agreement. Returns 0, or -1 with a message
 * naming the first broken invariant written to msg. O(n). */
int zset_check(const zset *z, char *msg, size_t msgsize) {
#define FAIL(...)                                 \
    do {                                          \
        snprintf(msg, msgsize, __VA_ARGS__);      \
        return -1;                                \
    } while (0)
    const zsl_node *last[ZSL_MAXLEVEL];
    size_t lrank[ZSL_MAXLEVEL], ldrank[ZSL_MAXLEVEL];
    if (z->level < 1 || z->level > ZSL_MAXLEVEL)
        FAIL("level %d out of range", z->level);
    for (int i = 0; i < ZSL_MAXLEVEL; i++) {
        last[i] = z->header;
        lrank[i] = 0;
        ldrank[i] = 0;
        if (i >= z->level && z->header->level[i].forward)
            FAIL("header level %d is linked above the level counter %d", i, z->level);
    }
    if (z->level > 1 && !z->header->level[z->level - 1].forward)
        FAIL("level counter %d but the top level is empty", z->level);
    const zsl_node *prev = NULL;
    size_t r = 0, groups = 0;
    for (const zsl_node *x = z->header->level[0].forward; x; x = x->level[0].forward) {
        r++;
        if (r > z->length)
            FAIL("more nodes than length %zu", z->length);
        if (x->score != x->score)
            FAIL("NaN score at rank %zu", r);
        if (x->nlevel < 1 || x->nlevel > z->level)
            FAIL("node height %d at rank %zu exceeds level %d", x->nlevel, r, z->level);
        if (x->backward != prev)
            FAIL("backward pointer wrong at rank %zu", r);
        if (prev && zsl_cmp(prev, x->score, zsl_member(x), x->mlen) >= 0)
            FAIL("order broken at rank %zu", r);
        if (!prev || prev->score != x->score)
            groups++;
        for (int i = 0; i < x->nlevel; i++) {
            const zsl_link *u = &last[i]->level[i];
            if (u->forward != x)
                FAIL("level %d skips the node at rank %zu", i, r);
            if (u->span != r - lrank[i])
                FAIL("span wrong on level %d into rank %zu: %u != %zu", i, r, u->span,
                     r - lrank[i]);
            if (u->dspan != groups - ldrank[i])
                FAIL("dense span wrong on level %d into rank %zu: %u != %zu", i, r, u->dspan,
                     groups - ldrank[i]);
            last[i] = x;
            lrank[i] = r;
            ldrank[i] = groups;
        }
        if (zset_find(z, zsl_member(x), x->mlen) != x)
            FAIL("member at rank %zu is not in the table", r);
        prev = x;
    }
    if (r != z->length)
        FAIL("length %zu but %zu nodes", z->length, r);
    if (z->tail != prev)
        FAIL("tail is not the last node");
    if (groups != z->groups)
        FAIL("group count %zu but %zu distinct scores", z->groups, groups);
    if (z->dict.used != z->length)
        FAIL("table holds %zu members, list %zu", z->dict.used, z->length);
    for (size_t i = 0; i < z->dict.cap; i++) {
        const zdict_slot *sl = &z->dict.slots[i];
        if (sl->h == 0)
            continue;
        if (sl->h != zdict_hash(zsl_member(sl->node), sl->node->mlen))
            FAIL("table slot %zu holds a hash that is not its member's", i);
        if (memcmp(&sl->hint, &(float){(float)sl->node->score}, sizeof sl->hint) != 0)
            FAIL("table slot %zu holds a score hint that is not its node's score", i);
    }
    for (int i = 0; i < z->level; i++) {
        const zsl_link *u = &last[i]->level[i];
        if (u->forward)
            FAIL("last link on level %d is not NULL", i);
        if (u->span != z->length - lrank[i] || u->dspan != z->groups - ldrank[i])
            FAIL("final spans wrong on level %d", i);
    }
    return 0;
#undef FAIL
}
