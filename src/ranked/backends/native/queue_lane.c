/* queue_lane.c - ranked.backends.native._native.QueueLane: a memory queue's push and
 * pop done in C, straight on the ready set's core.
 *
 * ranked.queue._lane.MemoryQueue builds one lane per queue object and binds
 * the lane's push / pop / pop_with_priority as the object's own attributes,
 * so `queue.push(item, 3)` is one C call. Each method does exactly the
 * steps of MemoryQueue's Python direct path, serialised with the memory
 * backend's other users (lane_enter: the lock, or the GIL alone when the
 * lock is free and the step runs no Python code). Whenever the call or the
 * queue's keys are in any other state (a keyword it does not take, an item
 * or priority that is not a plain bytes / str / finite float / exact int, a
 * delayed item, a lease, a retried item, a TTL on a queue key, a missing or
 * non-decimal sequence, a ready key holding something else) it hands the
 * call, arguments untouched, to the Python method it was built with, which
 * runs that direct path or the generic procedure: results and errors stay
 * theirs.
 *
 * The keyspace's value and deadline tables are read from its `_values` and
 * `_deadlines` attributes on every call (what `Keyspace.raw_values` and
 * `raw_deadlines` return; FLUSHALL replaces them). The parsed sequence
 * number is cached keyed by the identity of the bytes object the lane
 * stored, which it keeps alive: any other writer stores another object.
 */
#include "native.h" /* Python.h first: it sets the POSIX feature macros */

#include <math.h>
#include <string.h>
#include <time.h>

#define SEQ_BYTES 8
#define MAX_SAFE_INTEGER 9007199254740992LL /* 2**53 */
#define MEMBER_STACK 256

typedef struct {
    PyObject_HEAD
    PyObject *keyspace;     /* the Keyspace: _values, _deadlines */
    PyObject *acquire;      /* the backend lock's bound acquire / release / locked */
    PyObject *release;
    PyObject *locked;
    PyObject *clock;        /* the keyspace's clock: Unix seconds */
    int system_clock;       /* 1: clock is time.time, read here without calling it */
    PyObject *wakeup;       /* the queue's Wakeup: .waiting, .notify() */
    PyObject *ready;        /* key bytes of the ready set, ... */
    PyObject *seq;          /* ... of the sequence text, ... */
    PyObject *quiet[3];     /* ... and of delayed, leases, attempts */
    PyObject *slow[3];      /* Python push, pop, pop_with_priority */
    PyObject *seq_text;     /* the bytes this lane last stored at `seq`, or NULL */
    long long seq_value;    /* its value */
    int text;               /* 1: items come back as str */
} QueueLaneObject;

enum { SLOW_PUSH, SLOW_POP, SLOW_POP_PRIORITY };

static PyObject *str_values, *str_deadlines, *str_waiting, *str_notify;
static PyObject *str_priority, *str_delay, *str_at, *str_now_us, *str_timeout;

/* ==== lifecycle =========================================================== */

/* GC: visit every object the lane holds. */
static int QueueLane_traverse(PyObject *self, visitproc visit, void *arg) {
    QueueLaneObject *q = (QueueLaneObject *)self;
    Py_VISIT(q->keyspace);
    Py_VISIT(q->acquire);
    Py_VISIT(q->release);
    Py_VISIT(q->locked);
    Py_VISIT(q->clock);
    Py_VISIT(q->wakeup);
    for (int i = 0; i < 3; i++)
        Py_VISIT(q->slow[i]);
    return 0;
}

/* GC: drop every object the lane holds. */
static int QueueLane_clear(PyObject *self) {
    QueueLaneObject *q = (QueueLaneObject *)self;
    Py_CLEAR(q->keyspace);
    Py_CLEAR(q->acquire);
    Py_CLEAR(q->release);
    Py_CLEAR(q->locked);
    Py_CLEAR(q->clock);
    Py_CLEAR(q->wakeup);
    Py_CLEAR(q->ready);
    Py_CLEAR(q->seq);
    Py_CLEAR(q->seq_text);
    for (int i = 0; i < 3; i++) {
        Py_CLEAR(q->quiet[i]);
        Py_CLEAR(q->slow[i]);
    }
    return 0;
}

/* Untrack, drop the references, free. */
static void QueueLane_dealloc(PyObject *self) {
    PyObject_GC_UnTrack(self);
    QueueLane_clear(self);
    Py_TYPE(self)->tp_free(self);
}

/* The standard library's time.time (new reference), or NULL with an
 * exception. */
static PyObject *import_time_time(void) {
    PyObject *module = PyImport_ImportModule("time");
    if (!module)
        return NULL;
    PyObject *f = PyObject_GetAttrString(module, "time");
    Py_DECREF(module);
    return f;
}

/* QueueLane(keyspace, lock, wakeup, keys, text, slow): keys is the tuple of
 * bytes (ready, seq, delayed, leases, attempts), slow the tuple of callables
 * (push, pop, pop_with_priority) taking the same arguments as the lane's
 * methods. Everything is checked before the lane keeps references. A lane
 * is initialised once (TypeError after): its methods pass its fields,
 * borrowed, to calls that may run Python code (a lock's `locked`, a dict
 * lookup comparing a stored key), and a second __init__ run from such code
 * would free them in the middle of the call. */
static int QueueLane_init(PyObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"keyspace", "lock", "wakeup", "keys", "text", "slow", NULL};
    PyObject *keyspace, *lock, *wakeup, *keys, *slow;
    int text;
    if (((QueueLaneObject *)self)->keyspace) {
        PyErr_SetString(PyExc_TypeError, "QueueLane is already initialised");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOO!pO!:QueueLane", kwlist, &keyspace, &lock,
                                     &wakeup, &PyTuple_Type, &keys, &text, &PyTuple_Type, &slow))
        return -1;
    if (PyTuple_GET_SIZE(keys) != 5 || PyTuple_GET_SIZE(slow) != 3) {
        PyErr_SetString(PyExc_TypeError, "QueueLane needs 5 keys and 3 slow paths");
        return -1;
    }
    for (int i = 0; i < 5; i++) {
        if (!PyBytes_CheckExact(PyTuple_GET_ITEM(keys, i))) {
            PyErr_SetString(PyExc_TypeError, "QueueLane keys must be bytes");
            return -1;
        }
    }
    for (int i = 0; i < 3; i++) {
        if (!PyCallable_Check(PyTuple_GET_ITEM(slow, i))) {
            PyErr_SetString(PyExc_TypeError, "QueueLane slow paths must be callable");
            return -1;
        }
    }
    PyObject *acquire = PyObject_GetAttrString(lock, "acquire");
    PyObject *release = acquire ? PyObject_GetAttrString(lock, "release") : NULL;
    PyObject *locked = release ? PyObject_GetAttrString(lock, "locked") : NULL;
    PyObject *clock = locked ? PyObject_GetAttrString(keyspace, "clock") : NULL;
    PyObject *system = clock ? import_time_time() : NULL;
    if (!system) {
        Py_XDECREF(acquire);
        Py_XDECREF(release);
        Py_XDECREF(locked);
        Py_XDECREF(clock);
        return -1;
    }
    QueueLaneObject *q = (QueueLaneObject *)self;
    if (q->keyspace) { /* the attribute lookups above ran Python code: it may have */
        Py_DECREF(acquire);
        Py_DECREF(release);
        Py_DECREF(locked);
        Py_DECREF(clock);
        Py_DECREF(system);
        PyErr_SetString(PyExc_TypeError, "QueueLane is already initialised");
        return -1;
    }
    q->keyspace = Py_NewRef(keyspace);
    q->acquire = acquire;
    q->release = release;
    q->locked = locked;
    q->clock = clock;
    q->system_clock = clock == system;
    Py_DECREF(system);
    q->wakeup = Py_NewRef(wakeup);
    q->ready = Py_NewRef(PyTuple_GET_ITEM(keys, 0));
    q->seq = Py_NewRef(PyTuple_GET_ITEM(keys, 1));
    for (int i = 0; i < 3; i++) {
        q->quiet[i] = Py_NewRef(PyTuple_GET_ITEM(keys, 2 + i));
        q->slow[i] = Py_NewRef(PyTuple_GET_ITEM(slow, i));
    }
    q->seq_value = 0;
    q->text = text;
    return 0;
}

/* ==== helpers ============================================================= */

/* 1 when q was initialised (and not cleared by the collector); else 0 with
 * TypeError: a lane made by QueueLane.__new__ alone has no fields to use. */
static int lane_ready(QueueLaneObject *q) {
    if (q->keyspace)
        return 1;
    PyErr_SetString(PyExc_TypeError, "QueueLane is not initialised");
    return 0;
}

/* Serialises the caller with the backend's other users. The lock only
 * guards multi-step work of threads that may release the GIL in between;
 * a caller that runs no Python code and never releases the GIL until it
 * is done (`gil_suffices`) is atomic under the GIL alone once it has seen
 * the lock free, since no one can take it meanwhile. Returns 1 after
 * taking the lock (lane_leave releases it), 0 when the caller runs without
 * it, -1 with an exception set. */
static int lane_enter(QueueLaneObject *q, int gil_suffices) {
#ifndef Py_GIL_DISABLED
    if (gil_suffices) {
        PyObject *held = PyObject_CallNoArgs(q->locked);
        if (!held)
            return -1;
        Py_DECREF(held);
        if (held == Py_False)
            return 0;
    }
#endif
    PyObject *r = PyObject_CallNoArgs(q->acquire);
    Py_XDECREF(r);
    return r ? 1 : -1;
}

/* Releases the lock when `taken`, keeping any exception already set.
 * `result` passes through (stolen, returned), or becomes NULL when the
 * release fails. */
static PyObject *lane_leave(QueueLaneObject *q, int taken, PyObject *result) {
    if (!taken)
        return result;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyObject *r = PyObject_CallNoArgs(q->release);
    if (!r) {
        Py_CLEAR(result);
        if (type) { /* the first error wins */
            PyErr_Clear();
            PyErr_Restore(type, value, tb);
        }
        return NULL;
    }
    Py_DECREF(r);
    PyErr_Restore(type, value, tb);
    return result;
}

/* Wakes the pops waiting on the queue, if any: Wakeup.notify() with the
 * lock held (taken here unless `taken`). Runs Python code: only once the
 * set is consistent. 0, or -1 with an exception set. */
static int lane_wake(QueueLaneObject *q, int taken) {
    PyObject *waiting = PyObject_GetAttr(q->wakeup, str_waiting);
    int wake = waiting ? PyObject_IsTrue(waiting) : -1;
    Py_XDECREF(waiting);
    if (wake <= 0)
        return wake;
    if (!taken && lane_enter(q, 0) < 0)
        return -1;
    PyObject *r = PyObject_CallMethodNoArgs(q->wakeup, str_notify);
    if (!taken)
        r = lane_leave(q, 1, r);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

/* The keyspace table `name` as a new reference in *out: 1 when it is an
 * exact dict, 0 when it is something else (the caller declines), -1 with
 * an exception. */
static int lane_table(QueueLaneObject *q, PyObject *name, PyObject **out) {
    *out = PyObject_GetAttr(q->keyspace, name);
    return *out ? PyDict_CheckExact(*out) : -1;
}

/* 1 when `key` is in dict `d`, 0 when not, -1 on error (bytes keys: no
 * Python code runs). */
static inline int lane_has(PyObject *d, PyObject *key) { return PyDict_Contains(d, key); }

/* Decimal text of `raw` (a bytes object) as a value >= 0 in *out: 1, or 0
 * when it is anything else (a sign, spaces, too long): the slow path then
 * reads it as Python's int() does. */
static int lane_parse_seq(PyObject *raw, long long *out) {
    const char *p = PyBytes_AS_STRING(raw);
    Py_ssize_t n = PyBytes_GET_SIZE(raw);
    if (n < 1 || n > 18)
        return 0;
    long long v = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return 0;
        v = v * 10 + (p[i] - '0');
    }
    *out = v;
    return 1;
}

/* floor(time.time() * 1e6) without calling time.time: the same system
 * clock read and the same nanoseconds -> seconds rounding as CPython's
 * (_PyTime_AsSecondsDouble), so the same value. 1, or 0 when the clock
 * cannot be read here. */
static int lane_system_us(double *us) {
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
        return 0;
    long long ns = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    volatile double seconds; /* as CPython: no other rounding of the division */
    if (ns % 1000000000LL == 0)
        seconds = (double)(ns / 1000000000LL);
    else {
        seconds = (double)ns;
        seconds /= 1e9;
    }
    *us = floor(seconds * 1e6);
    return 1;
}

/* floor(clock() * 1e6) in *out: 1, 0 when the clock answered something
 * else than a float whose product is in [0, 2**62] (the caller declines),
 * -1 when the clock raised. Calls Python code unless the clock is
 * time.time: never during a mutation, and only with the lock taken. */
static int lane_now_us(QueueLaneObject *q, long long *out) {
    double us;
    if (!(q->system_clock && lane_system_us(&us))) {
        PyObject *t = PyObject_CallNoArgs(q->clock);
        if (!t)
            return -1;
        int is_float = PyFloat_CheckExact(t);
        us = is_float ? floor(PyFloat_AS_DOUBLE(t) * 1e6) : -1.0;
        Py_DECREF(t);
    }
    if (!(us >= 0.0 && us <= 4611686018427387904.0))
        return 0;
    *out = (long long)us;
    return 1;
}

/* The decimal text of `last` >= 0 as a new bytes object, or NULL with
 * MemoryError. The common case is the cached value + 1: its text with the
 * last digits carried, no division. */
static PyObject *lane_seq_text(const QueueLaneObject *q, long long last) {
    char buf[24];
    Py_ssize_t n = 0;
    if (q->seq_text && last == q->seq_value + 1) {
        n = PyBytes_GET_SIZE(q->seq_text); /* at most 19 digits: value < 2**62 */
        memcpy(buf + 1, PyBytes_AS_STRING(q->seq_text), (size_t)n);
        Py_ssize_t i = n;
        while (i > 0 && buf[i] == '9')
            buf[i--] = '0';
        if (i > 0) {
            buf[i]++;
            return PyBytes_FromStringAndSize(buf + 1, n);
        }
        buf[0] = '1'; /* 99..9 + 1 */
        return PyBytes_FromStringAndSize(buf, n + 1);
    }
    char tmp[24];
    do {
        tmp[n++] = (char)('0' + last % 10);
        last /= 10;
    } while (last);
    for (Py_ssize_t i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    return PyBytes_FromStringAndSize(buf, n);
}

/* Calls the Python twin of a method with the caller's arguments as given. */
static PyObject *lane_slow(QueueLaneObject *q, int which, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames) {
    return PyObject_Vectorcall(q->slow[which], args, (size_t)nargs, kwnames);
}

/* ==== push ================================================================ */

/* The item's bytes: 1 with *p / *n pointing into `item` (borrowed), 0 when
 * the slow path must convert it (or raise). Exact bytes, or an exact str
 * that encodes to UTF-8 strictly, short enough for a member with its id. */
static int lane_item(PyObject *item, const char **p, Py_ssize_t *n) {
    if (PyBytes_CheckExact(item)) {
        *p = PyBytes_AS_STRING(item);
        *n = PyBytes_GET_SIZE(item);
    } else if (PyUnicode_CheckExact(item)) {
        if (!(*p = PyUnicode_AsUTF8AndSize(item, n))) {
            PyErr_Clear(); /* lone surrogates: the slow path raises InvalidItemError */
            return 0;
        }
    } else
        return 0;
    return (size_t)*n <= ZSL_MAX_MEMBER_LEN - SEQ_BYTES;
}

/* The priority as stored: 1 with *out, 0 when the slow path must validate
 * it. A finite exact float (-0.0 as 0.0), or an exact int within +-2**53. */
static int lane_priority(PyObject *o, double *out) {
    if (PyFloat_CheckExact(o)) {
        double v = PyFloat_AS_DOUBLE(o);
        if (!isfinite(v))
            return 0;
        *out = v + 0.0;
        return 1;
    }
    if (PyLong_CheckExact(o)) {
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow || v < -MAX_SAFE_INTEGER || v > MAX_SAFE_INTEGER) {
            PyErr_Clear();
            return 0;
        }
        *out = (double)v;
        return 1;
    }
    return 0;
}

/* Keyword arguments of push the fast path takes: priority, and delay / at /
 * now_us when None. 1 (with *priority set when given), 0 otherwise. */
static int lane_push_keywords(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                              PyObject **priority) {
    Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t i = 0; i < nkw; i++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, i), *value = args[nargs + i];
        if (name == str_priority && nargs == 1)
            *priority = value;
        else if (!(value == Py_None && (name == str_delay || name == str_at || name == str_now_us)))
            return 0;
    }
    return 1;
}

/* The direct push, serialised by lane_enter (`taken`: with the lock): 1
 * done, 0 declined (nothing written), -1 error (nothing written unless the
 * seq store after the insert fails, which replacing an existing key does
 * not; a failed wake-up leaves the push done). */
static int lane_push_locked(QueueLaneObject *q, int taken, const char *data, Py_ssize_t size,
                            double score) {
    PyObject *values = NULL, *deadlines = NULL, *ready = NULL, *raw = NULL, *text = NULL;
    int done = lane_table(q, str_values, &values);
    if (done <= 0)
        goto out;
    done = 0;
    ready = Py_XNewRef(PyDict_GetItemWithError(values, q->ready));
    raw = ready ? Py_XNewRef(PyDict_GetItemWithError(values, q->seq)) : NULL;
    if (PyErr_Occurred()) {
        done = -1;
        goto out;
    }
    if (!raw || !PyBytes_CheckExact(raw) || !Py_IS_TYPE(ready, &SortedSetType) ||
        !((SortedSetObject *)ready)->raw)
        goto out;
    long long last;
    if (raw == q->seq_text)
        last = q->seq_value;
    else if (!lane_parse_seq(raw, &last))
        goto out;
    if ((done = lane_table(q, str_deadlines, &deadlines)) <= 0)
        goto out;
    done = 0;
    if (PyDict_GET_SIZE(deadlines)) {
        int a = lane_has(deadlines, q->ready), b = a ? 0 : lane_has(deadlines, q->seq);
        if (a < 0 || b < 0)
            done = -1;
        if (a || b)
            goto out;
    }
    long long now;
    if ((done = lane_now_us(q, &now)) <= 0)
        goto out;
    last = last >= now ? last + 1 : now;
    /* Everything that may fail or run Python code happens before the set changes. */
    if (!(text = lane_seq_text(q, last))) {
        done = -1;
        goto out;
    }
    char stack[MEMBER_STACK];
    size_t len = (size_t)size + SEQ_BYTES;
    char *member = len <= MEMBER_STACK ? stack : PyMem_Malloc(len);
    if (!member) {
        PyErr_NoMemory();
        done = -1;
        goto out;
    }
    for (int i = 0; i < SEQ_BYTES; i++)
        member[i] = (char)(unsigned char)((unsigned long long)last >> (8 * (SEQ_BYTES - 1 - i)));
    memcpy(member + SEQ_BYTES, data, (size_t)size);
    zset *z = &((SortedSetObject *)ready)->z;
    uint32_t h = zdict_hash(member, len);
    zsl_node *x = zset_lookup(z, member, len, h);
    if (x) { /* the same member already queued: ZADD moves it */
        if (score != x->score)
            zset_set_score(z, x, score, h);
    } else if (!zset_insert(z, score, member, len, h)) {
        PyErr_NoMemory();
        done = -1;
    }
    if (member != stack)
        PyMem_Free(member);
    if (done < 0 || PyDict_SetItem(values, q->seq, text) < 0) {
        done = -1;
        goto out;
    }
    Py_XSETREF(q->seq_text, Py_NewRef(text));
    q->seq_value = last;
    done = lane_wake(q, taken) < 0 ? -1 : 1; /* the set is consistent again */
out:
    Py_XDECREF(text);
    Py_XDECREF(raw);
    Py_XDECREF(ready);
    Py_XDECREF(deadlines);
    Py_XDECREF(values);
    return done;
}

/* push(item, priority=0.0, *, delay=None, at=None, now_us=None) -> None.
 * The item's bytes are borrowed from args[0] (an exact bytes or str the
 * caller keeps alive); the lane's fields are fixed once initialised. */
static PyObject *QueueLane_push(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames) {
    QueueLaneObject *q = (QueueLaneObject *)self;
    if (!lane_ready(q))
        return NULL;
    PyObject *priority = nargs == 2 ? args[1] : NULL;
    const char *data;
    Py_ssize_t size;
    double score = 0.0;
    if (nargs < 1 || nargs > 2 || (kwnames && !lane_push_keywords(args, nargs, kwnames, &priority)) ||
        !lane_item(args[0], &data, &size) || (priority && !lane_priority(priority, &score)))
        return lane_slow(q, SLOW_PUSH, args, nargs, kwnames);
    int taken = lane_enter(q, q->system_clock);
    if (taken < 0)
        return NULL;
    int done = lane_push_locked(q, taken, data, size, score);
    PyObject *unlocked = lane_leave(q, taken, Py_NewRef(Py_None));
    if (!unlocked)
        return NULL;
    Py_DECREF(unlocked);
    if (done < 0)
        return NULL;
    if (done == 0)
        return lane_slow(q, SLOW_PUSH, args, nargs, kwnames);
    Py_RETURN_NONE;
}

/* ==== pop ================================================================= */

/* The direct pop of the head, serialised by lane_enter: the item (or (item, priority)
 * with `with_priority`) as a new reference; Py_None (new reference) when
 * the queue is empty; NULL with no exception to decline; NULL with one on
 * error. The checks that may run Python code (each dict lookup may compare
 * a stored key with its __eq__) come first and hold their tables; the ready
 * set is looked up last and held (a new reference), so it is the set stored
 * once such code has run, and no Python code runs between taking it and
 * deleting its head. */
static PyObject *lane_pop_locked(QueueLaneObject *q, int with_priority) {
    PyObject *result = NULL, *values = NULL, *deadlines = NULL, *ready = NULL;
    if (lane_table(q, str_values, &values) <= 0)
        goto out;
    for (int i = 0; i < 3; i++) {
        int has = lane_has(values, q->quiet[i]);
        if (has)
            goto out;
    }
    if (lane_table(q, str_deadlines, &deadlines) <= 0)
        goto out;
    if (PyDict_GET_SIZE(deadlines) && lane_has(deadlines, q->ready))
        goto out;
    ready = Py_XNewRef(PyDict_GetItemWithError(values, q->ready));
    if (!ready || !Py_IS_TYPE(ready, &SortedSetType) || !((SortedSetObject *)ready)->raw)
        goto out; /* absent or another type: the slow path answers (None or WRONGTYPE) */
    zset *z = &((SortedSetObject *)ready)->z;
    if (!z->length) {
        result = Py_NewRef(Py_None);
        goto out;
    }
    zsl_node *x = z->header->level[0].forward;
    const char *p = zsl_member(x) + (x->mlen > SEQ_BYTES ? SEQ_BYTES : x->mlen);
    Py_ssize_t n = x->mlen > SEQ_BYTES ? (Py_ssize_t)(x->mlen - SEQ_BYTES) : 0;
    /* Result objects first (no GC allocation before the node is gone). */
    PyObject *item = q->text ? PyUnicode_DecodeUTF8(p, n, "surrogateescape")
                             : PyBytes_FromStringAndSize(p, n);
    PyObject *priority = item && with_priority ? PyFloat_FromDouble(x->score) : NULL;
    if (!item || (with_priority && !priority)) {
        Py_XDECREF(item);
        goto out;
    }
    zset_delete(z, x);
    if (!with_priority) {
        result = item;
        goto out;
    }
    result = py_tuple2(item, priority);
out:
    Py_XDECREF(ready);
    Py_XDECREF(deadlines);
    Py_XDECREF(values);
    return result;
}

/* pop / pop_with_priority(timeout=None, *, now_us=None): the fast path when
 * both are None, else (or when declined) the Python twin. */
static PyObject *lane_pop(QueueLaneObject *q, int which, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames) {
    if (!lane_ready(q))
        return NULL;
    int plain = nargs == 0 || (nargs == 1 && args[0] == Py_None);
    if (plain && kwnames) {
        for (Py_ssize_t i = 0; plain && i < PyTuple_GET_SIZE(kwnames); i++) {
            PyObject *name = PyTuple_GET_ITEM(kwnames, i);
            plain = args[nargs + i] == Py_None &&
                    ((name == str_timeout && nargs == 0) || name == str_now_us);
        }
    }
    if (!plain)
        return lane_slow(q, which, args, nargs, kwnames);
    int taken = lane_enter(q, 1); /* no Python code runs before the pop is done */
    if (taken < 0)
        return NULL;
    PyObject *result = lane_leave(q, taken, lane_pop_locked(q, which == SLOW_POP_PRIORITY));
    if (result || PyErr_Occurred())
        return result;
    return lane_slow(q, which, args, nargs, kwnames);
}

/* lane.pop(timeout=None, *, now_us=None): see lane_pop. */
static PyObject *QueueLane_pop(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames) {
    return lane_pop((QueueLaneObject *)self, SLOW_POP, args, nargs, kwnames);
}

/* lane.pop_with_priority(timeout=None, *, now_us=None): see lane_pop. */
static PyObject *QueueLane_pop_with_priority(PyObject *self, PyObject *const *args,
                                             Py_ssize_t nargs, PyObject *kwnames) {
    return lane_pop((QueueLaneObject *)self, SLOW_POP_PRIORITY, args, nargs, kwnames);
}

/* ==== type ================================================================ */

static PyMethodDef QueueLane_methods[] = {
    {"push", (PyCFunction)(void (*)(void))QueueLane_push, METH_FASTCALL | METH_KEYWORDS,
     "push(item, priority=0.0, *, delay=None, at=None, now_us=None): Queue.push"},
    {"pop", (PyCFunction)(void (*)(void))QueueLane_pop, METH_FASTCALL | METH_KEYWORDS,
     "pop(timeout=None, *, now_us=None): Queue.pop"},
    {"pop_with_priority", (PyCFunction)(void (*)(void))QueueLane_pop_with_priority,
     METH_FASTCALL | METH_KEYWORDS,
     "pop_with_priority(timeout=None, *, now_us=None): Queue.pop_with_priority"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject QueueLaneType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ranked.backends.native._native.QueueLane",
    .tp_basicsize = sizeof(QueueLaneObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A memory queue's push and pop in C (see ranked.queue._lane).",
    .tp_traverse = QueueLane_traverse,
    .tp_clear = QueueLane_clear,
    .tp_dealloc = QueueLane_dealloc,
    .tp_init = QueueLane_init,
    .tp_new = PyType_GenericNew,
    .tp_methods = QueueLane_methods,
};

/* Interns the names the lane compares keywords and attributes against and
 * adds QueueLane to `m`; 0, or -1 with an exception set. */
int queue_lane_add_to_module(PyObject *m) {
    struct {
        PyObject **slot;
        const char *text;
    } names[] = {
        {&str_values, "_values"},   {&str_deadlines, "_deadlines"}, {&str_waiting, "waiting"},
        {&str_notify, "notify"},    {&str_priority, "priority"},    {&str_delay, "delay"},
        {&str_at, "at"},            {&str_now_us, "now_us"},        {&str_timeout, "timeout"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!*names[i].slot && !(*names[i].slot = PyUnicode_InternFromString(names[i].text)))
            return -1;
    }
    if (PyType_Ready(&QueueLaneType) < 0)
        return -1;
    return PyModule_AddObjectRef(m, "QueueLane", (PyObject *)&QueueLaneType);
}
