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
 * IP's rate limits (the limiters' own C cores, rl_cores.c, on RateDecider
 * objects built as configuration holders), the nonce, the velocity cap, the
 * z-score (Welford state in the twin's _Stats cell, read and written through
 * its __slots__ offsets), the pending tier (the feature's own Python helper:
 * a sorted-set read), then the writes; it returns the twin's reply, decoded
 * by the feature's decoder when one is given.
 *
 * Everything it reads before the first write is checked first: a key's value
 * of an unusual type, a deadline passed (the twin's get_at would delete the
 * key), an argument of an unexpected type, a limiter core handing back
 * (SLOW: its Python core then decides). Anything unusual before the first
 * write runs the Python twin instead for the whole step, so that case is
 * decided exactly as the reference decides it.
 *
 * Python code runs only through the keyspace's own methods (store,
 * put_deadline, now_us, now_ms, expire_pending), the feature's helpers (the
 * twin, the tier, the decoder, the cell type) and the limiters' Python cores:
 * every object used across those calls is held by a strong reference.
 * tests/guard/test_native_check.py drives this and the twin side by side.
 */
#include "rl_fast.h"

#include <time.h>

/* The slots of the twin's _Stats cell, in the order of `slot_names`. */
enum { S_LAST, S_BASE, S_BT, S_N, S_MEAN, S_M2, S_COUNT };

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
    Py_ssize_t slots[S_COUNT];
    PyObject *keyspace, *ks_dict, *acquire, *release, *expire, *now_us, *now_ms;
    PyObject *store, *put_deadline, *player, *ip, *stats_type, *twin, *tier, *decode;
    PyObject *checked; /* the decoded reply's type (NULL: call `decode`), see to_checked */
    PyObject *probe; /* a fresh state cell: what a new one holds (its fields, its slots) */
} GuardCheckObject;

static PyObject *s_values, *s_deadlines, *s_listpack, *s_heap, *heappush;
static PyObject *empty_bytes, *one_bytes, *int_one;
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

/* A float or None slot: 1 when `v` is None (*has 0) or an exact float. */
static int float_or_none(PyObject *v, int *has, double *out) {
    if (v == Py_None) {
        *has = 0;
        return 1;
    }
    if (v && PyFloat_CheckExact(v)) {
        *has = 1;
        *out = PyFloat_AS_DOUBLE(v);
        return 1;
    }
    return 0;
}

/* A keyspace table (_values, _deadlines) held: a new reference, or NULL when
 * missing or not an exact dict (an exception set only if the lookup raised). */
static PyObject *ks_table(GuardCheckObject *self, PyObject *name) {
    PyObject *t = PyDict_GetItemWithError(self->ks_dict, name);
    if (!t || !PyDict_CheckExact(t))
        return NULL;
    return Py_NewRef(t);
}

/* The value at `key` when it is live with no deadline or a deadline not
 * passed (the twin's get_at would return it as it is): 0 with a new
 * reference in *value (NULL: absent); 1 when get_at would do more (a passed
 * deadline, an emptied container) or the tables look unusual; -1 on error. */
static int peek(GuardCheckObject *self, PyObject *values, PyObject *deadlines, PyObject *key,
                int64_t now_ms, PyObject **value) {
    *value = Py_XNewRef(PyDict_GetItemWithError(values, key));
    if (!*value)
        return PyErr_Occurred() ? -1 : 0;
    PyObject *deadline = PyDict_GetItemWithError(deadlines, key);
    int64_t when;
    int usual = 1;
    if (deadline)
        usual = small_int(deadline, &when) && now_ms <= when;
    else if (PyErr_Occurred())
        usual = -1;
    if (usual == 1 && !PyBytes_Check(*value)) {
        Py_ssize_t size = PyObject_Length(*value);
        usual = size > 0 ? 1 : (size == 0 ? 0 : -1);
    }
    if (usual == 1)
        return 0;
    Py_CLEAR(*value);
    if (usual < 0 || PyErr_Occurred())
        return -1;
    return 1;
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
    return n == PyBytes_GET_SIZE(b) && memcmp(PyBytes_AS_STRING(a), PyBytes_AS_STRING(b), n) == 0;
}

/* What the step reads before its first write, checked. */
typedef struct {
    PyObject *member, *keys, *args;     /* borrowed: the call's */
    double score, step, change, threshold;
    int has_step, has_change, has_threshold;
    int64_t ttl, span, zmin, tier, np, ni;
    int banned, replayed;
    PyObject *cell; /* the member's _Stats (strong), or NULL */
    int has_last, has_base;
    double last, base, mean, m2;
    int64_t bt, n;
} state;

/* Reads and checks everything the step needs before its first write: 0, 1
 * when the twin must decide instead (nothing written), -1 on error. */
static int prepare(GuardCheckObject *self, PyObject *keys, PyObject *args, int64_t now_ms,
                   state *s) {
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
     * limiters') are distinct on every call the guard makes; a caller repeating one
     * would see the twin's order of reads and writes: the twin decides. */
    PyObject *written[2 + 2 * MAX_LIMITER_KEYS];
    Py_ssize_t count = 0;
    written[count++] = k[0];
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
    PyObject *values = ks_table(self, s_values);
    PyObject *deadlines = values ? ks_table(self, s_deadlines) : NULL;
    if (!deadlines) {
        Py_XDECREF(values);
        return PyErr_Occurred() ? -1 : 1;
    }
    PyObject *banned = NULL, *nonce = NULL;
    int rc = peek(self, values, deadlines, k[4], now_ms, &banned);
    if (rc)
        goto out;
    if (banned) {
        if (!PySet_CheckExact(banned)) {
            rc = 1;
            goto out;
        }
        if ((s->banned = PySet_Contains(banned, s->member)) < 0) {
            rc = -1;
            goto out;
        }
    }
    if (s->ttl > 0) {
        if ((rc = peek(self, values, deadlines, k[1], now_ms, &nonce)))
            goto out;
        s->replayed = nonce != NULL;
    }
    if ((rc = peek(self, values, deadlines, k[0], now_ms, &s->cell)))
        goto out;
    if (s->cell) {
        PyObject *has_deadline = PyDict_GetItemWithError(deadlines, k[0]);
        PyObject *cell = s->cell;
        if (has_deadline || PyErr_Occurred() || !Py_IS_TYPE(cell, (PyTypeObject *)self->stats_type) ||
            !float_or_none(slot_get(cell, self->slots[S_LAST]), &s->has_last, &s->last) ||
            !float_or_none(slot_get(cell, self->slots[S_BASE]), &s->has_base, &s->base) ||
            !small_int(slot_get(cell, self->slots[S_BT]), &s->bt) ||
            !small_int(slot_get(cell, self->slots[S_N]), &s->n) || s->n < 0 ||
            !slot_get(cell, self->slots[S_MEAN]) ||
            !PyFloat_CheckExact(slot_get(cell, self->slots[S_MEAN])) ||
            !slot_get(cell, self->slots[S_M2]) ||
            !PyFloat_CheckExact(slot_get(cell, self->slots[S_M2]))) {
            rc = PyErr_Occurred() ? -1 : 1;
            goto out;
        }
        s->mean = PyFloat_AS_DOUBLE(slot_get(cell, self->slots[S_MEAN]));
        s->m2 = PyFloat_AS_DOUBLE(slot_get(cell, self->slots[S_M2]));
        /* the twin divides by n - 1: a history of one under the threshold is its case */
        if (s->has_threshold && s->n >= s->zmin && s->n < 2) {
            rc = 1;
            goto out;
        }
    }
out:
    if (rc)
        Py_CLEAR(s->cell);
    Py_XDECREF(banned);
    Py_XDECREF(nonce);
    Py_DECREF(values);
    Py_DECREF(deadlines);
    return rc;
}

/* Keyspace.store(key, value) (no deadline, not listpack) on the held tables;
 * 0, or -1 with an exception set. */
static int store_value(GuardCheckObject *self, PyObject *key, PyObject *value) {
    PyObject *values = ks_table(self, s_values);
    PyObject *deadlines = values ? ks_table(self, s_deadlines) : NULL;
    PyObject *listpack = deadlines ? Py_XNewRef(PyDict_GetItemWithError(self->ks_dict, s_listpack))
                                   : NULL;
    int rc = -1;
    if (!listpack || !PySet_CheckExact(listpack)) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_SystemError, "keyspace tables changed type");
        goto out;
    }
    int has = PyDict_Contains(deadlines, key);
    if (has < 0 || (has && PyDict_DelItem(deadlines, key) < 0) ||
        PySet_Discard(listpack, key) < 0 || PyDict_SetItem(values, key, value) < 0)
        goto out;
    rc = 0;
out:
    Py_XDECREF(listpack);
    Py_XDECREF(deadlines);
    Py_XDECREF(values);
    return rc;
}

/* The nonce as the twin writes it: store(key, b"1"), then put_deadline(key,
 * when) (Keyspace._set_deadline: the deadline, a heap entry; the heap's
 * rebuild, when due, through the Python method). 0, or -1 with an exception. */
static int set_nonce(GuardCheckObject *self, PyObject *key, int64_t when) {
    if (store_value(self, key, one_bytes) < 0)
        return -1;
    PyObject *deadlines = ks_table(self, s_deadlines);
    PyObject *heap = deadlines ? Py_XNewRef(PyDict_GetItemWithError(self->ks_dict, s_heap)) : NULL;
    PyObject *value = PyLong_FromLongLong(when);
    int rc = -1;
    if (!value || PyErr_Occurred())
        goto out;
    if (heap && PyList_CheckExact(heap)) {
        int has = PyDict_Contains(deadlines, key); /* absent after the store, unless a
                                                      stored key's __eq__ put it back */
        if (has < 0)
            goto out;
        Py_ssize_t after = PyDict_GET_SIZE(deadlines) + (has ? 0 : 1);
        if (PyList_GET_SIZE(heap) + 1 <= 2 * after + 64) {
            PyObject *entry = PyTuple_Pack(2, value, key);
            PyObject *pushed = NULL;
            if (entry && PyDict_SetItem(deadlines, key, value) == 0)
                pushed = PyObject_CallFunctionObjArgs(heappush, heap, entry, NULL);
            Py_XDECREF(entry);
            rc = pushed ? 0 : -1;
            Py_XDECREF(pushed);
            goto out;
        }
    }
    PyObject *r = PyObject_CallFunctionObjArgs(self->put_deadline, key, value, NULL);
    rc = r ? 0 : -1;
    Py_XDECREF(r);
out:
    Py_XDECREF(value);
    Py_XDECREF(heap);
    Py_XDECREF(deadlines);
    return rc;
}

/* A new state cell as the type's __init__ makes it (the probe's fields and
 * slots, copied) without running it; a new reference or NULL. */
static PyObject *new_stats(GuardCheckObject *self) {
    PyTypeObject *type = (PyTypeObject *)self->stats_type;
    PyObject *empty = PyTuple_New(0);
    PyObject *cell = empty ? type->tp_new(type, empty, NULL) : NULL;
    Py_XDECREF(empty);
    if (!cell)
        return NULL;
    if (PyDict_Update(cell, self->probe) < 0) {
        Py_DECREF(cell);
        return NULL;
    }
    for (int i = 0; i < S_COUNT; i++) {
        PyObject *v = slot_get(self->probe, self->slots[i]);
        if (!v || slot_set(cell, self->slots[i], Py_NewRef(v)) < 0) {
            if (!v)
                PyErr_SetString(PyExc_SystemError, "the state's probe has an unset slot");
            Py_DECREF(cell);
            return NULL;
        }
    }
    return cell;
}

/* The member's state after an accepted submission (Welford as _welford, then
 * last and the span's base); the cell made and stored when absent. 0 or -1. */
static int record_state(GuardCheckObject *self, state *s, PyObject *score_obj, int keep_base,
                        PyObject *base_obj, int64_t bt) {
    PyObject *cell = s->cell ? Py_NewRef(s->cell) : NULL;
    int64_t n = 0;
    double mean = 0.0, m2 = 0.0;
    if (cell) {
        n = s->n;
        mean = s->mean;
        m2 = s->m2;
    } else {
        cell = new_stats(self);
        if (!cell || store_value(self, PySequence_Fast_GET_ITEM(s->keys, 0), cell) < 0) {
            Py_XDECREF(cell);
            return -1;
        }
    }
    n += 1;
    double delta = s->score - mean;
    mean += delta / (double)n;
    m2 += delta * (s->score - mean);
    int rc = -1;
    if (slot_set(cell, self->slots[S_N], PyLong_FromLongLong(n)) == 0 &&
        slot_set(cell, self->slots[S_MEAN], PyFloat_FromDouble(mean)) == 0 &&
        slot_set(cell, self->slots[S_M2], PyFloat_FromDouble(m2)) == 0 &&
        slot_set(cell, self->slots[S_LAST], Py_NewRef(score_obj)) == 0 &&
        (!keep_base || (slot_set(cell, self->slots[S_BASE], Py_NewRef(base_obj)) == 0 &&
                        slot_set(cell, self->slots[S_BT], PyLong_FromLongLong(bt)) == 0)))
        rc = 0;
    Py_DECREF(cell);
    return rc;
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
    PyObject *base_obj = NULL, *tier_found = NULL;
    state s = {0};
    s.keys = keys;
    s.args = args;
    int64_t now = 0, now_ms = 0;
    int rc = clock_readings(self, given, &now, &now_ms, &now_obj, &now_ms_obj);
    if (rc < 0)
        goto done;
    if (rc == 0 && (rc = prepare(self, keys, args, now_ms, &s)) < 0)
        goto done;
    if (rc) { /* the twin decides the whole step: nothing was written */
        reply = PyObject_CallFunctionObjArgs(self->twin, self->keyspace, now_obj, keys, args, NULL);
        goto done;
    }
    if (!(reply = new_reply()))
        goto done;
    if (s.banned) {
        reply = verdict(reply, 1, r_banned);
        goto done;
    }
    PyObject *items[3] = {NULL, NULL, NULL};
    int refused = 0;
    Py_ssize_t at = 5;
    for (int which = 0; which < 2; which++) {
        int64_t count = which ? s.ni : s.np;
        if (!count)
            continue;
        PyObject *decider = which ? self->ip : self->player;
        if (limit(self, decider, keys, at, count, now, now_ms, now_obj, now_ms_obj, items,
                  &refused) < 0) {
            Py_XDECREF(items[0]);
            Py_XDECREF(items[1]);
            Py_XDECREF(items[2]);
            Py_CLEAR(reply);
            goto done;
        }
        Py_ssize_t first = which ? 5 : 2;
        for (int i = 0; i < 3; i++)
            if (set_item(reply, first + i, items[i]) < 0) {
                for (int j = i + 1; j < 3; j++)
                    Py_DECREF(items[j]);
                Py_CLEAR(reply);
                goto done;
            }
        if (refused) {
            reply = verdict(reply, 1, which ? r_rate_ip : r_rate);
            goto done;
        }
        at += count;
    }
    if (s.ttl > 0 && s.replayed) {
        reply = verdict(reply, 1, r_replayed);
        goto done;
    }
    if (s.has_step && s.has_last && fabs(s.score - s.last) > s.step) {
        reply = verdict(reply, 1, r_step);
        goto done;
    }
    int has_base = s.cell ? s.has_base : 0;
    double base = s.cell ? s.base : 0.0;
    int64_t bt = s.cell ? s.bt : 0;
    int rebased = 0;
    if (s.span > 0 && s.has_last) {
        if (!has_base || now - bt >= s.span) {
            has_base = 1;
            base = s.last;
            bt = now;
            rebased = 1;
        }
        if (fabs(s.score - base) > s.change) {
            reply = verdict(reply, 1, r_span);
            goto done;
        }
    }
    PyObject *held = NULL; /* borrowed: a reason constant */
    if (s.has_threshold && s.cell && s.n >= s.zmin) {
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
                if (set_item(reply, 8, zb) < 0) {
                    Py_CLEAR(reply);
                    goto done;
                }
            }
            if (fabs(z) > s.threshold)
                held = r_zscore;
        }
    }
    PyObject *const *a = PySequence_Fast_ITEMS(args);
    score_obj = PyFloat_FromDouble(s.score);
    if (!score_obj) {
        Py_CLEAR(reply);
        goto done;
    }
    if (!held && s.tier > 0) { /* the feature's helper: (rank, held reason or None) */
        tier_found = PyObject_CallFunctionObjArgs(
            self->tier, self->keyspace, now_ms_obj, PySequence_Fast_GET_ITEM(keys, 2), s.member,
            score_obj, a[A_HIGH], a[A_OPERATOR], a[A_TIER], NULL);
        if (tier_found &&
            (!PyTuple_CheckExact(tier_found) || PyTuple_GET_SIZE(tier_found) != 2)) {
            PyErr_SetString(PyExc_TypeError, "the tier helper returned no (rank, reason)");
            Py_CLEAR(tier_found);
        }
        if (!tier_found ||
            set_item(reply, 9, Py_NewRef(PyTuple_GET_ITEM(tier_found, 0))) < 0) {
            Py_CLEAR(reply);
            goto done;
        }
        if (PyTuple_GET_ITEM(tier_found, 1) != Py_None)
            held = PyTuple_GET_ITEM(tier_found, 1); /* held by tier_found until done */
    }
    if (s.ttl > 0 && set_nonce(self, PySequence_Fast_GET_ITEM(keys, 1), now_ms + s.ttl) < 0) {
        Py_CLEAR(reply);
        goto done;
    }
    if (held) {
        reply = verdict(reply, 2, held);
        goto done;
    }
    int keep_base = s.span > 0 && has_base;
    if (keep_base) {
        if (rebased) /* the base is the last score: the cell's own object */
            base_obj = Py_NewRef(slot_get(s.cell, self->slots[S_LAST]));
        else
            base_obj = Py_NewRef(slot_get(s.cell, self->slots[S_BASE]));
    }
    if (record_state(self, &s, score_obj, keep_base, base_obj, bt) < 0)
        Py_CLEAR(reply);
done:
    Py_XDECREF(tier_found);
    Py_XDECREF(base_obj);
    Py_XDECREF(score_obj);
    Py_XDECREF(s.cell);
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
    X(keyspace) X(ks_dict) X(acquire) X(release) X(expire) X(now_us) X(now_ms) X(store)        \
    X(put_deadline) X(player) X(ip) X(stats_type) X(twin) X(tier) X(decode) X(checked) X(probe)

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

/* GuardCheck(keyspace, lock, every, expire, system_clock, player, ip,
 * stats_type, slot_names, twin, tier, decode, checked): see _native.pyi and
 * ranked/backends/native/guard.py; a new reference, or NULL with TypeError /
 * ValueError. */
static PyObject *GuardCheck_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    PyObject *keyspace, *lock, *expire, *player, *ip, *stats_type, *slot_names, *twin, *tier;
    PyObject *decode, *checked = Py_None;
    Py_ssize_t every;
    int system_clock;
    if (kwds && PyDict_GET_SIZE(kwds)) {
        PyErr_SetString(PyExc_TypeError, "GuardCheck takes positional arguments only");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "OOnOpOOO!O!OOO|O:GuardCheck", &keyspace, &lock, &every,
                          &expire, &system_clock, &player, &ip, &PyType_Type, &stats_type,
                          &PyTuple_Type, &slot_names, &twin, &tier, &decode, &checked))
        return NULL;
    if (every < 0 || PyTuple_GET_SIZE(slot_names) != S_COUNT ||
        (player != Py_None && !rl_is_decider(player)) || (ip != Py_None && !rl_is_decider(ip)) ||
        !PyType_IsSubtype((PyTypeObject *)stats_type, &PyDict_Type) || !PyCallable_Check(twin) ||
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
    for (Py_ssize_t i = 0; i < S_COUNT; i++)
        if ((self->slots[i] = native_slot_offset((PyTypeObject *)stats_type,
                                            PyTuple_GET_ITEM(slot_names, i))) < 0)
            goto error;
    self->keyspace = Py_NewRef(keyspace);
    self->expire = Py_NewRef(expire);
    self->player = player == Py_None ? NULL : Py_NewRef(player);
    self->ip = ip == Py_None ? NULL : Py_NewRef(ip);
    self->stats_type = Py_NewRef(stats_type);
    self->twin = Py_NewRef(twin);
    self->tier = Py_NewRef(tier);
    self->decode = Py_NewRef(decode);
    self->checked = checked == Py_None || decode == Py_None ? NULL : Py_NewRef(checked);
    if (!(self->probe = PyObject_CallNoArgs(stats_type)) ||
        !(self->ks_dict = PyObject_GenericGetDict(keyspace, NULL)) ||
        native_method(&self->acquire, lock, "acquire") ||
        native_method(&self->release, lock, "release") ||
        native_method(&self->now_us, keyspace, "now_us") ||
        native_method(&self->now_ms, keyspace, "now_ms") ||
        native_method(&self->store, keyspace, "store") ||
        native_method(&self->put_deadline, keyspace, "put_deadline"))
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

/* Registers GuardCheck and its constants; 0, or -1 with an exception set. */
int guard_check_add_to_module(PyObject *m) {
    PyObject *heapq = PyImport_ImportModule("_heapq");
    if (!heapq)
        return -1;
    heappush = PyObject_GetAttrString(heapq, "heappush");
    Py_DECREF(heapq);
    if (!heappush ||!(s_values = PyUnicode_InternFromString("_values")) ||
        !(s_deadlines = PyUnicode_InternFromString("_deadlines")) ||
        !(s_listpack = PyUnicode_InternFromString("_listpack")) ||
        !(s_heap = PyUnicode_InternFromString("_heap")) ||
        !(empty_bytes = PyBytes_FromStringAndSize("", 0)) ||
        !(one_bytes = PyBytes_FromString("1")) || !(int_one = PyLong_FromLong(1)) ||
        !(r_banned = PyBytes_FromString("banned")) ||
        !(r_rate = PyBytes_FromString("rate-limited")) ||
        !(r_rate_ip = PyBytes_FromString("rate-limited-ip")) ||
        !(r_replayed = PyBytes_FromString("replayed-nonce")) ||
        !(r_step = PyBytes_FromString("velocity-step")) ||
        !(r_span = PyBytes_FromString("velocity-span")) ||
        !(r_zscore = PyBytes_FromString("z-score")))
        return -1;
    if (PyType_Ready(&GuardCheckType) < 0)
        return -1;
    Py_INCREF(&GuardCheckType);
    if (PyModule_AddObject(m, "GuardCheck", (PyObject *)&GuardCheckType) < 0) {
        Py_DECREF(&GuardCheckType);
        return -1;
    }
    return 0;
}
