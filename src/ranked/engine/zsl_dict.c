/* zsl_dict.c - the member -> node index of a zset: open addressing with
 * linear probing over 16-byte slots (32-bit hash, score hint, node). A
 * probe reads only slots until a hash matches, so a miss costs no node
 * dereference. Deletion shifts later entries back (no tombstones). The
 * table grows at 4/5 load and never shrinks except through zdict_release. */
#include "zsl.h"

#include <stdlib.h>
#include <string.h>

/* Seeded hash of a member, never 0 (0 marks an empty slot). */
uint32_t zdict_hash(const char *m, size_t len) {
    uint32_t h = (uint32_t)zsl_hash(m, len);
    return h ? h : 1u;
}

/* Start loading the home slot of hash h: a hint only; any d (even an empty
 * one) is fine. */
void zdict_prefetch(const zdict *d, uint32_t h) {
#if defined(__GNUC__)
    if (d->cap)
        __builtin_prefetch(&d->slots[h & (d->cap - 1)]);
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
    for (size_t i = h & mask; d->slots[i].h != 0; i = (i + 1) & mask) {
        if (d->slots[i].h == h) {
            zsl_node *n = d->slots[i].node;
            if (n->mlen == len && memcmp(zsl_member(n), m, len) == 0)
                return n;
        }
    }
    return NULL;
}

/* The slot holding node n, which the caller guarantees is in the table;
 * h = zdict_hash of n's member. */
static size_t zdict_slot_of(const zdict *d, const zsl_node *n, uint32_t h) {
    size_t mask = d->cap - 1;
    size_t i = h & mask;
    while (d->slots[i].node != n)
        i = (i + 1) & mask;
    return i;
}

/* Node n (in the table, h = zdict_hash of its member) has a new score: store
 * its rounded value. */
void zdict_rescore(zdict *d, const zsl_node *n, uint32_t h) {
    d->slots[zdict_slot_of(d, n, h)].hint = (float)n->score;
}

/* Move every entry of the old slots into fresh slots of newcap. Returns 0,
 * or -1 (table unchanged) when memory runs out. */
static int zdict_resize(zset *z, size_t newcap) {
    zdict *d = &z->dict;
    zdict_slot *slots = calloc(newcap, sizeof *slots);
    if (!slots)
        return -1;
    size_t mask = newcap - 1;
    for (size_t i = 0; i < d->cap; i++) {
        if (d->slots[i].h == 0)
            continue;
        size_t j = d->slots[i].h & mask;
        while (slots[j].h != 0)
            j = (j + 1) & mask;
        slots[j] = d->slots[i];
    }
    if (d->cap)
        z->bytes -= zsl_alloc_size(d->slots, d->cap * sizeof *d->slots);
    free(d->slots);
    d->slots = slots;
    d->cap = newcap;
    z->bytes += zsl_alloc_size(slots, newcap * sizeof *slots);
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
    if (d->cap && need <= d->cap - d->cap / 5)
        return 0;
    size_t cap = d->cap ? d->cap : 8;
    while (need > cap - cap / 5) {
        if (cap > SIZE_MAX / 2 / sizeof(zdict_slot) || cap >= ((size_t)1 << 32))
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
    while (d->slots[i].h != 0)
        i = (i + 1) & mask;
    d->slots[i].h = h;
    d->slots[i].hint = (float)n->score;
    d->slots[i].node = n;
    d->used++;
}

/* Remove node n, which the caller guarantees is in the table. Entries after
 * the hole move back when their home slot does not lie in (hole, entry]. */
void zdict_remove(zdict *d, const zsl_node *n) {
    size_t mask = d->cap - 1;
    size_t i = zdict_slot_of(d, n, zdict_hash(zsl_member(n), n->mlen));
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        uint32_t hj = d->slots[j].h;
        if (hj == 0)
            break;
        size_t home = hj & mask;
        int stays = (i <= j) ? (i < home && home <= j) : (i < home || home <= j);
        if (stays)
            continue;
        d->slots[i] = d->slots[j];
        i = j;
    }
    d->slots[i].h = 0;
    d->slots[i].hint = 0.0f;
    d->slots[i].node = NULL;
    d->used--;
}

/* Free the slots and return to the empty, unallocated state. Nodes are not
 * touched: the list owns them. */
void zdict_release(zset *z) {
    zdict *d = &z->dict;
    if (d->cap)
        z->bytes -= zsl_alloc_size(d->slots, d->cap * sizeof *d->slots);
    free(d->slots);
    d->slots = NULL;
    d->cap = 0;
    d->used = 0;
}
