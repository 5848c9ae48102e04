/* guard_tables.h - the write guard's state on memory:// in native tables
 * (guard_tables.c), read and written by its check step (guard_check.c).
 *
 * One GuardTables per guarded board and keyspace, found by the board's held
 * key (the step's keys[3]) in the keyspace's __dict__, so every check bound
 * on that keyspace shares it; a flush of the keyspace (a new _values dict)
 * empties it. It holds what the Python twin and the Redis script keep in
 * keys of their own (ranked/guard/_keys.py), as numbers:
 *
 * - members: a member's state key (keys[0], ...:p:<member>) -> GuardRecord:
 *   its history (last score, the span's base and its instant, Welford's n,
 *   mean and M2) and, for a per-member limit of fixed state (GCRA, token
 *   bucket), that limiter's state with its deadline;
 * - nonces: a nonce's key (keys[1]) -> its deadline (ms), and the same keys
 *   in the order they were added, so the oldest go first once expired;
 * - limits: the per-IP limiter's key -> LimitRecord, for a limit of fixed
 *   state: the limiter's state and its deadline (records past it are swept a
 *   few at a time as new ones are made).
 *
 * A record or a nonce is made once and changed in place: no Python object is
 * made for an accepted submission but the nonce's deadline.
 */
#ifndef RANKED_GUARD_TABLES_H
#define RANKED_GUARD_TABLES_H

#include "rl_fast.h"

typedef struct {
    PyObject_HEAD
    int has_stats;          /* a history was recorded (the twin's state key exists) */
    int has_last, has_base; /* last and base are set (the twin's None otherwise) */
    double last, base, mean, m2;
    int64_t bt, n;
    PyObject *limit_key; /* the limiter key `limit` belongs to (bytes), or NULL */
    rl_state limit;      /* present only while now_ms <= limit_deadline */
    int64_t limit_deadline;
} GuardRecord;

typedef struct {
    PyObject_HEAD
    rl_state state; /* present only while now_ms <= deadline */
    int64_t deadline;
} LimitRecord;

typedef struct {
    PyObject *key; /* strong */
    int64_t deadline;
} nonce_entry;

typedef struct {
    PyObject_HEAD
    PyObject *values;  /* the keyspace's _values when made (strong: compared by identity) */
    PyObject *members; /* dict: state key -> GuardRecord */
    PyObject *nonces;  /* dict: nonce key -> deadline (int, ms) */
    PyObject *limits;  /* dict: the IP's limiter key -> LimitRecord */
    Py_ssize_t sweep;  /* where the sweep of expired LimitRecords goes on in `limits` */
    nonce_entry *ring; /* the nonces in the order added: ring[(head + i) % cap] */
    Py_ssize_t head, count, cap;
} GuardTables;

/* The tables of the board whose held key is `owner` on the keyspace whose
 * __dict__ is `ks_dict` and whose current _values is `values`: made when
 * absent, emptied when the keyspace was flushed. A borrowed reference (held
 * by the keyspace), or NULL with an exception set. */
GuardTables *guard_tables_of(PyObject *ks_dict, PyObject *values, PyObject *owner);

/* The record at `key` (exact bytes), made empty when absent and `create`:
 * borrowed (held by the tables), or NULL (absent, or an exception set:
 * check PyErr_Occurred). */
GuardRecord *guard_record(GuardTables *tables, PyObject *key, int create);

/* The limit record at `key` (exact bytes), made empty when absent and
 * `create` (after dropping at most two records past their deadline at now_ms):
 * borrowed, or NULL (absent, or an exception set: check PyErr_Occurred). */
LimitRecord *guard_limit(GuardTables *tables, PyObject *key, int create, int64_t now_ms);

/* Whether the nonce at `key` is held with a deadline not passed at now_ms:
 * 1, 0, or -1 with an exception set. */
int guard_nonce_live(GuardTables *tables, PyObject *key, int64_t now_ms);

/* Holds the nonce at `key` until `deadline`, after dropping at most two
 * expired ones; 0, or -1 with an exception set. */
int guard_nonce_add(GuardTables *tables, PyObject *key, int64_t deadline, int64_t now_ms);

/* Registers the guard_state(keyspace) function; 0, or -1 with an exception. */
int guard_tables_add_to_module(PyObject *m);

#endif
