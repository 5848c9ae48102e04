/* rl_fast.c - one whole memory:// rate-limiter decision per C call:
 * ranked.engine._zset.RateDecider.
 *
 * The Python twin is ranked/ratelimit/_memory.py (each algorithm's core) plus
 * the `decide` closure of ranked/ratelimit/limiter.py (identity -> keys,
 * cost check, lock, housekeeping, clock). This file does the same steps in
 * the same order with the same float operations, so decisions and stored
 * state are bit-identical; tests/ratelimit/test_native_twin.py drives both.
 *
 * State stays what the Python core keeps: the keyspace's own dicts (read from
 * the Keyspace's __dict__ on every call, since FLUSHALL replaces them) and the
 * Python cell objects of _memory.py, whose __slots__ are read and written
 * through their member offsets.
 *
 * Anything unusual (a value outside +-2**52, a field that is not an exact int
 * or float, an expired or foreign value, a clock stepped back on the log, a
 * non-float clock) makes the decision go to the Python core instead, always
 * before anything was written, so the Python core decides it exactly as it
 * would have. Every Python callback runs under the backend's lock, which
 * guards the keyspace as it does on the Python path; none runs between two
 * writes of one decision except the keyspace's own keep_deadline / delete.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <math.h>
#include <stdint.h>
#include <time.h>

#include "_zset_object.h"

#define ALG_FIXED 0
#define ALG_LOG 1
#define ALG_COUNTER 2
#define ALG_BUCKET 3
#define ALG_GCRA 4

#define CLOCK_SYSTEM 0  /* time_ns(), as the Python path reads it */
#define CLOCK_BACKEND 1 /* the keyspace's clock: floor(now*1e6), floor(now*1e3) */
#define CLOCK_LIMITER 2 /* the limiter's clock: round(now*1e6), keyspace.now_ms() */

#define EXPIRY_EVERY_MASK 7 /* limiter.py: _EXPIRY_EVERY_MASK */
#define EXPIRY_DELETES 16   /* limiter.py: _EXPIRY_DELETES */
#define MAX_SLOTS 3
#define MAX_STEPS 64 /* the counter's retry search; more goes to the Python core */

/* Integers the fast path takes: sums of a few stay exact in int64 and far
 * from overflow, and every one converts to a double exactly. */
#define BOUND (INT64_C(1) << 52)
#define EXACT (INT64_C(1) << 53)

/* The value a core returns to say "let the Python core decide; nothing was
 * written". Never a real object. */
static PyObject slow_marker;
#define SLOW (&slow_marker)

static PyObject *heappush;    /* _heapq.heappush */
static PyObject *math_floor;  /* math.floor */
static PyObject *round_func;  /* builtins.round */
static PyObject *float_1e6, *float_1e3, *int_1e6, *int_deletes;
static PyObject *s_values, *s_deadlines, *s_late, *s_listpack, *s_heap;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    int algorithm;
    int clock_mode;
    int64_t limit, window, window_ms, capacity;
    double rate, interval, tolerance;
    uint64_t decisions;
    Py_ssize_t slots[MAX_SLOTS];
    PyObject *policy, *limit_obj, *decision_type, *keyspace, *ks_dict;
    PyObject *acquire, *release, *identities, *plan_keys, *plan_args;
    PyObject *clock, *now_ms, *expire, *get_at, *keep_deadline, *delete;
    PyObject *core, *cell_type, *cell_template, *wrongtype, *deque_type;
    PyObject *popleft, *append;
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
static int64_t floordiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

/* 1 when `v` is an exact int within +-BOUND, stored in *out; 0 otherwise
 * (no exception left set). */
static int small_int(PyObject *v, int64_t *out) {
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
static int small_number(PyObject *v, double *out, int *is_int) {
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
static PyObject *slot_get(PyObject *cell, Py_ssize_t off) {
    return *(PyObject **)((char *)cell + off);
}

/* Stores `value` (a new reference, stolen; NULL means an error was set) in
 * the member at `off`; 0, or -1 with the exception set. */
static int slot_set(PyObject *cell, Py_ssize_t off, PyObject *value) {
    if (!value)
        return -1;
    PyObject **field = (PyObject **)((char *)cell + off);
    Py_XSETREF(*field, value);
    return 0;
}

/* A keyspace table by name: borrowed, or NULL when it is not an exact dict
 * (or set, for `set`) any more (no exception set). */
static PyObject *table(RateDeciderObject *self, PyObject *name, int set) {
    PyObject *t = PyDict_GetItemWithError(self->ks_dict, name);
    if (!t)
        return NULL;
    if (set ? !PySet_CheckExact(t) : !PyDict_CheckExact(t))
        return NULL;
    return t;
}

/* A Decision (tuple subclass) of six items; the two PyObject arguments are
 * new references, stolen (NULL: an error is already set). */
static PyObject *decision(RateDeciderObject *self, int allowed, PyObject *remaining,
                          double reset, PyObject *retry) {
    PyObject *reset_obj = remaining && retry ? PyFloat_FromDouble(reset) : NULL;
    if (!reset_obj) {
        Py_XDECREF(remaining);
        Py_XDECREF(retry);
        return NULL;
    }
    PyTypeObject *type = (PyTypeObject *)self->decision_type;
    PyObject *d = type->tp_alloc(type, 6);
    if (!d) {
        Py_DECREF(remaining);
        Py_DECREF(retry);
        Py_DECREF(reset_obj);
        return NULL;
    }
    PyObject *flag = allowed ? Py_True : Py_False;
    Py_INCREF(flag);
    Py_INCREF(self->limit_obj);
    Py_INCREF(self->policy);
    PyTuple_SET_ITEM(d, 0, flag);
    PyTuple_SET_ITEM(d, 1, self->limit_obj);
    PyTuple_SET_ITEM(d, 2, remaining);
    PyTuple_SET_ITEM(d, 3, reset_obj);
    PyTuple_SET_ITEM(d, 4, retry);
    PyTuple_SET_ITEM(d, 5, self->policy);
    return d;
}

static PyObject *none_ref(void) {
    Py_INCREF(Py_None);
    return Py_None;
}

/* ==== the keyspace, as Keyspace.get_at / store / keep_deadline ============= */

/* The live cell at h->key (a new reference in *cell, or NULL when absent).
 * Returns 0, -1 with an exception set (WRONGTYPE included), or 1: go slow.
 * A live cell of the algorithm's type is read straight from the tables;
 * anything else goes through Keyspace.get_at (expired keys are deleted
 * there, exactly as the Python core would). */
static int get_cell(RateDeciderObject *self, const hit *h, PyObject **cell) {
    *cell = NULL;
    PyObject *values = table(self, s_values, 0), *deadlines = table(self, s_deadlines, 0);
    if (!values || !deadlines)
        return PyErr_Occurred() ? -1 : 1;
    PyObject *value = PyDict_GetItemWithError(values, h->key);
    if (!value)
        return PyErr_Occurred() ? -1 : 0;
    if (Py_TYPE(value) == (PyTypeObject *)self->cell_type && PyDict_GET_SIZE(value) > 0) {
        PyObject *deadline = PyDict_GetItemWithError(deadlines, h->key);
        int64_t when;
        if (!deadline && PyErr_Occurred())
            return -1;
        if (!deadline || (small_int(deadline, &when) && h->now_ms <= when)) {
            Py_INCREF(value);
            *cell = value;
            return 0;
        }
    }
    PyObject *now_ms = PyLong_FromLongLong(h->now_ms);
    if (!now_ms)
        return -1;
    PyObject *live = PyObject_CallFunctionObjArgs(self->get_at, h->key, now_ms, NULL);
    Py_DECREF(now_ms);
    if (!live)
        return -1;
    if (live == Py_None) {
        Py_DECREF(live);
        return 0;
    }
    if (Py_TYPE(live) != (PyTypeObject *)self->cell_type) {
        Py_DECREF(live);
        PyObject *error = PyObject_CallNoArgs(self->wrongtype);
        if (error) {
            PyErr_SetObject((PyObject *)Py_TYPE(error), error);
            Py_DECREF(error);
        }
        return -1;
    }
    *cell = live;
    return 0;
}

/* A fresh cell of the algorithm's type stored at h->key (Keyspace.store: no
 * deadline, not listpack); a new reference, or NULL with an exception set.
 * Made as Cell.__init__ makes it (its one hash field) without running it. */
static PyObject *store_cell(RateDeciderObject *self, const hit *h) {
    PyObject *values = table(self, s_values, 0), *deadlines = table(self, s_deadlines, 0);
    PyObject *listpack = table(self, s_listpack, 1);
    if (!values || !deadlines || !listpack) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_SystemError, "keyspace tables changed type");
        return NULL;
    }
    PyTypeObject *type = (PyTypeObject *)self->cell_type;
    PyObject *empty = PyTuple_New(0);
    PyObject *cell = empty ? type->tp_new(type, empty, NULL) : NULL;
    Py_XDECREF(empty);
    if (!cell)
        return NULL;
    if (PyDict_Update(cell, self->cell_template) < 0) {
        Py_DECREF(cell);
        return NULL;
    }
    int has = PyDict_Contains(deadlines, h->key);
    if (has < 0 || (has && PyDict_DelItem(deadlines, h->key) < 0) ||
        PySet_Discard(listpack, h->key) < 0 || PyDict_SetItem(values, h->key, cell) < 0) {
        Py_DECREF(cell);
        return NULL;
    }
    return cell;
}

/* Keyspace.keep_deadline(h->key, when): a later deadline replaces the
 * recorded one and marks the key late; a first one is pushed on the expiry
 * heap; anything else goes to the Python method. 0, or -1 with an exception. */
static int keep_deadline(RateDeciderObject *self, const hit *h, int64_t when) {
    PyObject *deadlines = table(self, s_deadlines, 0);
    PyObject *late = table(self, s_late, 1), *heap;
    if (!deadlines || !late) {
        if (PyErr_Occurred())
            return -1;
        goto python;
    }
    PyObject *current = PyDict_GetItemWithError(deadlines, h->key);
    int64_t now_when;
    if (current && small_int(current, &now_when) && when >= now_when) {
        if (when == now_when)
            return 0;
        PyObject *value = PyLong_FromLongLong(when);
        if (!value)
            return -1;
        int rc = PyDict_SetItem(deadlines, h->key, value);
        Py_DECREF(value);
        return rc < 0 ? -1 : PySet_Add(late, h->key);
    }
    if (PyErr_Occurred())
        return -1;
    heap = PyDict_GetItemWithError(self->ks_dict, s_heap);
    if (!current && heap && PyList_CheckExact(heap) &&
        PyList_GET_SIZE(heap) + 1 <= 2 * (PyDict_GET_SIZE(deadlines) + 1) + 64) {
        /* Keyspace._set_deadline without its rebuild (not due) */
        PyObject *value = PyLong_FromLongLong(when);
        PyObject *entry = value ? PyTuple_Pack(2, value, h->key) : NULL;
        int rc = entry ? PyDict_SetItem(deadlines, h->key, value) : -1;
        PyObject *pushed = rc == 0 ? PyObject_CallFunctionObjArgs(heappush, heap, entry, NULL)
                                   : NULL;
        Py_XDECREF(value);
        Py_XDECREF(entry);
        Py_XDECREF(pushed);
        return pushed ? 0 : -1;
    }
    if (PyErr_Occurred())
        return -1;
python:;
    PyObject *value = PyLong_FromLongLong(when);
    PyObject *r = value ? PyObject_CallFunctionObjArgs(self->keep_deadline, h->key, value, NULL)
                        : NULL;
    Py_XDECREF(value);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

/* ceil(us / 1000) as the scripts compute it, for |us| < 2**53. */
static int64_t ms_of(int64_t us) { return (int64_t)ceil((double)us / 1000); }

/* ==== the five cores (twins of _memory.py) ================================= */

static PyObject *fixed_window(RateDeciderObject *self, const hit *h) {
    PyObject *cell;
    int rc = get_cell(self, h, &cell);
    if (rc)
        return rc < 0 ? NULL : SLOW;
    int64_t start = h->now, count = 0, cell_start = 0;
    if (cell) {
        if (!small_int(slot_get(cell, self->slots[0]), &cell_start) ||
            !small_int(slot_get(cell, self->slots[1]), &count)) {
            Py_DECREF(cell);
            return SLOW;
        }
        if (h->now < cell_start + self->window)
            start = cell_start;
        else
            count = 0;
    }
    int64_t expires = start + self->window;
    if (count + h->cost > self->limit) {
        Py_XDECREF(cell);
        double retry = (double)(expires - h->now) / 1e6;
        return decision(self, 0, PyLong_FromLongLong(self->limit - count), retry,
                        PyFloat_FromDouble(retry));
    }
    count += h->cost;
    if (h->consume && h->cost > 0) {
        if (!cell && !(cell = store_cell(self, h)))
            return NULL;
        if (slot_set(cell, self->slots[1], PyLong_FromLongLong(count)) < 0 ||
            (start == h->now &&
             (slot_set(cell, self->slots[0], PyLong_FromLongLong(start)) < 0 ||
              keep_deadline(self, h, h->now_ms + self->window_ms) < 0))) {
            Py_DECREF(cell);
            return NULL;
        }
    }
    Py_XDECREF(cell);
    double reset = count > 0 ? (double)(expires - h->now) / 1e6 : 0.0;
    return decision(self, 1, PyLong_FromLongLong(self->limit - count), reset, none_ref());
}

/* The (instant, units) pair of a log entry, each within +-BOUND; 0 if not. */
static int log_entry(PyObject *entry, int64_t *instant, int64_t *units) {
    return entry && PyTuple_CheckExact(entry) && PyTuple_GET_SIZE(entry) == 2 &&
           small_int(PyTuple_GET_ITEM(entry, 0), instant) &&
           small_int(PyTuple_GET_ITEM(entry, 1), units);
}

/* What the Python core learns from a log's entries, oldest first, in one
 * pass that stops as soon as it knows: *stale = units of the oldest entries
 * at or before `cutoff`; then, when total - stale + cost exceeds the limit,
 * *retry_at = the live instant whose expiry lets the hit in (INT64_MIN when
 * none does). 1 when every entry read is regular, 0: go slow, -1: error. */
static int scan_log(RateDeciderObject *self, PyObject *entries, int64_t cutoff, int64_t total,
                    int64_t cost, int64_t *stale, int64_t *retry_at) {
    PyObject *it = PyObject_GetIter(entries);
    if (!it)
        return -1;
    int ok = 1, in_stale = 1;
    int64_t need = 0;
    *stale = 0;
    *retry_at = INT64_MIN;
    PyObject *entry;
    while ((entry = PyIter_Next(it))) {
        int64_t instant, units;
        ok = log_entry(entry, &instant, &units);
        Py_DECREF(entry);
        if (!ok)
            break;
        if (in_stale) {
            if (instant <= cutoff) {
                *stale += units;
                continue;
            }
            in_stale = 0;
            need = total - *stale + cost - self->limit;
            if (need <= 0)
                break; /* allowed: nothing more to learn */
        }
        if (instant > cutoff) {
            need -= units;
            if (need <= 0) {
                *retry_at = instant;
                break;
            }
        }
    }
    Py_DECREF(it);
    if (PyErr_Occurred())
        return -1;
    return ok;
}

static PyObject *sliding_log(RateDeciderObject *self, const hit *h) {
    PyObject *cell, *entries = NULL;
    int rc = get_cell(self, h, &cell);
    if (rc)
        return rc < 0 ? NULL : SLOW;
    int64_t cutoff = h->now - self->window, total = 0, stale = 0, last = 0;
    int64_t retry_at = INT64_MIN;
    if (cell) {
        entries = slot_get(cell, self->slots[0]);
        PyObject *newest = NULL;
        int64_t units;
        if (!entries || Py_TYPE(entries) != (PyTypeObject *)self->deque_type ||
            !small_int(slot_get(cell, self->slots[1]), &total) || PyObject_Length(entries) <= 0 ||
            !(newest = PySequence_GetItem(entries, -1)) || !log_entry(newest, &last, &units)) {
            Py_XDECREF(newest);
            Py_DECREF(cell);
            return PyErr_Occurred() ? NULL : SLOW;
        }
        Py_DECREF(newest);
        rc = scan_log(self, entries, cutoff, total, h->cost, &stale, &retry_at);
        if (rc <= 0) {
            Py_DECREF(cell);
            return rc < 0 ? NULL : SLOW;
        }
        total -= stale;
    }
    int allowed = total + h->cost <= self->limit;
    if (allowed)
        total += h->cost;
    int writes = allowed && h->cost > 0;
    int has_newest = writes;
    int64_t newest = h->now;
    if (cell && (!has_newest || last > newest)) {
        newest = last;
        has_newest = 1;
    }
    int64_t reset = total > 0 && has_newest ? newest + self->window - h->now : 0;
    if (reset <= -EXACT || reset >= EXACT || (h->consume && writes && cell && h->now < last)) {
        /* a far instant, or a clock stepped back (an ordered insert): Python */
        Py_XDECREF(cell);
        return SLOW;
    }
    if (h->consume && (writes || stale > 0)) {
        while (stale > 0) { /* drop the stale entries (the oldest) */
            PyObject *first = PyObject_Length(entries) > 0 ? PySequence_GetItem(entries, 0) : NULL;
            int64_t instant = 0, units = 0;
            int regular = first && log_entry(first, &instant, &units);
            Py_XDECREF(first);
            if (PyErr_Occurred())
                goto error;
            if (!regular || instant > cutoff)
                break;
            PyObject *r = PyObject_CallOneArg(self->popleft, entries);
            if (!r)
                goto error;
            Py_DECREF(r);
        }
        if (writes) {
            if (!cell) {
                if (!(cell = store_cell(self, h)))
                    return NULL;
                entries = PyObject_CallNoArgs(self->deque_type);
                if (slot_set(cell, self->slots[0], entries) < 0)
                    goto error;
            }
            PyObject *now = PyLong_FromLongLong(h->now);
            PyObject *cost = PyLong_FromLongLong(h->cost);
            PyObject *entry = now && cost ? PyTuple_Pack(2, now, cost) : NULL;
            Py_XDECREF(now);
            Py_XDECREF(cost);
            PyObject *r = entry ? PyObject_CallFunctionObjArgs(self->append, entries, entry, NULL)
                                : NULL;
            Py_XDECREF(entry);
            if (!r)
                goto error;
            Py_DECREF(r);
        }
        if (total > 0) {
            if (slot_set(cell, self->slots[1], PyLong_FromLongLong(total)) < 0 ||
                keep_deadline(self, h, h->now_ms + ms_of(reset)) < 0)
                goto error;
        } else {
            PyObject *r = PyObject_CallOneArg(self->delete, h->key);
            if (!r)
                goto error;
            Py_DECREF(r);
        }
    }
    Py_XDECREF(cell);
    if (allowed)
        return decision(self, 1, PyLong_FromLongLong(self->limit - total), (double)reset / 1e6,
                        none_ref());
    double retry = retry_at != INT64_MIN ? (double)(retry_at + self->window - h->now) / 1e6
                                         : (double)self->window / 1e6;
    return decision(self, 0, PyLong_FromLongLong(self->limit - total), (double)reset / 1e6,
                    PyFloat_FromDouble(retry));
error:
    Py_XDECREF(cell);
    return NULL;
}

static PyObject *sliding_counter(RateDeciderObject *self, const hit *h) {
    PyObject *cell;
    int rc = get_cell(self, h, &cell);
    if (rc)
        return rc < 0 ? NULL : SLOW;
    const int64_t w = self->window, limit = self->limit, cost = h->cost;
    int64_t index = floordiv(h->now, w), offset = h->now - index * w;
    int64_t cur = 0, prev = 0, cell_index = 0, cell_cur, cell_prev;
    if (cell) {
        if (!small_int(slot_get(cell, self->slots[0]), &cell_index) ||
            !small_int(slot_get(cell, self->slots[1]), &cell_cur) ||
            !small_int(slot_get(cell, self->slots[2]), &cell_prev)) {
            Py_DECREF(cell);
            return SLOW;
        }
        if (cell_index >= index) {
            cur = cell_cur;
            prev = cell_prev;
        } else if (cell_index == index - 1) {
            prev = cell_cur;
        }
    }
    double estimate = (double)prev * 1.0 * (double)(w - offset) / (double)w + (double)cur;
    if (estimate + (double)cost > (double)limit) {
        Py_XDECREF(cell);
        int64_t reset = cur > 0 ? 2 * w - offset : (prev > 0 ? w - offset : 0);
        int64_t room = limit - cost - cur, at;
        double first;
        if (room >= 0) {
            if (prev == 0)
                return SLOW; /* the Python core divides by zero */
            first = ceil((double)w - (double)room * 1.0 * (double)w / (double)prev);
        } else {
            if (cur == 0)
                return SLOW;
            first = ceil((double)w - (double)(limit - cost) * 1.0 * (double)w / (double)cur);
        }
        if (!(first > -(double)BOUND && first < (double)BOUND))
            return SLOW;
        at = (room >= 0 ? 0 : w) + (int64_t)first;
        for (int steps = 0;; steps++) { /* float rounding may land a us early */
            double load = at < w ? (double)prev * 1.0 * (double)(w - at) / (double)w +
                                       (double)cur + (double)cost
                                 : (double)cur * 1.0 * (double)(w - (at - w)) / (double)w +
                                       (double)cost;
            if (!(load > (double)limit))
                break;
            if (steps == MAX_STEPS)
                return SLOW;
            at++;
        }
        double remaining = floor((double)limit - estimate);
        double retry = (double)(at - offset > 1 ? at - offset : 1) / 1e6;
        return decision(self, 0, PyLong_FromDouble(remaining > 0 ? remaining : 0.0),
                        (double)reset / 1e6, PyFloat_FromDouble(retry));
    }
    cur += cost;
    int64_t reset = cur > 0 ? 2 * w - offset : (prev > 0 ? w - offset : 0);
    if (h->consume && cost > 0) {
        int fresh = !cell;
        if (fresh && !(cell = store_cell(self, h)))
            return NULL;
        if ((fresh || cell_index != index) &&
            (slot_set(cell, self->slots[0], PyLong_FromLongLong(index)) < 0 ||
             slot_set(cell, self->slots[2], PyLong_FromLongLong(prev)) < 0 ||
             keep_deadline(self, h, h->now_ms + ms_of(2 * w - offset)) < 0)) {
            Py_DECREF(cell);
            return NULL;
        }
        if (slot_set(cell, self->slots[1], PyLong_FromLongLong(cur)) < 0) {
            Py_DECREF(cell);
            return NULL;
        }
    }
    Py_XDECREF(cell);
    double remaining = floor((double)limit - (estimate + (double)cost));
    return decision(self, 1, PyLong_FromDouble(remaining > 0 ? remaining : 0.0),
                    (double)reset / 1e6, none_ref());
}

/* A whole number of us as a double, when it is finite and below 2**53. */
static int exact_us(double v) { return v > -(double)EXACT && v < (double)EXACT; }

static PyObject *token_bucket(RateDeciderObject *self, const hit *h) {
    PyObject *cell;
    int rc = get_cell(self, h, &cell);
    if (rc)
        return rc < 0 ? NULL : SLOW;
    const double burst = (double)self->capacity, rate = self->rate, cost = (double)h->cost;
    double tokens = burst;
    int is_int = 1; /* the Python core's `tokens` is an int until a refill makes it a float */
    if (cell) {
        int64_t last;
        if (!small_number(slot_get(cell, self->slots[0]), &tokens, &is_int) ||
            !small_int(slot_get(cell, self->slots[1]), &last)) {
            Py_DECREF(cell);
            return SLOW;
        }
        int64_t elapsed = h->now - last;
        if (elapsed > 0) {
            double refilled = tokens + (double)elapsed * rate;
            if (burst < refilled) { /* min(refilled, burst) */
                tokens = burst;
                is_int = 1;
            } else {
                tokens = refilled;
                is_int = 0;
            }
        }
    }
    if (tokens < cost) {
        Py_XDECREF(cell);
        double reset = ceil((burst - tokens) / rate), retry = ceil((cost - tokens) / rate);
        if (!exact_us(reset) || !exact_us(retry))
            return SLOW;
        return decision(self, 0, PyLong_FromDouble(floor(tokens)), reset / 1e6,
                        PyFloat_FromDouble(retry / 1e6));
    }
    tokens -= cost;
    double reset = ceil((burst - tokens) / rate);
    if (!exact_us(reset)) {
        Py_XDECREF(cell);
        return SLOW;
    }
    if (h->consume && h->cost > 0) {
        if (!cell && !(cell = store_cell(self, h)))
            return NULL;
        PyObject *value = is_int ? PyLong_FromLongLong((int64_t)tokens) : PyFloat_FromDouble(tokens);
        if (slot_set(cell, self->slots[0], value) < 0 ||
            slot_set(cell, self->slots[1], PyLong_FromLongLong(h->now)) < 0 ||
            keep_deadline(self, h, h->now_ms + ms_of((int64_t)reset)) < 0) {
            Py_DECREF(cell);
            return NULL;
        }
    }
    Py_XDECREF(cell);
    return decision(self, 1, PyLong_FromDouble(floor(tokens)), reset / 1e6, none_ref());
}

/* max(0, floor(v)) as the Python core computes it. */
static PyObject *floor_at_least_zero(double v) {
    double f = floor(v);
    return PyLong_FromDouble(f > 0 ? f : 0.0);
}

static PyObject *gcra(RateDeciderObject *self, const hit *h) {
    PyObject *cell;
    int rc = get_cell(self, h, &cell);
    if (rc)
        return rc < 0 ? NULL : SLOW;
    const double interval = self->interval, tolerance = self->tolerance, now = (double)h->now;
    double tat = now, stored = 0;
    int tat_is_now = 1, stored_is_int = 0;
    if (cell) {
        if (!small_number(slot_get(cell, self->slots[0]), &stored, &stored_is_int)) {
            Py_DECREF(cell);
            return SLOW;
        }
        if (stored > now) { /* exact: both are doubles of small ints, or a float */
            tat = stored;
            tat_is_now = 0;
        }
    }
    double new_tat = tat + (double)h->cost * interval;
    double early = new_tat - tolerance - now;
    if (early > 0) {
        Py_XDECREF(cell);
        /* tat - now: an int when tat is an int (exact), else a float subtraction */
        double ttl = tat_is_now ? 0.0 : tat - now;
        double reset = ceil(ttl), retry = ceil(early);
        if (!exact_us(reset) || !exact_us(retry))
            return SLOW;
        return decision(self, 0, floor_at_least_zero((tolerance - ttl) / interval), reset / 1e6,
                        PyFloat_FromDouble(retry / 1e6));
    }
    double ttl = new_tat - now;
    double reset = ceil(ttl), keep = ceil(ttl / 1000);
    if (!exact_us(reset) || !exact_us(keep)) {
        Py_XDECREF(cell);
        return SLOW;
    }
    if (h->consume && h->cost > 0) {
        if (!cell && !(cell = store_cell(self, h)))
            return NULL;
        if (slot_set(cell, self->slots[0], PyFloat_FromDouble(new_tat)) < 0 ||
            keep_deadline(self, h, h->now_ms + (int64_t)keep) < 0) {
            Py_DECREF(cell);
            return NULL;
        }
    }
    Py_XDECREF(cell);
    return decision(self, 1, floor_at_least_zero((tolerance - ttl) / interval), reset / 1e6,
                    none_ref());
}

typedef PyObject *(*core_fn)(RateDeciderObject *, const hit *);
static const core_fn cores[] = {fixed_window, sliding_log, sliding_counter, token_bucket, gcra};

/* ==== the decision: identity, cost, lock, housekeeping, clock ============== */

/* round(x) as float.__round__ does it (halves to even). */
static double round_half_even(double x) {
    double r = round(x);
    if (fabs(x - r) == 0.5)
        r = 2.0 * round(x / 2.0);
    return r;
}

/* floor(v * factor) for a Python number v, through Python's own operators
 * (a clock that returns something other than a float); new reference. */
static PyObject *py_scaled(PyObject *v, PyObject *factor, PyObject *rounding) {
    PyObject *product = PyNumber_Multiply(v, factor);
    if (!product)
        return NULL;
    PyObject *r = PyObject_CallOneArg(rounding, product);
    Py_DECREF(product);
    return r;
}

/* An int object from a whole double (PyLong_FromDouble raises on inf and NaN
 * exactly as math.floor and round do). */
static PyObject *whole(double v) { return PyLong_FromDouble(v); }

/* Reads a fake clock as the Python path does: sets *us and *ms (new
 * references) for the Python core, or h->now / h->now_ms and returns 1 when
 * both are within +-BOUND; 0 otherwise, -1 on error. */
static int read_clock(RateDeciderObject *self, hit *h, PyObject **us, PyObject **ms) {
    PyObject *v = PyObject_CallNoArgs(self->clock);
    if (!v)
        return -1;
    int backend = self->clock_mode == CLOCK_BACKEND;
    if (PyFloat_CheckExact(v)) {
        double d = PyFloat_AS_DOUBLE(v);
        *us = whole(backend ? floor(d * 1e6) : round_half_even(d * 1000000.0));
        *ms = *us && backend ? whole(floor(d * 1e3)) : NULL;
    } else {
        *us = backend ? py_scaled(v, float_1e6, math_floor) : py_scaled(v, int_1e6, round_func);
        *ms = *us && backend ? py_scaled(v, float_1e3, math_floor) : NULL;
    }
    Py_DECREF(v);
    if (*us && !backend)
        *ms = PyObject_CallNoArgs(self->now_ms); /* keyspace.now_ms(): the backend's clock */
    if (!*us || !*ms)
        return -1;
    return small_int(*us, &h->now) && small_int(*ms, &h->now_ms);
}

/* 1 when the keyspace's expiry heap holds a deadline before now_ms (or looks
 * unusual): only then does Keyspace.expire_pending have work. */
static int expiry_due(RateDeciderObject *self, int64_t now_ms) {
    PyObject *heap = PyDict_GetItemWithError(self->ks_dict, s_heap);
    if (!heap || !PyList_CheckExact(heap))
        return 1;
    if (PyList_GET_SIZE(heap) == 0)
        return 0;
    PyObject *first = PyList_GET_ITEM(heap, 0);
    int64_t when;
    if (!PyTuple_CheckExact(first) || PyTuple_GET_SIZE(first) < 1 ||
        !small_int(PyTuple_GET_ITEM(first, 0), &when))
        return 1;
    return when < now_ms;
}

static int housekeeping(RateDeciderObject *self) {
    PyObject *r = PyObject_CallOneArg(self->expire, int_deletes);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

/* One decision under the lock; `python` forces the Python core. */
static PyObject *decide_locked(RateDeciderObject *self, hit *h, PyObject *keys, PyObject *cost,
                               PyObject *consume, int python) {
    PyObject *us = NULL, *ms = NULL, *result = NULL;
    int fast = 1, due = !(++self->decisions & EXPIRY_EVERY_MASK);
    if (self->clock_mode == CLOCK_SYSTEM) {
        struct timespec ts;
        if (!timespec_get(&ts, TIME_UTC)) {
            PyErr_SetString(PyExc_OSError, "timespec_get failed");
            return NULL;
        }
        int64_t ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
        h->now = floordiv(ns, 1000);
        h->now_ms = floordiv(ns, 1000000);
        if (due && expiry_due(self, h->now_ms) && housekeeping(self) < 0)
            return NULL;
    } else {
        if (due && housekeeping(self) < 0)
            return NULL;
        fast = read_clock(self, h, &us, &ms);
        if (fast < 0)
            goto done;
    }
    if (fast && !python) {
        result = cores[self->algorithm](self, h);
        if (result != SLOW)
            goto done;
        result = NULL;
    }
    if (!us && !(us = PyLong_FromLongLong(h->now)))
        goto done;
    if (!ms && !(ms = PyLong_FromLongLong(h->now_ms)))
        goto done;
    result = PyObject_CallFunctionObjArgs(self->core, self->keyspace, us, ms, keys, cost, consume,
                                          NULL);
done:
    Py_XDECREF(us);
    Py_XDECREF(ms);
    return result;
}

/* decide(identity, cost, consume) -> Decision: the limiter's memory path. */
static PyObject *RateDecider_call(PyObject *callable, PyObject *const *args, size_t nargsf,
                                  PyObject *kwnames) {
    RateDeciderObject *self = (RateDeciderObject *)callable;
    if (PyVectorcall_NARGS(nargsf) != 3 || (kwnames && PyTuple_GET_SIZE(kwnames))) {
        PyErr_SetString(PyExc_TypeError, "decide() takes identity, cost, consume");
        return NULL;
    }
    PyObject *identity = args[0], *cost = args[1], *consume = args[2];
    PyObject *keys = PyDict_GetItemWithError(self->identities, identity);
    if (keys) {
        Py_INCREF(keys);
    } else {
        if (PyErr_Occurred()) { /* not hashable: the plan raises the typed error */
            if (!PyErr_ExceptionMatches(PyExc_KeyError) &&
                !PyErr_ExceptionMatches(PyExc_TypeError))
                return NULL;
            PyErr_Clear();
        }
        if (!(keys = PyObject_CallOneArg(self->plan_keys, identity)))
            return NULL;
    }
    hit h = {0};
    int python = 0;
    if (PyTuple_CheckExact(keys) && PyTuple_GET_SIZE(keys) > 0 &&
        PyBytes_CheckExact(PyTuple_GET_ITEM(keys, 0)))
        h.key = PyTuple_GET_ITEM(keys, 0);
    else
        python = 1;
    int overflow = 0;
    long long units = PyLong_CheckExact(cost) ? PyLong_AsLongLongAndOverflow(cost, &overflow) : -1;
    if (!PyLong_CheckExact(cost) || overflow || units < 0 || units > self->capacity) {
        PyObject *r = PyObject_CallFunctionObjArgs(self->plan_args, cost, consume, NULL);
        if (!r) { /* the typed error, before the lock */
            Py_DECREF(keys);
            return NULL;
        }
        Py_DECREF(r);
        python = 1;
    }
    h.cost = units;
    h.consume = PyObject_IsTrue(consume);
    if (h.consume < 0) {
        Py_DECREF(keys);
        return NULL;
    }
    PyObject *locked = PyObject_CallNoArgs(self->acquire);
    if (!locked) {
        Py_DECREF(keys);
        return NULL;
    }
    Py_DECREF(locked);
    PyObject *result = decide_locked(self, &h, keys, cost, consume, python);
    Py_DECREF(keys);
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyObject *released = PyObject_CallNoArgs(self->release);
    if (!released) {
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        Py_XDECREF(result);
        return NULL;
    }
    Py_DECREF(released);
    PyErr_Restore(type, value, tb);
    return result;
}

/* ==== construction ========================================================= */

#define OBJECT_FIELDS(X)                                                                       \
    X(policy) X(limit_obj) X(decision_type) X(keyspace) X(ks_dict) X(acquire) X(release)       \
    X(identities) X(plan_keys) X(plan_args) X(clock) X(now_ms) X(expire) X(get_at)             \
    X(keep_deadline) X(delete) X(core) X(cell_type) X(cell_template) X(wrongtype)              \
    X(deque_type) X(popleft) X(append)

static int RateDecider_traverse(RateDeciderObject *self, visitproc visit, void *arg) {
#define VISIT(f) Py_VISIT(self->f);
    OBJECT_FIELDS(VISIT)
#undef VISIT
    return 0;
}

static int RateDecider_clear(RateDeciderObject *self) {
#define CLEAR(f) Py_CLEAR(self->f);
    OBJECT_FIELDS(CLEAR)
#undef CLEAR
    return 0;
}

static void RateDecider_dealloc(RateDeciderObject *self) {
    PyObject_GC_UnTrack(self);
    RateDecider_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Byte offset of the writable object slot `name` of the cell type; -1 with
 * an exception when `name` is not one. */
static Py_ssize_t slot_offset(PyTypeObject *type, PyObject *name) {
    PyObject *descr = PyDict_GetItemWithError(type->tp_dict, name);
    if (descr && Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
        PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
        if (member->type == T_OBJECT_EX && !(member->flags & READONLY))
            return member->offset;
    }
    if (!PyErr_Occurred())
        PyErr_Format(PyExc_TypeError, "%R is not a __slots__ field of the cell type", name);
    return -1;
}

/* A bound method of `owner`, stored in *field (new reference); -1 on error. */
static int method(PyObject **field, PyObject *owner, const char *name) {
    *field = PyObject_GetAttrString(owner, name);
    return *field ? 0 : -1;
}

static PyObject *RateDecider_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    int algorithm, clock_mode;
    long long limit, window, window_ms, capacity;
    double rate, interval, tolerance;
    PyObject *policy, *decision_type, *keyspace, *lock, *identities, *plan_keys, *plan_args;
    PyObject *clock, *core, *cell_type, *slot_names, *wrongtype;
    if (kwds && PyDict_GET_SIZE(kwds)) {
        PyErr_SetString(PyExc_TypeError, "RateDecider takes positional arguments only");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "ii(LLLL)(ddd)OO!OOO!OOOOO!O!O:RateDecider", &algorithm,
                          &clock_mode, &limit, &window, &window_ms, &capacity, &rate, &interval,
                          &tolerance, &policy, &PyType_Type, &decision_type, &keyspace, &lock,
                          &PyDict_Type, &identities, &plan_keys, &plan_args, &clock, &core,
                          &PyType_Type, &cell_type, &PyTuple_Type, &slot_names, &wrongtype))
        return NULL;
    Py_ssize_t needed[] = {2, 2, 3, 2, 1};
    PyTypeObject *dt = (PyTypeObject *)decision_type, *ct = (PyTypeObject *)cell_type;
    if (algorithm < ALG_FIXED || algorithm > ALG_GCRA || clock_mode < CLOCK_SYSTEM ||
        clock_mode > CLOCK_LIMITER || PyTuple_GET_SIZE(slot_names) != needed[algorithm] ||
        limit < 1 || limit >= BOUND || window < 1 || window >= BOUND || window_ms < 0 ||
        window_ms >= BOUND || capacity < 1 || capacity >= BOUND || !(rate > 0) ||
        !(interval > 0) || !(tolerance > 0) || !PyType_IsSubtype(dt, &PyTuple_Type) ||
        dt->tp_basicsize != PyTuple_Type.tp_basicsize || !PyType_IsSubtype(ct, &PyDict_Type) ||
        (clock_mode == CLOCK_LIMITER && !PyCallable_Check(clock))) {
        PyErr_SetString(PyExc_ValueError, "RateDecider: unsupported policy or arguments");
        return NULL;
    }
    RateDeciderObject *self = (RateDeciderObject *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    self->vectorcall = RateDecider_call;
    self->algorithm = algorithm;
    self->clock_mode = clock_mode;
    self->limit = limit;
    self->window = window;
    self->window_ms = window_ms;
    self->capacity = capacity;
    self->rate = rate;
    self->interval = interval;
    self->tolerance = tolerance;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(slot_names); i++)
        if ((self->slots[i] = slot_offset(ct, PyTuple_GET_ITEM(slot_names, i))) < 0)
            goto error;
#define KEEP(f, v) Py_INCREF(v), self->f = (v)
    KEEP(policy, policy);
    KEEP(decision_type, decision_type);
    KEEP(keyspace, keyspace);
    KEEP(identities, identities);
    KEEP(plan_keys, plan_keys);
    KEEP(plan_args, plan_args);
    KEEP(clock, clock);
    KEEP(core, core);
    KEEP(cell_type, cell_type);
    KEEP(wrongtype, wrongtype);
#undef KEEP
    PyObject *probe = PyObject_CallNoArgs(cell_type);
    if (!probe)
        goto error;
    self->cell_template = PyDict_Copy(probe);
    Py_DECREF(probe);
    if (!self->cell_template || !(self->limit_obj = PyLong_FromLongLong(limit)) ||
        !(self->ks_dict = PyObject_GenericGetDict(keyspace, NULL)) ||
        method(&self->acquire, lock, "acquire") || method(&self->release, lock, "release") ||
        method(&self->now_ms, keyspace, "now_ms") ||
        method(&self->expire, keyspace, "expire_pending") ||
        method(&self->get_at, keyspace, "get_at") ||
        method(&self->keep_deadline, keyspace, "keep_deadline") ||
        method(&self->delete, keyspace, "delete"))
        goto error;
    PyObject *collections = PyImport_ImportModule("collections");
    if (!collections)
        goto error;
    self->deque_type = PyObject_GetAttrString(collections, "deque");
    Py_DECREF(collections);
    if (!self->deque_type || method(&self->popleft, self->deque_type, "popleft") ||
        method(&self->append, self->deque_type, "append"))
        goto error;
    if (clock_mode == CLOCK_BACKEND) { /* the keyspace's clock is the one to read */
        Py_SETREF(self->clock, PyObject_GetAttrString(keyspace, "clock"));
        if (!self->clock)
            goto error;
    }
    return (PyObject *)self;
error:
    Py_DECREF(self);
    return NULL;
}

static PyMemberDef RateDecider_members[] = {
    {"decisions", T_ULONGLONG, offsetof(RateDeciderObject, decisions), READONLY,
     "Decisions made so far (every 8th runs the keyspace's active expiry)."},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject RateDeciderType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ranked.engine._zset.RateDecider",
    .tp_doc = "One memory rate-limiter decision per call: decide(identity, cost, consume).",
    .tp_basicsize = sizeof(RateDeciderObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = RateDecider_new,
    .tp_dealloc = (destructor)RateDecider_dealloc,
    .tp_traverse = (traverseproc)RateDecider_traverse,
    .tp_clear = (inquiry)RateDecider_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(RateDeciderObject, vectorcall),
    .tp_members = RateDecider_members,
};

/* Registers RateDecider and the constants it needs; 0, or -1 with an
 * exception set. */
int rl_fast_add_to_module(PyObject *m) {
    PyObject *heapq = PyImport_ImportModule("_heapq");
    PyObject *math = heapq ? PyImport_ImportModule("math") : NULL;
    PyObject *builtins = math ? PyImport_ImportModule("builtins") : NULL;
    if (builtins) {
        heappush = PyObject_GetAttrString(heapq, "heappush");
        math_floor = PyObject_GetAttrString(math, "floor");
        round_func = PyObject_GetAttrString(builtins, "round");
    }
    Py_XDECREF(heapq);
    Py_XDECREF(math);
    Py_XDECREF(builtins);
    if (!heappush || !math_floor || !round_func || !(float_1e6 = PyFloat_FromDouble(1e6)) ||
        !(float_1e3 = PyFloat_FromDouble(1e3)) || !(int_1e6 = PyLong_FromLong(1000000)) ||
        !(int_deletes = PyLong_FromLong(EXPIRY_DELETES)) ||
        !(s_values = PyUnicode_InternFromString("_values")) ||
        !(s_deadlines = PyUnicode_InternFromString("_deadlines")) ||
        !(s_late = PyUnicode_InternFromString("_late")) ||
        !(s_listpack = PyUnicode_InternFromString("_listpack")) ||
        !(s_heap = PyUnicode_InternFromString("_heap")))
        return -1;
    if (PyType_Ready(&RateDeciderType) < 0)
        return -1;
    Py_INCREF(&RateDeciderType);
    if (PyModule_AddObject(m, "RateDecider", (PyObject *)&RateDeciderType) < 0) {
        Py_DECREF(&RateDeciderType);
        return -1;
    }
    return 0;
}
