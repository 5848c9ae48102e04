/* zset_capi.h - the engine's C API for other extension modules.
 *
 * The memory backend's native procedures (ranked.backends.native._native)
 * work on SortedSet objects of this extension. They cannot link the core a
 * second time: the member table's hash keys (zsl_rand.c) are secret and
 * per module, so a table must be read with the functions that built it.
 * PyInit__zset publishes this table of pointers as the capsule
 * ZSET_CAPI_NAME; a client imports it once with PyCapsule_Import.
 *
 * Each function's contract is the one its prototype in zsl.h states.
 */
#ifndef RANKED_ZSET_CAPI_H
#define RANKED_ZSET_CAPI_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "zsl.h"

#define ZSET_CAPI_NAME "ranked.engine._zset._C_API"
#define ZSET_CAPI_VERSION 1

typedef struct {
    int version;                  /* ZSET_CAPI_VERSION */
    PyTypeObject *sorted_set_type; /* SortedSet (instances are SortedSetObject) */
    uint32_t (*hash)(const char *, size_t);
    zsl_node *(*find)(const zset *, const char *, size_t);
    zsl_node *(*lookup)(const zset *, const char *, size_t, uint32_t);
    zsl_node *(*insert)(zset *, double, const char *, size_t, uint32_t);
    void (*remove)(zset *, zsl_node *);
    void (*set_score)(zset *, zsl_node *, double, uint32_t);
    void (*move)(zset *, zsl_node *, double, uint32_t, zset_spot *, zset_spot *);
    size_t (*rank)(const zset *, const zsl_node *, size_t *);
    size_t (*count_below)(const zset *, double, int);
} zset_capi_t;

#endif
