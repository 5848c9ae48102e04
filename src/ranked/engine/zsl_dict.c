/* zsl_dict.c - the member -> node index of a zset: open addressing with
 * linear probing over two parallel arrays (32-bit hashes, node pointers).
 * A probe reads only the hash array until a hash matches, so a miss costs
 * no node dereference. Deletion shifts later entries back (no tombstones).
 * The table grows at 3/4 load and never shrinks except through
 * zdict_release. */
#include "zsl.h"

#include <stdlib.h>
#include <string.h>

/* Seeded hash of a member, never 0 (0 marks an empty slot). */
uint32_t zdict_hash(const char *m, size_t len) {
    uint32_t h = (uint32_t)zsl_hash(m, len);
    return h ? h : 1u;
}

/* Start loading the home slot of hash h in both arrays: the two addresses
 * are known before either is read, so their cache misses overlap instead of
 * following each other. A hint only; any d (even an empty one) is fine. */
void zdict_prefetch(const zdict *d, uint32_t h) {
#if defined(__GNUC__)
    if (d->cap) {
        size_t i = h & (d->cap - 1);
        __builtin_prefetch(&d->hashes[i]);
        __builtin_prefetch(&d->nodes[i]);
    }
#else
    (void)d;
    (void)h;
#endif
}

/* The node whose member equals m[0:len], or NULL. h = zdict_hash(m, len). */
zsl_node *zdict_find(const zdict *d, const char *m, size_t len, uint32_t h) {
    if (d->cap == 0)
        return NULL;
    size_t mask = d->cap - 1;
    zdict_prefetch(d, h);
    for (size_t i = h & mask; d->hashes[i] != 0; i = (i + 1) & mask) {
        if (d->hashes[i] == h) {
            zsl_node *n = d->nodes[i];
            if (n->mlen == len && memcmp(zsl_member(n), m, len) == 0)
                return n;
        }
    }
    return NULL;
}

/* Move every entry of the old arrays into fresh arrays of newcap slots.
 * Returns 0, or -1 (table unchanged) when memory runs out. */
static int zdict_resize(zset *z, size_t newcap) {
    zdict *d = &z->dict;
    uint32_t *hashes = calloc(newcap, sizeof *hashes);
    zsl_node **nodes = malloc(newcap * sizeof *nodes);
    if (!hashes || !nodes) {
        free(hashes);
        free(nodes);
        return -1;
    }
    size_t mask = newcap - 1;
    for (size_t i = 0; i < d->cap; i++) {
        uint32_t h = d->hashes[i];
        if (h == 0)
            continue;
        size_t j = h & mask;
        while (hashes[j] != 0)
            j = (j + 1) & mask;
        hashes[j] = h;
        nodes[j] = d->nodes[i];
    }
    if (d->cap) {
        z->bytes -= zsl_alloc_size(d->hashes, d->cap * sizeof *d->hashes);
        z->bytes -= zsl_alloc_size(d->nodes, d->cap * sizeof *d->nodes);
    }
    free(d->hashes);
    free(d->nodes);
    d->hashes = hashes;
    d->nodes = nodes;
    d->cap = newcap;
    z->bytes += zsl_alloc_size(hashes, newcap * sizeof *hashes);
    z->bytes += zsl_alloc_size(nodes, newcap * sizeof *nodes);
    return 0;
}

/* Make room so that `extra` more inserts need no allocation. Returns 0, or
 * -1 on out-of-memory with the table unchanged. Call before mutating, so a
 * failed allocation leaves the zset as it was. */
int zdict_reserve(zset *z, size_t extra) {
    zdict *d = &z->dict;
    size_t need = d->used + extra;
    if (need < d->used)
        return -1;
    if (d->cap && need <= d->cap - d->cap / 4)
        return 0;
    size_t cap = d->cap ? d->cap : 8;
    while (need > cap - cap / 4) {
        if (cap > SIZE_MAX / 2 / sizeof(zsl_node *) || cap >= ((size_t)1 << 32))
            return -1;
        cap *= 2;
    }
    return zdict_resize(z, cap);
}

/* Store n under hash h. The caller guarantees the member is absent and that
 * zdict_reserve made room. */
void zdict_insert(zdict *d, zsl_node *n, uint32_t h) {
    size_t mask = d->cap - 1;
    size_t i = h & mask;
    while (d->hashes[i] != 0)
        i = (i + 1) & mask;
    d->hashes[i] = h;
    d->nodes[i] = n;
    d->used++;
}

/* Remove node n, which the caller guarantees is in the table. Entries after
 * the hole move back when their home slot does not lie in (hole, entry]. */
void zdict_remove(zdict *d, const zsl_node *n) {
    uint32_t h = zdict_hash(zsl_member(n), n->mlen);
    size_t mask = d->cap - 1;
    size_t i = h & mask;
    while (!(d->hashes[i] == h && d->nodes[i] == n))
        i = (i + 1) & mask;
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        uint32_t hj = d->hashes[j];
        if (hj == 0)
            break;
        size_t home = hj & mask;
        int stays = (i <= j) ? (i < home && home <= j) : (i < home || home <= j);
        if (stays)
            continue;
        d->hashes[i] = hj;
        d->nodes[i] = d->nodes[j];
        i = j;
    }
    d->hashes[i] = 0;
    d->nodes[i] = NULL;
    d->used--;
}

/* Free the arrays and return to the empty, unallocated state. Nodes are
 * not touched: the list owns them. */
void zdict_release(zset *z) {
    zdict *d = &z->dict;
    if (d->cap) {
        z->bytes -= zsl_alloc_size(d->hashes, d->cap * sizeof *d->hashes);
        z->bytes -= zsl_alloc_size(d->nodes, d->cap * sizeof *d->nodes);
    }
    free(d->hashes);
    free(d->nodes);
    d->hashes = NULL;
    d->nodes = NULL;
    d->cap = 0;
    d->used = 0;
}
