/* rl_fast.c - one whole memory:// rate-limiter decision per C call:
 * ranked.backends.native._native.RateDecider.
 *
 * It is the native implementation of the limiter's procedures (native name
 * "ratelimit"), built once per limiter by ranked/backends/native/ratelimit.py
 * from the Operation's native_args. Its Python twin is what the memory
 * backend runs without C: the limiter plan's encode (identity -> keys, cost
 * check, clock reading: ranked/ratelimit/_plan.py), then under the lock the
 * algorithm's core (ranked/ratelimit/_memory.py). This file does the same
 * steps in the same order with the same float operations, so decisions and
 * stored state are bit-identical; tests/ratelimit/test_native_twin.py drives
 * both, and both take the same share of the keyspace's active expiry.
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
 * A dict lookup or store may run Python code too (the __eq__ of a stored key
 * hashing like the one looked up): every table and cell is held by a strong
 * reference across those, never borrowed.
 */
#include "rl_fast.h"

PyObject rl_slow_marker;

static PyObject *heappush;    /* _heapq.heappush */
static PyObject *math_floor;  /* math.floor */
static PyObject *round_func;  /* builtins.round */
static PyObject *float_1e6, *float_1e3, *int_1e6, *int_deletes;
static PyObject *s_values, *s_deadlines, *s_late, *s_listpack, *s_heap;

/* A keyspace table by name: a new reference, or NULL when it is missing or
 * not an exact dict (or set, for `set`) any more (an exception set only when
 * the lookup raised). A new reference because the lookups and stores the
 * caller then makes in the table may run Python code (the __eq__ of a stored
 * key that hashes like the one looked up), which may replace the keyspace's
 * tables (as FLUSHALL does) and so free a borrowed one. */
static PyObject *table(RateDeciderObject *self, PyObject *name, int set) {
    PyObject *t = PyDict_GetItemWithError(self->ks_dict, name);
    if (!t)
        return NULL;
    if (set ? !PySet_CheckExact(t) : !PyDict_CheckExact(t))
        return NULL;
    return Py_NewRef(t);
}

/* A Decision (tuple subclass) of six items; the two PyObject arguments are
 * new references, stolen (NULL: an error is already set). */
PyObject *rl_decision(RateDeciderObject *self, int allowed, PyObject *remaining,
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

/* ==== the keyspace, as Keyspace.get_at / store / keep_deadline ============= */

/* Keyspace.delete(key) on the tables (held by the caller): its deadline, its
 * listpack and late marks, its value, each removed when present. 0, or -1
 * with an exception set. */
static int delete_key(RateDeciderObject *self, PyObject *key, PyObject *values,
                      PyObject *deadlines) {
    PyObject *listpack = table(self, s_listpack, 1);
    PyObject *late = listpack ? table(self, s_late, 1) : NULL;
    int rc = -1;
    if (!late) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_SystemError, "keyspace tables changed type");
        goto out;
    }
    PyObject *dicts[2] = {deadlines, values};
    if (PySet_Discard(listpack, key) < 0 || PySet_Discard(late, key) < 0)
        goto out;
    for (int i = 0; i < 2; i++) {
        int has = PyDict_Contains(dicts[i], key);
        if (has < 0 || (has && PyDict_DelItem(dicts[i], key) < 0))
            goto out;
    }
    rc = 0;
out:
    Py_XDECREF(late);
    Py_XDECREF(listpack);
    return rc;
}

/* The live cell at h->key (a new reference in *cell, or NULL when absent).
 * Returns 0, -1 with an exception set (WRONGTYPE included), or 1: go slow.
 * A live cell of the algorithm's type is read straight from the tables; a
 * key whose deadline (an int) has passed is deleted here, as Keyspace.get_at
 * deletes it; anything else goes through Keyspace.get_at (exactly as the
 * Python core would). The tables are held while they
 * are looked up, the deadline is read (into an int) before the value is
 * looked up, and the value is taken (a new reference) as soon as its lookup
 * returns: a stored key's __eq__ run by a lookup may drop the cell or
 * replace the tables, and the cell returned is the one stored once such
 * code has run. h->key is held by the caller (RateDecider_call's keys). */
int rl_get_cell(RateDeciderObject *self, const hit *h, PyObject **cell) {
    *cell = NULL;
    PyObject *values = table(self, s_values, 0);
    PyObject *deadlines = values ? table(self, s_deadlines, 0) : NULL;
    if (!values || !deadlines) {
        Py_XDECREF(values);
        return PyErr_Occurred() ? -1 : 1;
    }
    int rc = -1;
    PyObject *deadline = PyDict_GetItemWithError(deadlines, h->key);
    if (!deadline && PyErr_Occurred())
        goto out;
    int64_t when = 0;
    int timed = deadline && small_int(deadline, &when);
    int live = !deadline || (timed && h->now_ms <= when);
    PyObject *value = Py_XNewRef(PyDict_GetItemWithError(values, h->key));
    if (!value) {
        rc = PyErr_Occurred() ? -1 : 0;
        goto out;
    }
    if (live && Py_TYPE(value) == (PyTypeObject *)self->cell_type && PyDict_GET_SIZE(value) > 0) {
        *cell = value;
        rc = 0;
        goto out;
    }
    Py_DECREF(value);
    if (timed && !live) { /* expired: deleted, absent (its heap entry goes stale) */
        rc = delete_key(self, h->key, values, deadlines);
        goto out;
    }
    Py_CLEAR(values);
    Py_CLEAR(deadlines);
    PyObject *now_ms = PyLong_FromLongLong(h->now_ms);
    if (!now_ms)
        goto out;
    PyObject *got = PyObject_CallFunctionObjArgs(self->get_at, h->key, now_ms, NULL);
    Py_DECREF(now_ms);
    if (!got)
        goto out;
    if (got == Py_None) {
        Py_DECREF(got);
        rc = 0;
        goto out;
    }
    if (Py_TYPE(got) != (PyTypeObject *)self->cell_type) {
        Py_DECREF(got);
        PyObject *error = PyObject_CallNoArgs(self->wrongtype);
        if (error) {
            PyErr_SetObject((PyObject *)Py_TYPE(error), error);
            Py_DECREF(error);
        }
        goto out;
    }
    *cell = got;
    rc = 0;
out:
    Py_XDECREF(deadlines);
    Py_XDECREF(values);
    return rc;
}

/* A fresh cell of the algorithm's type stored at h->key (Keyspace.store: no
 * deadline, not listpack); a new reference, or NULL with an exception set.
 * Made as Cell.__init__ makes it (its one hash field) without running it.
 * The three tables are held until the store is done: each step may run a
 * stored key's __eq__, which may replace them. */
PyObject *rl_store_cell(RateDeciderObject *self, const hit *h) {
    PyObject *values = table(self, s_values, 0), *deadlines = NULL, *listpack = NULL;
    PyObject *cell = NULL;
    if (values && (deadlines = table(self, s_deadlines, 0)))
        listpack = table(self, s_listpack, 1);
    if (!listpack) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_SystemError, "keyspace tables changed type");
        goto out;
    }
    PyTypeObject *type = (PyTypeObject *)self->cell_type;
    PyObject *empty = PyTuple_New(0);
    cell = empty ? type->tp_new(type, empty, NULL) : NULL;
    Py_XDECREF(empty);
    if (!cell)
        goto out;
    if (PyDict_Update(cell, self->cell_template) < 0) {
        Py_CLEAR(cell);
        goto out;
    }
    int has = PyDict_Contains(deadlines, h->key);
    if (has < 0 || (has && PyDict_DelItem(deadlines, h->key) < 0) ||
        PySet_Discard(listpack, h->key) < 0 || PyDict_SetItem(values, h->key, cell) < 0)
        Py_CLEAR(cell);
out:
    Py_XDECREF(listpack);
    Py_XDECREF(deadlines);
    Py_XDECREF(values);
    return cell;
}

/* Keyspace.keep_deadline(h->key, when): a later deadline replaces the
 * recorded one and marks the key late; a first one is pushed on the expiry
 * heap; anything else goes to the Python method. 0, or -1 with an exception.
 * The tables (deadlines, late, heap) are held until their last use: the
 * stores may run a stored key's __eq__, which may replace them. */
int rl_keep_deadline(RateDeciderObject *self, const hit *h, int64_t when) {
    int rc = -1;
    PyObject *deadlines = table(self, s_deadlines, 0);
    PyObject *late = deadlines ? table(self, s_late, 1) : NULL, *heap = NULL;
    if (!late) {
        if (PyErr_Occurred())
            goto out;
        goto python;
    }
    PyObject *current = PyDict_GetItemWithError(deadlines, h->key);
    int64_t now_when;
    int had = current != NULL; /* current is not read after the next call */
    if (current && small_int(current, &now_when) && when >= now_when) {
        if (when == now_when) {
            rc = 0;
            goto out;
        }
        PyObject *value = PyLong_FromLongLong(when);
        if (!value)
            goto out;
        int stored = PyDict_SetItem(deadlines, h->key, value);
        Py_DECREF(value);
        rc = stored < 0 ? -1 : PySet_Add(late, h->key);
        goto out;
    }
    if (PyErr_Occurred())
        goto out;
    heap = Py_XNewRef(PyDict_GetItemWithError(self->ks_dict, s_heap));
    if (!had && heap && PyList_CheckExact(heap) &&
        PyList_GET_SIZE(heap) + 1 <= 2 * (PyDict_GET_SIZE(deadlines) + 1) + 64) {
        /* Keyspace._set_deadline without its rebuild (not due) */
        PyObject *value = PyLong_FromLongLong(when);
        PyObject *entry = value ? PyTuple_Pack(2, value, h->key) : NULL;
        int stored = entry ? PyDict_SetItem(deadlines, h->key, value) : -1;
        PyObject *pushed = stored == 0
                               ? PyObject_CallFunctionObjArgs(heappush, heap, entry, NULL)
                               : NULL;
        Py_XDECREF(value);
        Py_XDECREF(entry);
        Py_XDECREF(pushed);
        rc = pushed ? 0 : -1;
        goto out;
    }
    if (PyErr_Occurred())
        goto out;
python:;
    PyObject *value = PyLong_FromLongLong(when);
    PyObject *r = value ? PyObject_CallFunctionObjArgs(self->keep_deadline, h->key, value, NULL)
                        : NULL;
    Py_XDECREF(value);
    Py_XDECREF(r);
    rc = r ? 0 : -1;
out:
    Py_XDECREF(heap);
    Py_XDECREF(late);
    Py_XDECREF(deadlines);
    return rc;
}

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
 * both are within +-BOUND; 0 otherwise, -1 on error. A limiter clock's
 * reading that is not a float within [0, clock_max] goes to check_clock
 * first, which raises the feature's typed error for one out of range. */
static int read_clock(RateDeciderObject *self, hit *h, PyObject **us, PyObject **ms) {
    PyObject *v = PyObject_CallNoArgs(self->clock);
    if (!v)
        return -1;
    int backend = self->clock_mode == CLOCK_BACKEND;
    if (!backend && !(PyFloat_CheckExact(v) && PyFloat_AS_DOUBLE(v) >= 0 &&
                      PyFloat_AS_DOUBLE(v) <= self->clock_max)) {
        PyObject *checked = PyObject_CallOneArg(self->check_clock, v);
        if (!checked) {
            Py_DECREF(v);
            return -1;
        }
        Py_DECREF(checked);
    }
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
 * unusual): only then does Keyspace.expire_pending have work. Reads the heap
 * and its first entry borrowed: nothing here runs Python code. */
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

/* One step of the keyspace's active expiry (up to EXPIRY_DELETES keys);
 * the caller decides when it is due. 0, or -1 with an exception set. */
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
        result = rl_cores[self->algorithm](self, h);
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

/* decide(identity, cost, consume) -> Decision: the bound operation. A borrowed
 * `args` vector of three; a new reference, or NULL with an exception set (the
 * feature's typed errors before the lock, WRONGTYPE and clock errors under
 * it, the lock released in every case). */
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
    if (units == 0) /* a cost of 0 only reports: the feature's args make it a peek */
        h.consume = 0;
    PyObject *locked = PyObject_CallNoArgs(self->acquire);
    if (!locked) {
        Py_DECREF(keys);
        return NULL;
    }
    Py_DECREF(locked);
    PyObject *mode = h.consume ? Py_True : Py_False; /* borrowed: the core's `consume` */
    PyObject *result = decide_locked(self, &h, keys, cost, mode, python);
    Py_DECREF(keys);
    return native_release(self->release, result);
}

/* ==== construction ========================================================= */

#define OBJECT_FIELDS(X)                                                                       \
    X(policy) X(limit_obj) X(decision_type) X(keyspace) X(ks_dict) X(acquire) X(release)       \
    X(identities) X(plan_keys) X(plan_args) X(clock) X(now_ms) X(expire) X(get_at)             \
    X(keep_deadline) X(delete) X(core) X(cell_type) X(cell_template) X(wrongtype)              \
    X(deque_type) X(popleft) X(append) X(check_clock)

/* GC: visit every object the decider holds. */
static int RateDecider_traverse(RateDeciderObject *self, visitproc visit, void *arg) {
#define VISIT(f) Py_VISIT(self->f);
    OBJECT_FIELDS(VISIT)
#undef VISIT
    return 0;
}

/* GC: drop every object the decider holds. */
static int RateDecider_clear(RateDeciderObject *self) {
#define CLEAR(f) Py_CLEAR(self->f);
    OBJECT_FIELDS(CLEAR)
#undef CLEAR
    return 0;
}

/* Untrack, drop the references, free. */
static void RateDecider_dealloc(RateDeciderObject *self) {
    PyObject_GC_UnTrack(self);
    RateDecider_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* RateDecider(...): see _native.pyi and ranked/backends/native/ratelimit.py;
 * new reference, or NULL with TypeError / ValueError. */
static PyObject *RateDecider_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    int algorithm, clock_mode;
    long long limit, window, window_ms, capacity;
    double rate, interval, tolerance, clock_max;
    PyObject *policy, *decision_type, *keyspace, *lock, *identities, *plan_keys, *plan_args;
    PyObject *clock, *core, *cell_type, *slot_names, *wrongtype, *check_clock;
    if (kwds && PyDict_GET_SIZE(kwds)) {
        PyErr_SetString(PyExc_TypeError, "RateDecider takes positional arguments only");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "ii(LLLL)(ddd)OO!OOO!OOOOO!O!OOd:RateDecider", &algorithm,
                          &clock_mode, &limit, &window, &window_ms, &capacity, &rate, &interval,
                          &tolerance, &policy, &PyType_Type, &decision_type, &keyspace, &lock,
                          &PyDict_Type, &identities, &plan_keys, &plan_args, &clock, &core,
                          &PyType_Type, &cell_type, &PyTuple_Type, &slot_names, &wrongtype,
                          &check_clock, &clock_max))
        return NULL;
    Py_ssize_t needed[] = {2, 2, 3, 2, 1};
    PyTypeObject *dt = (PyTypeObject *)decision_type, *ct = (PyTypeObject *)cell_type;
    if (algorithm < ALG_FIXED || algorithm > ALG_GCRA || clock_mode < CLOCK_SYSTEM ||
        clock_mode > CLOCK_LIMITER || PyTuple_GET_SIZE(slot_names) != needed[algorithm] ||
        limit < 1 || limit >= BOUND || window < 1 || window >= BOUND || window_ms < 0 ||
        window_ms >= BOUND || capacity < 1 || capacity >= BOUND || !(rate > 0) ||
        !(interval > 0) || !(tolerance > 0) || !PyType_IsSubtype(dt, &PyTuple_Type) ||
        dt->tp_basicsize != PyTuple_Type.tp_basicsize || !PyType_IsSubtype(ct, &PyDict_Type) ||
        !(clock_max >= 0) ||
        (clock_mode == CLOCK_LIMITER &&
         (!PyCallable_Check(clock) || !PyCallable_Check(check_clock)))) {
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
    self->clock_max = clock_max;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(slot_names); i++)
        if ((self->slots[i] = native_slot_offset(ct, PyTuple_GET_ITEM(slot_names, i))) < 0)
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
    KEEP(check_clock, check_clock);
#undef KEEP
    PyObject *probe = PyObject_CallNoArgs(cell_type);
    if (!probe)
        goto error;
    self->cell_template = PyDict_Copy(probe);
    Py_DECREF(probe);
    if (!self->cell_template || !(self->limit_obj = PyLong_FromLongLong(limit)) ||
        !(self->ks_dict = PyObject_GenericGetDict(keyspace, NULL)) ||
        native_method(&self->acquire, lock, "acquire") ||
        native_method(&self->release, lock, "release") ||
        native_method(&self->now_ms, keyspace, "now_ms") ||
        native_method(&self->expire, keyspace, "expire_pending") ||
        native_method(&self->get_at, keyspace, "get_at") ||
        native_method(&self->keep_deadline, keyspace, "keep_deadline") ||
        native_method(&self->delete, keyspace, "delete"))
        goto error;
    PyObject *collections = PyImport_ImportModule("collections");
    if (!collections)
        goto error;
    self->deque_type = PyObject_GetAttrString(collections, "deque");
    Py_DECREF(collections);
    if (!self->deque_type || native_method(&self->popleft, self->deque_type, "popleft") ||
        native_method(&self->append, self->deque_type, "append"))
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

static PyTypeObject RateDeciderType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ranked.backends.native._native.RateDecider",
    .tp_doc = "One memory rate-limiter decision per call: decide(identity, cost, consume).",
    .tp_basicsize = sizeof(RateDeciderObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = RateDecider_new,
    .tp_dealloc = (destructor)RateDecider_dealloc,
    .tp_traverse = (traverseproc)RateDecider_traverse,
    .tp_clear = (inquiry)RateDecider_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(RateDeciderObject, vectorcall),
};

/* 1 when `o` is a RateDecider (the guard's check calls its cores), else 0. */
int rl_is_decider(PyObject *o) { return Py_IS_TYPE(o, &RateDeciderType); }

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
