/* zset_api.h - the engine's core functions, called through its C API.
 *
 * Included after zsl.h (whose prototypes these names shadow) in every file
 * of the native module, also the plain-C zsl_board.c (through zsl_board.h)
 * when RANKED_ZSET_CAPI is defined; the plain-C checker builds zsl_board.c
 * without it and links the core directly.
 */
#ifndef RANKED_ZSET_API_H
#define RANKED_ZSET_API_H

#include "zset_capi.h"

/* Set by PyInit__native from the engine's capsule before any call. */
extern const zset_capi_t *zset_api;

#define SortedSetType (*zset_api->sorted_set_type)
#define zdict_hash (zset_api->hash)
#define zset_find (zset_api->find)
#define zset_lookup (zset_api->lookup)
#define zset_insert (zset_api->insert)
#define zset_delete (zset_api->remove)
#define zset_set_score (zset_api->set_score)
#define zset_move (zset_api->move)
#define zset_rank (zset_api->rank)
#define zset_count_below (zset_api->count_below)

#endif
