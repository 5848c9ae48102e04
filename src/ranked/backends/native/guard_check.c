/* guard_check.c - the write guard's check step on memory:// in one C call:
 * ranked.backends.native._native.GuardCheck.
 *
 * It is the native implementation of the guard's "check" procedure (native
 * name "guard"), built once per guarded board by
 * ranked/backends/native/guard.py from the Operation's native_args. Called as
 * check(keys, args, now_us=None), the operation's own call arguments (the
 * script's keys and arguments), it takes the backend's lock (with the same
 * share of the active expiry as the reference's Locked), then does what the
 * Python twin (ranked/guard/_procedures.py, _check_twin) does in the same
 * order with the same float operations: the ban list, the member's and the
 * IP's rate limits, the nonce, the velocity cap, the z-score (Welford), the
 * pending tier (the feature's own Python helper: a sorted-set read), then
 * the writes; it returns the twin's reply, decoded by the feature's decoder
 * when one is given.
 *
 * Where the state lives. The twin keeps it in keys of its own; here the
 * member's history, the nonces and the limits of fixed state (GCRA, token
 * bucket: the limiter's own arithmetic, rl_gcra_math / rl_bucket_math) live
 * in the board's native tables (guard_tables.c), changed in place, so an
 * accepted submission makes no Python object but its nonce's deadline. The
 * ban list and a limit of another algorithm stay in the keyspace (the
 * limiters' own C cores, rl_cores.c, on RateDecider objects built as
 * configuration holders). A value found in the keyspace at
 * a key the tables stand for (a state restored by AsyncGuard.restore, a nonce
 * restored, a limiter's cell) is taken into the tables and its key deleted,
 * or refused as the twin refuses it (WRONGTYPE); a key past its deadline goes
 * through Keyspace.get_at, which deletes it as the twin's read does.
 *
 * Only the guard's own call shapes are taken: a call with arguments of
 * another type, or with one key given for two (the twin's state layout would
 * then differ from the tables'), raises TypeError and changes nothing.
 *
 * Python code runs only through the keyspace's own methods (now_us, now_ms,
 * get_at, delete, expire_pending), the feature's helpers (the tier, the
 * restored state's reader, the decoder) and the limiters' Python cores:
 * every object used across those calls is held by a strong reference.
 * tests/guard/test_native_check.py drives this and the twin side by side.
 */
#include "guard_tables.h"

#include <time.h>

/* The script arguments after the instant, by index (ranked/guard/_async/guard.py
 * _Steps.args_of; the limiters' parameters at 14..19 are read by their cores). */
enum {
    A_MEMBER, A_SCORE, A_TTL, A_STEP, A_SPAN, A_CHANGE, A_THRESHOLD, A_ZMIN, A_TIER, A_HIGH,
    A_NP = 12, A_NI = 13, A_OPERATOR = 20, A_COUNT = 21
};

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    Py_ssize_t every, calls; /* the active expiry's share: every `every`-th call */
    int system_clock;       /* the keyspace's clock is time.time: read it here */
    rl_math player_math;    /* the member's limit in the tables (NULL: in the keyspace) */
    rl_math ip_math;        /* the IP's limit in the tables (NULL: in the keyspace) */
    PyObject *keyspace, *ks_dict, *acquire, *release, *expire, *now_us, *now_ms;
    PyObject *get_at, *delete, *player, *ip, *restored, *tier, *decode;
    PyObject *checked; /* the decoded reply's type (NULL: call `decode`), see to_checked */
} GuardCheckObject;

static PyObject *s_values, *s_deadlines;
static PyObject *empty_bytes, *int_one;
static PyObject *r_banned, *r_rate, *r_rate_ip, *r_replayed, *r_step, *r_span, *r_zscore;

/* round(x) as float.__round__ does it (halves to even). */
static double half_even(double x) {
    double r = round(x);
    if (fabs(x - r) == 0.5)
        r = 2.0 * round(x / 2.0);
    return r;
}

/* An optional number argument: b"" is absent (*has 0); an exact float or int
 * is present with its value as float() gives it. 0, or 1 for anything else
 * (no exception left set). */
static int opt_number(PyObject *v, int *has, double *out) {
    if (PyBytes_CheckExact(v) && PyBytes_GET_SIZE(v) == 0) {
        *has = 0;
        return 0;
    }
    *has = 1;
    if (PyFloat_CheckExact(v)) {
        *out = PyFloat_AS_DOUBLE(v);
        return 0;
    }
    if (PyLong_CheckExact(v)) {
        *out = PyLong_AsDouble(v);
        if (*out == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            return 1;
        }
        return 0;
    }
    return 1;
}

/* An int argument within +-BOUND in *out; 0, or 1 otherwise. */
static int int_arg(PyObject *v, int64_t *out) { return small_int(v, out) ? 0 : 1; }

/* A keyspace table (_values, _deadlines) held: a new reference, or NULL when
 * missing or not an exact dict (SystemError set unless the lookup raised). */
static PyObject *ks_table(PyObject *ks_dict, PyObject *name) {
    PyObject *t = PyDict_GetItemWithError(ks_dict, name);
    if (!t || !PyDict_CheckExact(t)) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_SystemError, "the keyspace's tables changed type");
        return NULL;
    }
    return Py_NewRef(t);
}

/* What a step reads of the keyspace: its tables (_values, _deadlines), held
 * for the step (no step flushes the keyspace), and its methods the step calls
 * (borrowed from the caller). */
typedef struct {
    PyObject *values, *deadlines;        /* strong */
    PyObject *get_at, *delete, *restored; /* borrowed */
} keyspace_view;

/* Takes the keyspace's tables from its __dict__ into `v` (the methods are
 * the caller's to set); 0, or -1 with an exception set (nothing held). */
static int view_open(PyObject *ks_dict, keyspace_view *v) {
    v->values = ks_table(ks_dict, s_values);
    v->deadlines = v->values ? ks_table(ks_dict, s_deadlines) : NULL;
    if (!v->deadlines) {
        Py_CLEAR(v->values);
        return -1;
    }
    return 0;
}

/* Drops the tables `v` holds. */
static void view_close(keyspace_view *v) {
    Py_CLEAR(v->values);
    Py_CLEAR(v->deadlines);
}

/* The value at `key` as Keyspace.get_at(key, now_ms) answers it: read from
 * the tables when live with no deadline or a deadline not passed, else
 * through get_at (which deletes a key past its deadline or an emptied
 * container). 0 with a new reference in *value (NULL: absent), or -1 with an
 * exception set. */
static int live_value(const keyspace_view *v, PyObject *key, int64_t now_ms,
                      PyObject *now_ms_obj, PyObject **value) {
    *value = NULL;
    PyObject *found = Py_XNewRef(PyDict_GetItemWithError(v->values, key));
    if (!found)
        return PyErr_Occurred() ? -1 : 0;
    PyObject *deadline = PyDict_GetItemWithError(v->deadlines, key);
    int64_t when;
    int usual = 1;
    if (deadline)
        usual = small_int(deadline, &when) && now_ms <= when;
    else if (PyErr_Occurred())
        usual = -1;
    if (usual == 1 && !PyBytes_Check(found)) {
        Py_ssize_t size = PyObject_Length(found);
        usual = size > 0 ? 1 : (size == 0 ? 0 : -1);
    }
    if (usual == 1) {
        *value = found;
        return 0;
    }
    Py_DECREF(found);
    if (usual < 0 || PyErr_Occurred())
        return -1;
    PyObject *got = PyObject_CallFunctionObjArgs(v->get_at, key, now_ms_obj, NULL);
    if (!got)
        return -1;
    if (got == Py_None)
        Py_DECREF(got);
    else
        *value = got;
    return 0;
}

/* keyspace.delete(key); 0, or -1 with an exception set. */
static int delete_key(PyObject *delete, PyObject *key) {
    PyObject *r = PyObject_CallOneArg(delete, key);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

/* A limiter's decision on keys[at] at (now, now_ms): its C core, or its
 * Python core when the C core hands back. Sets the three reply items (a new
 * reference each) and *refused; 0, or -1 with an exception set. */
static int limit(GuardCheckObject *self, PyObject *decider, PyObject *keys, Py_ssize_t at,
                 Py_ssize_t count, int64_t now, int64_t now_ms, PyObject *now_obj,
                 PyObject *now_ms_obj, PyObject *items[3], int *refused) {
    RateDeciderObject *d = (RateDeciderObject *)decider;
    hit h = {0};
    h.key = PySequence_Fast_GET_ITEM(keys, at);
    h.now = now;
    h.now_ms = now_ms;
    h.cost = 1;
    h.consume = 1;
    PyObject *decision = rl_cores[d->algorithm](d, &h);
    if (decision == SLOW) {
        PyObject *part = PySequence_GetSlice(keys, at, at + count);
        decision = part ? PyObject_CallFunctionObjArgs(d->core, self->keyspace, now_obj,
                                                       now_ms_obj, part, int_one, int_one, NULL)
                        : NULL;
        Py_XDECREF(part);
    }
    if (!decision)
        return -1;
    int rc = -1;
    if (!PyTuple_Check(decision) || PyTuple_GET_SIZE(decision) < 5 ||
        !PyFloat_Check(PyTuple_GET_ITEM(decision, 3))) {
        PyErr_SetString(PyExc_TypeError, "a limiter core returned an unexpected decision");
        goto out;
    }
    PyObject *retry = PyTuple_GET_ITEM(decision, 4);
    double reset = PyFloat_AS_DOUBLE(PyTuple_GET_ITEM(decision, 3));
    items[0] = Py_NewRef(PyTuple_GET_ITEM(decision, 2));
    items[1] = PyLong_FromDouble(half_even(reset * 1e6));
    if (retry == Py_None) {
        items[2] = PyLong_FromLong(-1);
        *refused = 0;
    } else {
        double r = PyFloat_AsDouble(retry);
        items[2] = r == -1.0 && PyErr_Occurred() ? NULL : PyLong_FromDouble(half_even(r * 1e6));
        *refused = 1;
    }
    rc = items[1] && items[2] ? 0 : -1;
out:
    Py_DECREF(decision);
    return rc;
}

/* A fresh reply [0, b"", 0, 0, -2, 0, 0, -2, b"", 0]; new reference or NULL. */
static PyObject *new_reply(void) {
    static const long ints[] = {0, -1, 0, 0, -2, 0, 0, -2, -1, 0};
    PyObject *reply = PyList_New(10);
    if (!reply)
        return NULL;
    for (Py_ssize_t i = 0; i < 10; i++) {
        PyObject *v = ints[i] == -1 ? Py_NewRef(empty_bytes) : PyLong_FromLong(ints[i]);
        if (!v) {
            Py_DECREF(reply);
            return NULL;
        }
        PyList_SET_ITEM(reply, i, v);
    }
    return reply;
}

/* reply[i] = v (a new reference, stolen), dropping the item it replaces. */
static int set_item(PyObject *reply, Py_ssize_t i, PyObject *v) {
    if (!v)
        return -1;
    return PyList_SetItem(reply, i, v);
}

/* The verdict code and reason in the reply; returns the reply. */
static PyObject *verdict(PyObject *reply, long code, PyObject *reason) {
    if (set_item(reply, 0, PyLong_FromLong(code)) < 0 ||
        set_item(reply, 1, Py_NewRef(reason)) < 0) {
        Py_DECREF(reply);
        return NULL;
    }
    return reply;
}

/* The clock readings (now us, now ms) as the twin takes them: the given
 * instant or keyspace.now_us(), then keyspace.now_ms(); read here when the
 * clock is time.time. New references in *now_obj / *now_ms_obj; 0, 1 when
 * a reading is outside +-BOUND (the twin decides), or -1 on error. */
static int clock_readings(GuardCheckObject *self, PyObject *given, int64_t *now,
                          int64_t *now_ms, PyObject **now_obj, PyObject **now_ms_obj) {
    struct timespec ts = {0};
    int system = self->system_clock;
    if (system && !timespec_get(&ts, TIME_UTC)) {
        PyErr_SetString(PyExc_OSError, "timespec_get failed");
        return -1;
    }
    int64_t ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    if (given != Py_None)
        *now_obj = Py_NewRef(given);
    else if (system)
        *now_obj = PyLong_FromLongLong(floordiv(ns, 1000));
    else
        *now_obj = PyObject_CallNoArgs(self->now_us);
    if (!*now_obj)
        return -1;
    *now_ms_obj = system ? PyLong_FromLongLong(floordiv(ns, 1000000))
                         : PyObject_CallNoArgs(self->now_ms);
    if (!*now_ms_obj)
        return -1;
    return small_int(*now_obj, now) && small_int(*now_ms_obj, now_ms) ? 0 : 1;
}

/* The most keys one limiter takes (ranked.ratelimit.keys' suffixes). */
#define MAX_LIMITER_KEYS 4

/* 1 when two exact bytes objects hold the same bytes. */
static int same_bytes(PyObject *a, PyObject *b) {
    Py_ssize_t n = PyBytes_GET_SIZE(a);
    return a == b ||
           (n == PyBytes_GET_SIZE(b) && memcmp(PyBytes_AS_STRING(a), PyBytes_AS_STRING(b), n) == 0);
}

/* The call's arguments, checked, and the member's history as the step reads it. */
typedef struct {
    PyObject *member, *keys, *args; /* borrowed: the call's */
    double score, step, change, threshold;
    int has_step, has_change, has_threshold;
    int64_t ttl, span, zmin, tier, np, ni;
    int has_stats, has_last, has_base;
    double last, base, mean, m2;
    int64_t bt, n;
} state;

/* Checks the call's arguments against the guard's own call shape: 0, or 1
 * for anything else (no exception set). */
static int parse(GuardCheckObject *self, PyObject *keys, PyObject *args, state *s) {
    PyObject *const *k = PySequence_Fast_ITEMS(keys);
    PyObject *const *a = PySequence_Fast_ITEMS(args);
    Py_ssize_t nk = PySequence_Fast_GET_SIZE(keys);
    if (PySequence_Fast_GET_SIZE(args) < A_COUNT || nk < 5)
        return 1;
    s->member = a[A_MEMBER];
    int has_score;
    if (!PyBytes_CheckExact(s->member) || opt_number(a[A_SCORE], &has_score, &s->score) ||
        !has_score || int_arg(a[A_TTL], &s->ttl) || opt_number(a[A_STEP], &s->has_step, &s->step) ||
        int_arg(a[A_SPAN], &s->span) ||
        opt_number(a[A_THRESHOLD], &s->has_threshold, &s->threshold) ||
        int_arg(a[A_ZMIN], &s->zmin) || int_arg(a[A_TIER], &s->tier) ||
        int_arg(a[A_NP], &s->np) || int_arg(a[A_NI], &s->ni) || s->np < 0 || s->ni < 0 ||
        5 + s->np + s->ni > nk || (s->np && !self->player) || (s->ni && !self->ip) ||
        !PyBytes_CheckExact(a[A_HIGH]) || !PyBytes_CheckExact(a[A_OPERATOR]))
        return 1;
    if (s->span > 0 && (opt_number(a[A_CHANGE], &s->has_change, &s->change) || !s->has_change))
        return 1;
    for (Py_ssize_t i = 0; i < 5 + s->np + s->ni; i++)
        if (!PyBytes_CheckExact(k[i]))
            return 1;
    /* The keys written or read back after a write (the member's state, the nonce, the
     * limiters', the held key naming the tables) are distinct on every call the guard
     * makes; one given for two would mean another layout than the tables'. */
    PyObject *written[3 + 2 * MAX_LIMITER_KEYS];
    Py_ssize_t count = 0;
    written[count++] = k[0];
    written[count++] = k[3];
    if (s->ttl > 0)
        written[count++] = k[1];
    if (s->np + s->ni > 2 * MAX_LIMITER_KEYS)
        return 1;
    for (Py_ssize_t i = 5; i < 5 + s->np + s->ni; i++)
        written[count++] = k[i];
    for (Py_ssize_t i = 0; i < count; i++)
        for (Py_ssize_t j = i + 1; j < count; j++)
            if (same_bytes(written[i], written[j]))
                return 1;
    return 0;
}

/* The three reply items of a decision made on numbers, as limit() makes them
 * from a Decision (reset and retry through seconds, as the decoder's round
 * trip does): new references in items; 0, or -1 with an exception set. */
static int math_items(const rl_outcome *out, PyObject *items[3]) {
    items[0] = PyLong_FromDouble(out->remaining);
    items[1] = PyLong_FromDouble(half_even((out->reset_us / 1e6) * 1e6));
    items[2] = out->allowed ? PyLong_FromLong(-1)
                            : PyLong_FromDouble(half_even((out->retry_us / 1e6) * 1e6));
    return items[0] && items[1] && items[2] ? 0 : -1;
}

/* A limiter cell found in the keyspace at a limiter key, taken into `in` (its
 * numbers, as the core reads them) with its deadline in *deadline; 0, or 1
 * when its numbers are not what the cores take. */
static int cell_numbers(RateDeciderObject *d, PyObject *cell, PyObject *deadline_obj,
                        rl_state *in, int64_t *deadline) {
    return rl_cell_state(d, cell, in) && deadline_obj && small_int(deadline_obj, deadline) ? 0 : 1;
}

/* Where a limit of fixed state lives in the tables: the member's in its
 * record (with the limiter key it belongs to), the IP's in a limit record of
 * its own (its key is the limiter key). */
typedef struct {
    PyObject *holder; /* a new reference, or NULL: none yet */
    PyObject **key;   /* the member record's limiter key, or NULL */
    rl_state *state;
    int64_t *deadline;
} limit_place;

/* The place of the limit at keys[at] (the member's when `member`), made
 * when absent and `create`; 0 (place->holder NULL: absent), or -1. */
static int place_of(GuardTables *tables, PyObject *keys, Py_ssize_t at, int member, int create,
                    int64_t now_ms, limit_place *place) {
    memset(place, 0, sizeof *place);
    if (member) {
        GuardRecord *r = guard_record(tables, PySequence_Fast_GET_ITEM(keys, 0), create);
        if (r) {
            place->key = &r->limit_key;
            place->state = &r->limit;
            place->deadline = &r->limit_deadline;
        }
        place->holder = Py_XNewRef((PyObject *)r);
    } else {
        LimitRecord *r = guard_limit(tables, PySequence_Fast_GET_ITEM(keys, at), create, now_ms);
        if (r) {
            place->state = &r->state;
            place->deadline = &r->deadline;
        }
        place->holder = Py_XNewRef((PyObject *)r);
    }
    return place->holder || !PyErr_Occurred() ? 0 : -1;
}

/* Stores a limiter's state and deadline at its place (the member record's
 * limiter key set to `limit_key`). */
static void keep_limit(limit_place *place, PyObject *limit_key, const rl_state *state,
                       int64_t deadline) {
    if (place->key)
        Py_XSETREF(*place->key, Py_NewRef(limit_key));
    *place->state = *state;
    *place->deadline = deadline;
}

/* A limit of fixed state decided on the tables, the limiter's key keys[at]
 * (the member's when `member`, else the IP's): the state read (a cell left in
 * the keyspace at that key taken in first), the limiter's arithmetic, the
 * state written when it consumes. Sets the reply items and *refused; 0, or
 * -1 with an exception set. */
static int table_limit(GuardCheckObject *self, const keyspace_view *v, GuardTables *tables,
                       PyObject *keys, Py_ssize_t at, int member, int64_t now, int64_t now_ms,
                       PyObject *items[3], int *refused) {
    RateDeciderObject *d = (RateDeciderObject *)(member ? self->player : self->ip);
    rl_math math = member ? self->player_math : self->ip_math;
    PyObject *limit_key = PySequence_Fast_GET_ITEM(keys, at);
    hit h = {0};
    h.key = limit_key;
    h.now = now;
    h.now_ms = now_ms;
    PyObject *cell = NULL;
    int rc = rl_get_cell(d, &h, &cell); /* WRONGTYPE as the core raises it */
    if (rc) {
        if (rc > 0)
            PyErr_SetString(PyExc_SystemError, "the keyspace's tables changed type");
        return -1;
    }
    limit_place place;
    if (place_of(tables, keys, at, member, cell != NULL, now_ms, &place) < 0) {
        Py_XDECREF(cell);
        return -1;
    }
    if (cell) { /* a limiter's cell in the keyspace: into the tables, its key deleted */
        PyObject *deadline_obj = PyDict_GetItemWithError(v->deadlines, limit_key);
        rl_state in = {0};
        int64_t deadline = 0;
        int odd = PyErr_Occurred() ? -1 : cell_numbers(d, cell, deadline_obj, &in, &deadline);
        Py_DECREF(cell);
        if (!odd) {
            keep_limit(&place, limit_key, &in, deadline);
            odd = delete_key(v->delete, limit_key) < 0 ? -1 : 0;
        } else if (odd > 0) {
            PyErr_SetString(PyExc_TypeError, "a limiter's cell of numbers the cores do not take");
        }
        if (odd) {
            Py_DECREF(place.holder);
            return -1;
        }
    }
    rl_state in = {0};
    if (place.holder && place.state->present && now_ms <= *place.deadline &&
        (!place.key || (*place.key && same_bytes(*place.key, limit_key))))
        in = *place.state;
    Py_XDECREF(place.holder);
    rl_outcome out;
    math(d, &in, now, 1, 1, &out);
    if (out.slow) {
        PyErr_SetString(PyExc_OverflowError, "a rate-limit decision past 2**53 microseconds");
        return -1;
    }
    if (math_items(&out, items) < 0)
        return -1;
    *refused = !out.allowed;
    if (out.writes) { /* no Python code runs between the lookup and the write */
        if (place_of(tables, keys, at, member, 1, now_ms, &place) < 0)
            return -1;
        keep_limit(&place, limit_key, &out.next, now_ms + out.keep_ms);
        Py_DECREF(place.holder);
    }
    return 0;
}

/* The member's record, its history taken from a value found in the keyspace
 * at its state key first when there is one (a restored state, read by the
 * feature's helper `restored`, which refuses any other value as the twin
 * does: WRONGTYPE; then kept in the record and its key deleted). Made when
 * absent and `create`. A new reference; NULL when absent (no exception) or
 * with an exception set. */
static GuardRecord *history_record(const keyspace_view *v, GuardTables *tables,
                                   PyObject *state_key, int64_t now_ms, PyObject *now_ms_obj,
                                   int create) {
    PyObject *found = NULL;
    if (live_value(v, state_key, now_ms, now_ms_obj, &found) < 0)
        return NULL;
    GuardRecord *record = guard_record(tables, state_key, create || found != NULL);
    Py_XINCREF(record); /* held across the helper and keyspace.delete */
    if (!found || !record) {
        Py_XDECREF(found);
        return record;
    }
    PyObject *fields = PyObject_CallOneArg(v->restored, found);
    Py_DECREF(found);
    if (!fields) {
        Py_DECREF(record);
        return NULL;
    }
    PyObject *last = NULL, *base = NULL;
    int64_t bt = 0, n = 0;
    int ok = PyTuple_CheckExact(fields) && PyTuple_GET_SIZE(fields) == 6 &&
             ((last = PyTuple_GET_ITEM(fields, 0)) == Py_None || PyFloat_CheckExact(last)) &&
             ((base = PyTuple_GET_ITEM(fields, 1)) == Py_None || PyFloat_CheckExact(base)) &&
             small_int(PyTuple_GET_ITEM(fields, 2), &bt) &&
             small_int(PyTuple_GET_ITEM(fields, 3), &n) &&
             PyFloat_CheckExact(PyTuple_GET_ITEM(fields, 4)) &&
             PyFloat_CheckExact(PyTuple_GET_ITEM(fields, 5));
    if (ok) {
        record->has_stats = 1;
        record->bt = bt;
        record->n = n;
        record->has_last = last != Py_None;
        record->last = last != Py_None ? PyFloat_AS_DOUBLE(last) : 0.0;
        record->has_base = base != Py_None;
        record->base = base != Py_None ? PyFloat_AS_DOUBLE(base) : 0.0;
        record->mean = PyFloat_AS_DOUBLE(PyTuple_GET_ITEM(fields, 4));
        record->m2 = PyFloat_AS_DOUBLE(PyTuple_GET_ITEM(fields, 5));
    }
    Py_DECREF(fields);
    if (!ok)
        PyErr_SetString(PyExc_OverflowError, "a restored member state of numbers out of range");
    if (!ok || delete_key(v->delete, state_key) < 0) {
        Py_DECREF(record);
        return NULL;
    }
    return record;
}

/* The member's history into `s` (see history_record); 0, or -1 with an
 * exception set. */
static int read_history(const keyspace_view *v, GuardTables *tables, state *s, int64_t now_ms,
                        PyObject *now_ms_obj) {
    GuardRecord *record =
        history_record(v, tables, PySequence_Fast_GET_ITEM(s->keys, 0), now_ms, now_ms_obj, 0);
    if (!record)
        return PyErr_Occurred() ? -1 : 0;
    if ((s->has_stats = record->has_stats)) {
        s->has_last = record->has_last;
        s->last = record->last;
        s->has_base = record->has_base;
        s->base = record->base;
        s->bt = record->bt;
        s->n = record->n;
        s->mean = record->mean;
        s->m2 = record->m2;
    }
    Py_DECREF(record);
    return 0;
}

/* `score` counted in the record's history as the twin's _welford counts it
 * (a record without one starts as the twin's fresh cell), and made its last
 * score. */
static void count_score(GuardRecord *r, double score) {
    if (!r->has_stats) {
        r->n = 0;
        r->mean = r->m2 = r->base = 0.0;
        r->has_base = 0;
        r->bt = 0;
    }
    r->n += 1;
    double delta = score - r->mean;
    r->mean += delta / (double)r->n;
    r->m2 += delta * (score - r->mean);
    r->has_stats = r->has_last = 1;
    r->last = score;
}

/* The member's history after an accepted submission (count_score, then the
 * span's base when it is kept), in its record. 0, or -1 with an exception set. */
static int record_history(GuardTables *tables, const state *s, int keep_base, double base,
                          int64_t bt) {
    GuardRecord *r = guard_record(tables, PySequence_Fast_GET_ITEM(s->keys, 0), 1);
    if (!r)
        return -1;
    count_score(r, s->score);
    if (keep_base) {
        r->has_base = 1;
        r->base = base;
        r->bt = bt;
    }
    return 0;
}

/* What the step hands its decoding besides the reply: the z-score as a
 * double when this step computed one and a native decoding follows (the
 * reply then keeps b"" at 8 instead of its text, which only a decoder in
 * Python would read). */
typedef struct {
    int has_z;
    double z;
} step_extra;

/* The step under the lock, past the housekeeping: the reply (new reference)
 * or NULL with an exception set; *extra set as step_extra says. */
static PyObject *check_locked(GuardCheckObject *self, PyObject *keys, PyObject *args,
                              PyObject *given, step_extra *extra) {
    PyObject *now_obj = NULL, *now_ms_obj = NULL, *reply = NULL, *score_obj = NULL;
    PyObject *tier_found = NULL, *found = NULL;
    keyspace_view v = {NULL, NULL, self->get_at, self->delete, self->restored};
    GuardTables *tables = NULL;
    state s = {0};
    s.keys = keys;
    s.args = args;
    int64_t now = 0, now_ms = 0;
    int rc = clock_readings(self, given, &now, &now_ms, &now_obj, &now_ms_obj);
    if (rc) {
        if (rc > 0)
            PyErr_SetString(PyExc_ValueError, "check(): a clock reading past 2**52 microseconds");
        goto done;
    }
    if (parse(self, keys, args, &s)) {
        PyErr_SetString(PyExc_TypeError, "check() takes the guard's own keys and arguments");
        goto done;
    }
    if (view_open(self->ks_dict, &v) < 0)
        goto done;
    /* held across the Python code the step may run (get_at, the helpers) */
    tables = (GuardTables *)Py_XNewRef(
        guard_tables_of(self->ks_dict, v.values, PySequence_Fast_GET_ITEM(keys, 3)));
    if (!tables || !(reply = new_reply()))
        goto done;
    if (live_value(&v, PySequence_Fast_GET_ITEM(keys, 4), now_ms, now_ms_obj, &found) < 0)
        goto fail;
    if (found) { /* `member in banned`, whatever the value's type */
        int banned = PySequence_Contains(found, s.member);
        Py_CLEAR(found);
        if (banned < 0)
            goto fail;
        if (banned) {
            reply = verdict(reply, 1, r_banned);
            goto done;
        }
    }
    PyObject *items[3] = {NULL, NULL, NULL};
    int refused = 0;
    Py_ssize_t at = 5;
    for (int which = 0; which < 2; which++) {
        int64_t count = which ? s.ni : s.np;
        if (!count)
            continue;
        int failed = (which ? self->ip_math : self->player_math)
                         ? table_limit(self, &v, tables, keys, at, !which, now, now_ms, items,
                                       &refused)
                         : limit(self, which ? self->ip : self->player, keys, at, count, now,
                                 now_ms, now_obj, now_ms_obj, items, &refused);
        if (failed) {
            for (int i = 0; i < 3; i++)
                Py_CLEAR(items[i]);
            goto fail;
        }
        Py_ssize_t first = which ? 5 : 2;
        for (int i = 0; i < 3; i++)
            if (set_item(reply, first + i, items[i]) < 0) {
                for (int j = i + 1; j < 3; j++)
                    Py_DECREF(items[j]);
                goto fail;
            }
        if (refused) {
            reply = verdict(reply, 1, which ? r_rate_ip : r_rate);
            goto done;
        }
        at += count;
    }
    if (s.ttl > 0) {
        PyObject *nonce_key = PySequence_Fast_GET_ITEM(keys, 1);
        int replayed = guard_nonce_live(tables, nonce_key, now_ms);
        if (replayed == 0) {
            if (live_value(&v, nonce_key, now_ms, now_ms_obj, &found) < 0)
                goto fail;
            replayed = found != NULL;
            Py_CLEAR(found);
        }
        if (replayed < 0)
            goto fail;
        if (replayed) {
            reply = verdict(reply, 1, r_replayed);
            goto done;
        }
    }
    if (read_history(&v, tables, &s, now_ms, now_ms_obj) < 0)
        goto fail;
    if (s.has_step && s.has_last && fabs(s.score - s.last) > s.step) {
        reply = verdict(reply, 1, r_step);
        goto done;
    }
    int has_base = s.has_stats ? s.has_base : 0;
    double base = s.has_stats ? s.base : 0.0;
    int64_t bt = s.has_stats ? s.bt : 0;
    if (s.span > 0 && s.has_last) {
        if (!has_base || now - bt >= s.span) {
            has_base = 1;
            base = s.last;
            bt = now;
        }
        if (fabs(s.score - base) > s.change) {
            reply = verdict(reply, 1, r_span);
            goto done;
        }
    }
    PyObject *held = NULL; /* borrowed: a reason constant */
    if (s.has_threshold && s.has_stats && s.n >= s.zmin) {
        if (s.n < 2) { /* the twin's m2 / (n - 1) */
            PyErr_SetString(PyExc_ZeroDivisionError, "float division by zero");
            goto fail;
        }
        double var = s.m2 / (double)(s.n - 1);
        if (var > 0) {
            double z = (s.score - s.mean) / sqrt(var);
            if (self->checked) { /* decoded natively: the double itself, no text */
                extra->has_z = 1;
                extra->z = z;
            } else {
                char *text = PyOS_double_to_string(z, 'g', 17, 0, NULL);
                PyObject *zb = text ? PyBytes_FromString(text) : NULL;
                PyMem_Free(text);
                if (set_item(reply, 8, zb) < 0)
                    goto fail;
            }
            if (fabs(z) > s.threshold)
                held = r_zscore;
        }
    }
    PyObject *const *a = PySequence_Fast_ITEMS(args);
    if (!held && s.tier > 0) { /* the feature's helper: (rank, held reason or None) */
        if (!(score_obj = PyFloat_FromDouble(s.score)))
            goto fail;
        tier_found = PyObject_CallFunctionObjArgs(
            self->tier, self->keyspace, now_ms_obj, PySequence_Fast_GET_ITEM(keys, 2), s.member,
            score_obj, a[A_HIGH], a[A_OPERATOR], a[A_TIER], NULL);
        if (tier_found &&
            (!PyTuple_CheckExact(tier_found) || PyTuple_GET_SIZE(tier_found) != 2)) {
            PyErr_SetString(PyExc_TypeError, "the tier helper returned no (rank, reason)");
            Py_CLEAR(tier_found);
        }
        if (!tier_found || set_item(reply, 9, Py_NewRef(PyTuple_GET_ITEM(tier_found, 0))) < 0)
            goto fail;
        if (PyTuple_GET_ITEM(tier_found, 1) != Py_None)
            held = PyTuple_GET_ITEM(tier_found, 1); /* held by tier_found until done */
    }
    if (s.ttl > 0 &&
        guard_nonce_add(tables, PySequence_Fast_GET_ITEM(keys, 1), now_ms + s.ttl, now_ms) < 0)
        goto fail;
    if (held) {
        reply = verdict(reply, 2, held);
        goto done;
    }
    if (record_history(tables, &s, s.span > 0 && has_base, base, bt) < 0)
        goto fail;
    goto done;
fail:
    Py_CLEAR(reply);
done:
    Py_XDECREF(tables);
    Py_XDECREF(found);
    view_close(&v);
    Py_XDECREF(tier_found);
    Py_XDECREF(score_obj);
    Py_XDECREF(now_obj);
    Py_XDECREF(now_ms_obj);
    return reply;
}

/* A limiter's part of the decoded reply: None when the limiter is absent or
 * did not run (retry -2), else its Decision from (remaining, reset us, retry
 * us; retry -1 when allowed) as the limiter's decoder makes it
 * (ranked/ratelimit/_procedures.py, decoder). A new reference, or NULL with an
 * exception set. */
static PyObject *decoded_limit(PyObject *decider, PyObject *reply, Py_ssize_t at) {
    PyObject *remaining = PyList_GET_ITEM(reply, at), *reset = PyList_GET_ITEM(reply, at + 1);
    PyObject *retry = PyList_GET_ITEM(reply, at + 2);
    if (!decider)
        Py_RETURN_NONE;
    long long retry_us = PyLong_AsLongLong(retry);
    if (retry_us == -1 && PyErr_Occurred())
        return NULL;
    if (retry_us == -2)
        Py_RETURN_NONE;
    double reset_us = PyLong_AsDouble(reset);
    if (reset_us == -1.0 && PyErr_Occurred())
        return NULL;
    int allowed = retry_us < 0;
    PyObject *retry_s = allowed ? Py_NewRef(Py_None) : PyFloat_FromDouble((double)retry_us / 1e6);
    return rl_decision((RateDeciderObject *)decider, allowed, Py_NewRef(remaining),
                       reset_us / 1e6, retry_s);
}

/* Whether `reply` has the 10-item form check_locked builds (ints, bytes at
 * 1 and 8; see to_checked), not the twin's: 1 or 0. */
static int is_native_reply(PyObject *reply) {
    if (!PyList_CheckExact(reply) || PyList_GET_SIZE(reply) != 10)
        return 0;
    for (Py_ssize_t i = 0; i < 10; i++) {
        PyObject *item = PyList_GET_ITEM(reply, i);
        if (i == 1 || i == 8 ? !PyBytes_CheckExact(item) : !PyLong_CheckExact(item))
            return 0;
    }
    return 1;
}

/* The raw reply decoded as the feature's decoder decodes it
 * (ranked/guard/_procedures.py, _check_decoder): Checked(code, reason as
 * text, the member's and the IP's Decisions or None, the z-score or None,
 * the rank or None). The reply (borrowed) is of the native form (is_native_reply):
 * a list of 10 ints, but bytes at 1 and 8; the z-score is extra's when it has
 * one (this step's), else the text at 8 (a twin's reply; extra may be NULL).
 * A new reference, or NULL with an exception set. */
static PyObject *to_checked(GuardCheckObject *self, PyObject *reply, const step_extra *extra) {
    PyObject *items[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
    PyObject *reason = PyList_GET_ITEM(reply, 1), *z = PyList_GET_ITEM(reply, 8);
    PyObject *rank = PyList_GET_ITEM(reply, 9), *found = NULL;
    items[0] = Py_NewRef(PyList_GET_ITEM(reply, 0));
    items[1] = PyUnicode_DecodeUTF8(PyBytes_AS_STRING(reason), PyBytes_GET_SIZE(reason), NULL);
    if (!items[1] || !(items[2] = decoded_limit(self->player, reply, 2)) ||
        !(items[3] = decoded_limit(self->ip, reply, 5)))
        goto out;
    if (extra && extra->has_z)
        items[4] = PyFloat_FromDouble(extra->z);
    else
        items[4] = PyBytes_GET_SIZE(z) ? PyFloat_FromString(z) : Py_NewRef(Py_None);
    int zero = PyObject_Not(rank);
    items[5] = zero ? Py_NewRef(Py_None) : Py_NewRef(rank);
    if (!items[4] || zero < 0)
        goto out;
    PyTypeObject *type = (PyTypeObject *)self->checked;
    if (!(found = type->tp_alloc(type, 6)))
        goto out;
    for (Py_ssize_t i = 0; i < 6; i++) {
        PyTuple_SET_ITEM(found, i, items[i]);
        items[i] = NULL;
    }
out:
    for (Py_ssize_t i = 0; i < 6; i++)
        Py_XDECREF(items[i]);
    return found;
}

/* check(keys, args, now_us=None): the bound operation. Borrowed arguments; a
 * new reference (the decoded reply, or the reply without a decoder), or NULL
 * with an exception set (the lock released in every case). */
static PyObject *GuardCheck_call(PyObject *callable, PyObject *const *argv, size_t nargsf,
                                 PyObject *kwnames) {
    GuardCheckObject *self = (GuardCheckObject *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs < 2 || nargs > 3 || (kwnames && PyTuple_GET_SIZE(kwnames))) {
        PyErr_SetString(PyExc_TypeError, "check() takes keys, args, now_us=None");
        return NULL;
    }
    PyObject *keys = PySequence_Fast(argv[0], "check(): keys must be a sequence");
    PyObject *args = keys ? PySequence_Fast(argv[1], "check(): args must be a sequence") : NULL;
    PyObject *given = nargs == 3 ? argv[2] : Py_None;
    PyObject *decode = Py_XNewRef(self->decode), *release = Py_NewRef(self->release);
    PyObject *result = NULL;
    if (!args)
        goto out;
    PyObject *taken = PyObject_CallNoArgs(self->acquire);
    if (!taken)
        goto out;
    Py_DECREF(taken);
    if (self->every > 0 && ++self->calls >= self->every) {
        self->calls = 0;
        PyObject *expired = PyObject_CallNoArgs(self->expire);
        if (!expired) {
            result = native_release(release, NULL);
            goto out;
        }
        Py_DECREF(expired);
    }
    step_extra extra = {0, 0.0};
    result = native_release(release, check_locked(self, keys, args, given, &extra));
    if (result && self->checked && is_native_reply(result)) { /* else the twin's: decoder */
        PyObject *decoded = to_checked(self, result, &extra);
        Py_DECREF(result);
        result = decoded;
    } else if (result && decode != Py_None) {
        PyObject *decoded = PyObject_CallOneArg(decode, result);
        Py_DECREF(result);
        result = decoded;
    }
out:
    Py_XDECREF(keys);
    Py_XDECREF(args);
    Py_XDECREF(decode);
    Py_DECREF(release);
    return result;
}

#define OBJECT_FIELDS(X)                                                                       \
    X(keyspace) X(ks_dict) X(acquire) X(release) X(expire) X(now_us) X(now_ms) X(get_at)       \
    X(delete) X(player) X(ip) X(restored) X(tier) X(decode) X(checked)

/* GC: visit every object held. */
static int GuardCheck_traverse(GuardCheckObject *self, visitproc visit, void *arg) {
#define VISIT(f) Py_VISIT(self->f);
    OBJECT_FIELDS(VISIT)
#undef VISIT
    return 0;
}

/* GC: drop every object held. */
static int GuardCheck_clear(GuardCheckObject *self) {
#define CLEAR(f) Py_CLEAR(self->f);
    OBJECT_FIELDS(CLEAR)
#undef CLEAR
    return 0;
}

/* Untrack, drop the references, free. */
static void GuardCheck_dealloc(GuardCheckObject *self) {
    PyObject_GC_UnTrack(self);
    GuardCheck_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The arithmetic of `decider`'s algorithm when its state is fixed (GCRA, the
 * token bucket: kept in the tables), else NULL (kept in the keyspace). */
static rl_math fixed_state_math(PyObject *decider) {
    if (!decider)
        return NULL;
    int algorithm = ((RateDeciderObject *)decider)->algorithm;
    return algorithm == ALG_GCRA ? rl_gcra_math : algorithm == ALG_BUCKET ? rl_bucket_math : NULL;
}

/* GuardCheck(keyspace, lock, every, expire, system_clock, player, ip,
 * restored, tier, decode, checked): see _native.pyi and
 * ranked/backends/native/guard.py; a new reference, or NULL with TypeError /
 * ValueError. */
static PyObject *GuardCheck_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    PyObject *keyspace, *lock, *expire, *player, *ip, *restored, *tier, *decode;
    PyObject *checked = Py_None;
    Py_ssize_t every;
    int system_clock;
    if (kwds && PyDict_GET_SIZE(kwds)) {
        PyErr_SetString(PyExc_TypeError, "GuardCheck takes positional arguments only");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "OOnOpOOOOO|O:GuardCheck", &keyspace, &lock, &every, &expire,
                          &system_clock, &player, &ip, &restored, &tier, &decode, &checked))
        return NULL;
    if (every < 0 || (player != Py_None && !rl_is_decider(player)) ||
        (ip != Py_None && !rl_is_decider(ip)) || !PyCallable_Check(restored) ||
        !PyCallable_Check(tier) || !PyCallable_Check(expire) ||
        (decode != Py_None && !PyCallable_Check(decode)) ||
        (checked != Py_None &&
         (!PyType_Check(checked) || !PyType_IsSubtype((PyTypeObject *)checked, &PyTuple_Type)))) {
        PyErr_SetString(PyExc_ValueError, "GuardCheck: unsupported arguments");
        return NULL;
    }
    GuardCheckObject *self = (GuardCheckObject *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    self->vectorcall = GuardCheck_call;
    self->every = every;
    self->system_clock = system_clock;
    self->keyspace = Py_NewRef(keyspace);
    self->expire = Py_NewRef(expire);
    self->player = player == Py_None ? NULL : Py_NewRef(player);
    self->ip = ip == Py_None ? NULL : Py_NewRef(ip);
    self->player_math = fixed_state_math(self->player);
    self->ip_math = fixed_state_math(self->ip);
    self->restored = Py_NewRef(restored);
    self->tier = Py_NewRef(tier);
    self->decode = Py_NewRef(decode);
    self->checked = checked == Py_None || decode == Py_None ? NULL : Py_NewRef(checked);
    if (!(self->ks_dict = PyObject_GenericGetDict(keyspace, NULL)) ||
        native_method(&self->acquire, lock, "acquire") ||
        native_method(&self->release, lock, "release") ||
        native_method(&self->now_us, keyspace, "now_us") ||
        native_method(&self->now_ms, keyspace, "now_ms") ||
        native_method(&self->get_at, keyspace, "get_at") ||
        native_method(&self->delete, keyspace, "delete"))
        goto error;
    return (PyObject *)self;
error:
    Py_DECREF(self);
    return NULL;
}

static PyTypeObject GuardCheckType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ranked.backends.native._native.GuardCheck",
    .tp_doc = "The write guard's check step on memory: check(keys, args, now_us=None).",
    .tp_basicsize = sizeof(GuardCheckObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = GuardCheck_new,
    .tp_dealloc = (destructor)GuardCheck_dealloc,
    .tp_traverse = (traverseproc)GuardCheck_traverse,
    .tp_clear = (inquiry)GuardCheck_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(GuardCheckObject, vectorcall),
};

/* guard_promote(keyspace, held_key, state_key, score, now_us, restored): a
 * promoted submission's score counted in its member's history in the board's
 * tables, as the twin's claim counts it (Welford, then the last score and the
 * span's base at the score, the base's instant now_us); the history taken
 * from the keyspace first as the check takes it (see history_record). Called
 * by the claim step's native form (ranked/backends/native/guard.py) holding
 * the backend's lock. None, or NULL with an exception set. */
static PyObject *guard_promote(PyObject *module, PyObject *const *argv, Py_ssize_t nargs) {
    if (nargs != 6 || !PyBytes_CheckExact(argv[1]) || !PyBytes_CheckExact(argv[2]) ||
        !PyFloat_CheckExact(argv[3])) {
        PyErr_SetString(PyExc_TypeError,
                        "guard_promote(keyspace, held_key, state_key, score, now_us, restored)");
        return NULL;
    }
    int64_t now_us, now_ms;
    if (!small_int(argv[4], &now_us)) {
        PyErr_SetString(PyExc_ValueError, "guard_promote: now_us past 2**52");
        return NULL;
    }
    PyObject *ks_dict = PyObject_GenericGetDict(argv[0], NULL), *now_ms_obj = NULL;
    PyObject *get_at = NULL, *delete = NULL, *result = NULL;
    keyspace_view v = {NULL, NULL, NULL, NULL, argv[5]};
    GuardTables *tables = NULL;
    GuardRecord *record = NULL;
    if (!ks_dict || view_open(ks_dict, &v) < 0 || native_method(&get_at, argv[0], "get_at") ||
        native_method(&delete, argv[0], "delete") ||
        !(now_ms_obj = PyObject_CallMethod(argv[0], "now_ms", NULL)))
        goto out;
    v.get_at = get_at;
    v.delete = delete;
    if (!small_int(now_ms_obj, &now_ms)) {
        PyErr_SetString(PyExc_ValueError, "guard_promote: a clock reading past 2**52");
        goto out;
    }
    if (!(tables = (GuardTables *)Py_XNewRef(guard_tables_of(ks_dict, v.values, argv[1]))) ||
        !(record = history_record(&v, tables, argv[2], now_ms, now_ms_obj, 1)))
        goto out;
    double score = PyFloat_AS_DOUBLE(argv[3]);
    count_score(record, score);
    record->has_base = 1;
    record->base = score;
    record->bt = now_us;
    result = Py_NewRef(Py_None);
out:
    Py_XDECREF(record);
    Py_XDECREF(tables);
    Py_XDECREF(now_ms_obj);
    Py_XDECREF(get_at);
    Py_XDECREF(delete);
    view_close(&v);
    Py_XDECREF(ks_dict);
    return result;
}

static PyMethodDef guard_check_methods[] = {
    {"guard_promote", (PyCFunction)(void (*)(void))guard_promote, METH_FASTCALL,
     "guard_promote(keyspace, held_key, state_key, score, now_us, restored): a promoted "
     "score counted in the member's history in the write guard's native tables."},
    {NULL, NULL, 0, NULL},
};

/* Registers GuardCheck, its constants and the tables; 0, or -1 with an exception set. */
int guard_check_add_to_module(PyObject *m) {
    if (!(s_values = PyUnicode_InternFromString("_values")) ||
        !(s_deadlines = PyUnicode_InternFromString("_deadlines")) ||
        !(empty_bytes = PyBytes_FromStringAndSize("", 0)) || !(int_one = PyLong_FromLong(1)) ||
        !(r_banned = PyBytes_FromString("banned")) ||
        !(r_rate = PyBytes_FromString("rate-limited")) ||
        !(r_rate_ip = PyBytes_FromString("rate-limited-ip")) ||
        !(r_replayed = PyBytes_FromString("replayed-nonce")) ||
        !(r_step = PyBytes_FromString("velocity-step")) ||
        !(r_span = PyBytes_FromString("velocity-span")) ||
        !(r_zscore = PyBytes_FromString("z-score")))
        return -1;
    if (guard_tables_add_to_module(m) < 0 || PyModule_AddFunctions(m, guard_check_methods) < 0 ||
        PyType_Ready(&GuardCheckType) < 0)
        return -1;
    Py_INCREF(&GuardCheckType);
    if (PyModule_AddObject(m, "GuardCheck", (PyObject *)&GuardCheckType) < 0) {
        Py_DECREF(&GuardCheckType);
        return -1;
    }
    return 0;
}
