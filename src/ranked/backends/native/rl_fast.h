/* rl_fast.h - what the memory rate limiter's C files share (internal):
 * rl_fast.c (the RateDecider type: identity, cost, lock, clock, keyspace
 * access, construction) and rl_cores.c (the five algorithms' cores, twins of
 * ranked/ratelimit/_memory.py). Built by ranked/backends/native/ratelimit.py
 * from an Operation's native_args. See rl_fast.c for the whole design.
 */
#ifndef RANKED_RL_FAST_H
#define RANKED_RL_FAST_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <math.h>
#include <stdint.h>
#include <time.h>

#include "native.h"

#define ALG_FIXED 0
#define ALG_LOG 1
#define ALG_COUNTER 2
#define ALG_BUCKET 3
#define ALG_GCRA 4

#define CLOCK_SYSTEM 0  /* time_ns(): no clock injected */
#define CLOCK_BACKEND 1 /* the keyspace's clock: floor(now*1e6), floor(now*1e3) */
#define CLOCK_LIMITER 2 /* the limiter's clock: round(now*1e6), keyspace.now_ms() */

/* The decider's share of the keyspace's active expiry: every 8 decisions, up
 * to 16 expired keys (two per decision, so keys of identities never seen
 * again go even when every decision makes a new one). The Python reference
 * takes the same share (ranked/ratelimit/_memory.py: _EXPIRY_*). */
#define EXPIRY_EVERY_MASK 7
#define EXPIRY_DELETES 16
#define MAX_SLOTS 3
#define MAX_STEPS 64 /* the counter's retry search; more goes to the Python core */

/* Integers the fast path takes: sums of a few stay exact in int64 and far
 * from overflow, and every one converts to a double exactly. */
#define BOUND (INT64_C(1) << 52)
#define EXACT (INT64_C(1) << 53)

/* The value a core returns to say "let the Python core decide; nothing was
 * written". Never a real object. */
extern PyObject rl_slow_marker;
#define SLOW (&rl_slow_marker)

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    int algorithm;
    int clock_mode;
    int64_t limit, window, window_ms, capacity;
    double rate, interval, tolerance;
    double clock_max; /* the latest limiter clock reading taken unchecked, seconds */
    uint64_t decisions;
    Py_ssize_t slots[MAX_SLOTS];
    PyObject *policy, *limit_obj, *decision_type, *keyspace, *ks_dict;
    PyObject *acquire, *release, *identities, *plan_keys, *plan_args;
    PyObject *clock, *now_ms, *expire, *get_at, *keep_deadline, *delete;
    PyObject *core, *cell_type, *cell_template, *wrongtype, *deque_type;
    PyObject *popleft, *append, *check_clock;
} RateDeciderObject;

/* One decision's inputs, once validated. */
typedef struct {
    PyObject *key;      /* borrowed: keys[0], exact bytes */
    int64_t now, now_ms; /* us and ms, both within +-BOUND */
    int64_t cost;       /* 0 <= cost <= capacity */
    int consume;
} hit;

/* ==== small helpers ======================================================== */

/* Floor division of a by b > 0 (Python's //). */
static inline int64_t floordiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

/* 1 when `v` is an exact int within +-BOUND, stored in *out; 0 otherwise
 * (no exception left set). */
static inline int small_int(PyObject *v, int64_t *out) {
    if (!v || !PyLong_CheckExact(v))
        return 0;
    int overflow;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow || x <= -BOUND || x >= BOUND)
        return 0;
    *out = x;
    return 1;
}

/* 1 when `v` is an exact float, or an exact int within +-BOUND: its value in
 * *out and whether it was an int in *is_int; 0 otherwise. */
static inline int small_number(PyObject *v, double *out, int *is_int) {
    if (v && PyFloat_CheckExact(v)) {
        *out = PyFloat_AS_DOUBLE(v);
        *is_int = 0;
        return 1;
    }
    int64_t i;
    if (!small_int(v, &i))
        return 0;
    *out = (double)i;
    *is_int = 1;
    return 1;
}

/* The object in the __slots__ member of `cell` at byte offset `off`
 * (borrowed; NULL when unset). */
static inline PyObject *slot_get(PyObject *cell, Py_ssize_t off) {
    return *(PyObject **)((char *)cell + off);
}

/* Stores `value` (a new reference, stolen; NULL means an error was set) in
 * the member at `off`; 0, or -1 with the exception set. */
static inline int slot_set(PyObject *cell, Py_ssize_t off, PyObject *value) {
    if (!value)
        return -1;
    PyObject **field = (PyObject **)((char *)cell + off);
    Py_XSETREF(*field, value);
    return 0;
}

static inline PyObject *none_ref(void) {
    Py_INCREF(Py_None);
    return Py_None;
}

/* ceil(us / 1000) as the scripts compute it, for |us| < 2**53. */
static inline int64_t ms_of(int64_t us) { return (int64_t)ceil((double)us / 1000); }

/* ==== rl_fast.c: results and the keyspace ================================== */

/* A Decision (tuple subclass) of six items; the two PyObject arguments are
 * new references, stolen (NULL: an error is already set). */
PyObject *rl_decision(RateDeciderObject *self, int allowed, PyObject *remaining, double reset,
                      PyObject *retry);

/* The live cell at h->key (a new reference in *cell, or NULL when absent).
 * Returns 0, -1 with an exception set (WRONGTYPE included), or 1: go slow. */
int rl_get_cell(RateDeciderObject *self, const hit *h, PyObject **cell);

/* A fresh cell of the algorithm's type stored at h->key; a new reference,
 * or NULL with an exception set. */
PyObject *rl_store_cell(RateDeciderObject *self, const hit *h);

/* Keyspace.keep_deadline(h->key, when); 0, or -1 with an exception. */
int rl_keep_deadline(RateDeciderObject *self, const hit *h, int64_t when);

/* 1 when `o` is a RateDecider, else 0 (no exception). */
int rl_is_decider(PyObject *o);

/* ==== rl_cores.c ============================================================ */

/* A limiter's state as numbers (what a cell of the algorithms with fixed
 * state holds): GCRA's tat in `value`; the token bucket's tokens in `value`
 * (an int until a refill makes them a float: `value_is_int`) and its last
 * refill (us) in `aux`. present 0: no state (absent, or past its deadline). */
typedef struct {
    int present;
    double value;
    int value_is_int;
    int64_t aux;
} rl_state;

/* One decision computed on numbers, before anything is written. */
typedef struct {
    int slow;            /* a number outside what the C code takes: the Python core decides */
    int allowed;
    double remaining;    /* a whole number >= 0 */
    double reset_us;     /* a whole number of us */
    double retry_us;     /* when refused */
    int writes;          /* allowed, consuming and costing: store `next` */
    rl_state next;
    int64_t keep_ms;     /* the state's deadline is now_ms + keep_ms */
} rl_outcome;

/* The decision of an algorithm with fixed state on `in` at `now` (us) for
 * `cost` units: pure arithmetic, the same float operations as the Python
 * core, shared by the keyspace's cores here and the write guard's native
 * tables (guard_check.c). */
typedef void (*rl_math)(const RateDeciderObject *self, const rl_state *in, int64_t now,
                        int64_t cost, int consume, rl_outcome *out);
void rl_gcra_math(const RateDeciderObject *self, const rl_state *in, int64_t now, int64_t cost,
                  int consume, rl_outcome *out);
void rl_bucket_math(const RateDeciderObject *self, const rl_state *in, int64_t now,
                    int64_t cost, int consume, rl_outcome *out);

/* The numbers of a cell of an algorithm with fixed state (GCRA, the token
 * bucket) into `in`, as its core reads them: 1, or 0 when they are not what
 * the C code takes (the Python core then decides). No exception set. */
int rl_cell_state(const RateDeciderObject *self, PyObject *cell, rl_state *in);

/* One algorithm's decision for a validated hit, under the backend's lock: a
 * new Decision, SLOW (nothing written), or NULL with an exception set. */
typedef PyObject *(*rl_core)(RateDeciderObject *, const hit *);

/* The cores by algorithm number (ALG_FIXED .. ALG_GCRA). */
extern const rl_core rl_cores[5];

#endif
