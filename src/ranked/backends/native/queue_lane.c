/* queue_lane.c - ranked.backends.native._native.QueueLane: a memory queue's push
 * and pop done in C, straight on the ready set's core.
 *
 * The memory backend's queue factory (ranked/backends/native/queue.py) builds
 * one lane per bound operation: kind LANE_PUSH for the queue's push, LANE_POP /
 * LANE_POP_PRIORITY for pop / pop_with_priority. Calling the lane runs the
 * operation with its own positional arguments (push: item, priority, delay,
 * at, now_us; pop: timeout, now_us); its `method` is the same step taking the
 * queue method's signature (keywords included), which the queue installs as
 * its method, so `queue.push(item, 3)` is one C call.
 *
 * The lane does the plain cases itself, serialised with the memory backend's
 * other users (lane_enter: the lock, or the GIL alone when the lock is free
 * and the step runs no Python code): a push visible now (plain bytes / str
 * item, finite float or exact int priority, no delay, at or instant) and a pop
 * of the head with nothing to settle (no delayed item, lease or retried item:
 * those keys absent or empty; a pop with a timeout too, when an item
 * is ready), and push_many / pop_many of a batch the same way under the
 * lock. Whenever the call or the queue's keys are in any other state (a
 * delay, a timeout with nothing ready, an explicit instant, an item or
 * priority of another type, a delayed item, a lease, a retried item, a TTL on
 * a queue key, a missing or non-decimal sequence, a ready key holding
 * something else) it hands the call, as positional arguments, to the
 * operation's reference it was built with (its encode, then the Python twin
 * under the lock; for a pop, waiting for a push when there is a timeout):
 * results and errors stay the reference's.
 *
 * The keyspace's value and deadline tables are read from its `_values` and
 * `_deadlines` attributes on every call (FLUSHALL replaces them). The parsed
 * sequence number is cached keyed by the identity of the bytes object the lane
 * stored, which it keeps alive: any other writer stores another object.
 */
#include "native.h" /* Python.h first: it sets the POSIX feature macros */

#include <math.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#define SEQ_BYTES 8
#define MAX_SAFE_INTEGER 9007199254740992LL /* 2**53 */
#define MEMBER_STACK 256
#define PUSH_ARGS 5      /* item, priority, delay, at, now_us */
#define POP_ARGS 2       /* timeout, now_us */
#define PUSH_MANY_ARGS 4 /* pairs, delay, at, now_us */
#define POP_MANY_ARGS 2  /* count, now_us */

enum { LANE_PUSH, LANE_POP, LANE_POP_PRIORITY, LANE_PUSH_MANY, LANE_POP_MANY, LANE_KINDS };

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall; /* QueueLane_call: calling the lane */
    PyObject *keyspace;        /* the Keyspace: _values, _deadlines */
    PyObject *acquire;         /* the backend lock's bound acquire / release / locked */
    PyObject *release;
    PyObject *locked;
    PyObject *clock;           /* the keyspace's clock: Unix seconds */
    int system_clock;          /* 1: clock is time.time, read here without calling it */
    PyObject *wakeup;          /* the queue's Wakeup: .waiting, .notify() */
    PyObject *ready;           /* key bytes of the ready set, ... */
    PyObject *seq;             /* ... of the sequence text, ... */
    PyObject *quiet[3];        /* ... and of delayed, leases, attempts */
    PyObject *reference;       /* the operation's reference: the lane's positional arguments */
    PyObject *seq_text;        /* the bytes this lane last stored at `seq`, or NULL */
    long long seq_value;       /* its value */
    double max_timeout;        /* the longest timeout the reference accepts (seconds) */
    int text;                  /* 1: items come back as str */
    int kind;                  /* LANE_PUSH, LANE_POP, ... (the operation it runs) */
} QueueLaneObject;

static PyObject *str_values, *str_deadlines, *str_waiting, *str_notify;
static PyObject *str_item, *str_priority, *str_delay, *str_at, *str_now_us, *str_timeout;
static PyObject *zero_priority; /* 0.0: push's default priority */
static const char *const kind_names[] = {"push", "pop", "pop_with_priority", "push_many",
                                         "pop_many"};
/* The positional arguments of each kind's operation. */
static const Py_ssize_t lane_arity[] = {PUSH_ARGS, POP_ARGS, POP_ARGS, PUSH_MANY_ARGS,
                                        POP_MANY_ARGS};

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
    Py_VISIT(q->reference);
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
    Py_CLEAR(q->reference);
    for (int i = 0; i < 3; i++)
        Py_CLEAR(q->quiet[i]);
    return 0;
}

/* Untrack, drop the references, free. */
static void QueueLane_dealloc(PyObject *self) {
    PyObject_GC_UnTrack(self);
    QueueLane_clear(self);
    Py_TYPE(self)->tp_free(self);
}

/* The standard library's time.time (borrowed: imported once and kept), or
 * NULL with an exception. */
static PyObject *time_time(void) {
    static PyObject *found = NULL;
    if (!found) {
        PyObject *module = PyImport_ImportModule("time");
        if (!module)
            return NULL;
        found = PyObject_GetAttrString(module, "time");
        Py_DECREF(module);
    }
    return found;
}

static PyObject *QueueLane_call(PyObject *self, PyObject *const *args, size_t nargsf,
                                PyObject *kwnames);

/* QueueLane.__new__: an empty lane whose calls already reach QueueLane_call
 * (which refuses them until __init__ has run). */
static PyObject *QueueLane_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    PyObject *self = PyType_GenericNew(type, args, kwds);
    if (self)
        ((QueueLaneObject *)self)->vectorcall = QueueLane_call;
    return self;
}

/* QueueLane(kind, keyspace, lock, wakeup, keys, text, reference,
 * max_timeout): kind 0 push, 1 pop, 2 pop_with_priority, 3 push_many, 4
 * pop_many; keys the tuple of bytes (ready, seq, delayed, leases, attempts);
 * reference the callable taking the lane's positional arguments that the
 * lane hands every call it does not finish; max_timeout the longest timeout
 * (seconds) the reference accepts. Everything is checked before the lane
 * keeps references. A lane is initialised once (TypeError after): its
 * methods pass its fields, borrowed, to calls that may run Python code (a
 * lock's `locked`, the reference, a dict lookup comparing a stored key), and
 * a second __init__ run from such code would free them in the middle of the
 * call. */
static int QueueLane_init(PyObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"kind", "keyspace", "lock",        "wakeup", "keys",
                             "text", "reference", "max_timeout", NULL};
    PyObject *keyspace, *lock, *wakeup, *keys, *reference;
    int kind, text;
    double max_timeout;
    if (((QueueLaneObject *)self)->keyspace) {
        PyErr_SetString(PyExc_TypeError, "QueueLane is already initialised");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "iOOOO!pOd:QueueLane", kwlist, &kind, &keyspace,
                                     &lock, &wakeup, &PyTuple_Type, &keys, &text, &reference,
                                     &max_timeout))
        return -1;
    if (kind < 0 || kind >= LANE_KINDS || PyTuple_GET_SIZE(keys) != 5) {
        PyErr_SetString(PyExc_ValueError, "QueueLane needs a kind in 0..4 and 5 keys");
        return -1;
    }
    for (int i = 0; i < 5; i++) {
        if (!PyBytes_CheckExact(PyTuple_GET_ITEM(keys, i))) {
            PyErr_SetString(PyExc_TypeError, "QueueLane keys must be bytes");
            return -1;
        }
    }
    if (!PyCallable_Check(reference)) {
        PyErr_SetString(PyExc_TypeError, "QueueLane reference must be callable");
        return -1;
    }
    PyObject *acquire = PyObject_GetAttrString(lock, "acquire");
    PyObject *release = acquire ? PyObject_GetAttrString(lock, "release") : NULL;
    PyObject *locked = release ? PyObject_GetAttrString(lock, "locked") : NULL;
    PyObject *clock = locked ? PyObject_GetAttrString(keyspace, "clock") : NULL;
    PyObject *system = clock ? time_time() : NULL;
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
        PyErr_SetString(PyExc_TypeError, "QueueLane is already initialised");
        return -1;
    }
    q->keyspace = Py_NewRef(keyspace);
    q->acquire = acquire;
    q->release = release;
    q->locked = locked;
    q->clock = clock;
    q->system_clock = clock == system;
    q->wakeup = Py_NewRef(wakeup);
    q->ready = Py_NewRef(PyTuple_GET_ITEM(keys, 0));
    q->seq = Py_NewRef(PyTuple_GET_ITEM(keys, 1));
    for (int i = 0; i < 3; i++)
        q->quiet[i] = Py_NewRef(PyTuple_GET_ITEM(keys, 2 + i));
    q->reference = Py_NewRef(reference);
    q->seq_value = 0;
    q->max_timeout = max_timeout;
    q->text = text;
    q->kind = kind;
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

/* Releases the lock when `taken` (native_release): `result` passes through
 * (stolen, returned), or becomes NULL when the release fails. */
static PyObject *lane_leave(QueueLaneObject *q, int taken, PyObject *result) {
    return taken ? native_release(q->release, result) : result;
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
 * when it is anything else (a sign, spaces, too long): the reference then
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

/* ==== push ================================================================ */

/* The item's bytes: 1 with *p / *n pointing into `item` (borrowed), 0 when
 * the reference must convert it (or raise). Exact bytes, or an exact str
 * that encodes to UTF-8 strictly, short enough for a member with its id. */
static int lane_item(PyObject *item, const char **p, Py_ssize_t *n) {
    if (PyBytes_CheckExact(item)) {
        *p = PyBytes_AS_STRING(item);
        *n = PyBytes_GET_SIZE(item);
    } else if (PyUnicode_CheckExact(item)) {
        if (!(*p = PyUnicode_AsUTF8AndSize(item, n))) {
            PyErr_Clear(); /* lone surrogates: the reference raises InvalidItemError */
            return 0;
        }
    } else
        return 0;
    return (size_t)*n <= ZSL_MAX_MEMBER_LEN - SEQ_BYTES;
}

/* The priority as stored: 1 with *out, 0 when the reference must validate
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

/* One item to push: its bytes (borrowed from the caller's objects) and its
 * priority as stored. */
typedef struct {
    const char *data;
    Py_ssize_t size;
    double score;
} lane_entry;

/* Inserts the id `last`-`data` at `score` in `z` (or moves it when it is
 * already there: ZADD's rule): 0, or -1 with MemoryError. */
static int lane_insert(zset *z, long long last, const lane_entry *e) {
    char stack[MEMBER_STACK];
    size_t len = (size_t)e->size + SEQ_BYTES;
    char *member = len <= MEMBER_STACK ? stack : PyMem_Malloc(len);
    if (!member) {
        PyErr_NoMemory();
        return -1;
    }
    for (int i = 0; i < SEQ_BYTES; i++)
        member[i] = (char)(unsigned char)((unsigned long long)last >> (8 * (SEQ_BYTES - 1 - i)));
    memcpy(member + SEQ_BYTES, e->data, (size_t)e->size);
    int done = 0;
    uint32_t h = zdict_hash(member, len);
    zsl_node *x = zset_lookup(z, member, len, h);
    if (x) { /* the same member already queued: ZADD moves it */
        if (e->score != x->score)
            zset_set_score(z, x, e->score, h);
    } else if (!zset_insert(z, e->score, member, len, h)) {
        PyErr_NoMemory();
        done = -1;
    }
    if (member != stack)
        PyMem_Free(member);
    return done;
}

/* The direct push of `n` >= 1 entries in order, serialised by lane_enter
 * (`taken`: with the lock): 1 done, 0 declined (nothing written), -1 error
 * (nothing written unless an insert runs out of memory, or the seq store
 * after the inserts fails, which replacing an existing key does not; a
 * failed wake-up leaves the push done). */
static int lane_push_locked(QueueLaneObject *q, int taken, const lane_entry *entries,
                            Py_ssize_t n) {
    PyObject *values = NULL, *deadlines = NULL, *ready = NULL, *raw = NULL, *text = NULL;
    int done = lane_table(q, str_values, &values);
    if (done <= 0)
        goto out;
    done = 0;
    raw = Py_XNewRef(PyDict_GetItemWithError(values, q->seq));
    if (PyErr_Occurred()) {
        done = -1;
        goto out;
    }
    long long last;
    if (!raw || !PyBytes_CheckExact(raw))
        goto out;
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
    long long first = last >= now ? last + 1 : now; /* then one more per entry */
    last = first + (n - 1);
    /* Everything that may fail or run Python code happens before the set changes; the
     * ready set is looked up last and held, so no Python code runs between taking it
     * and writing to it. */
    if (!(text = lane_seq_text(q, last))) {
        done = -1;
        goto out;
    }
    done = 0;
    ready = Py_XNewRef(PyDict_GetItemWithError(values, q->ready));
    if (!ready || !Py_IS_TYPE(ready, &SortedSetType) || !((SortedSetObject *)ready)->raw) {
        done = PyErr_Occurred() ? -1 : 0;
        goto out;
    }
    zset *z = &((SortedSetObject *)ready)->z;
    for (Py_ssize_t i = 0; i < n && done == 0; i++)
        done = lane_insert(z, first + i, &entries[i]);
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

/* The entries of `pairs`, an exact list or tuple of exact (item, priority)
 * tuples whose items and priorities lane_item / lane_priority take, in a new
 * PyMem array in *out, with *owner a new reference to a tuple of the pairs
 * that keeps the bytes the entries point into alive whatever happens to
 * `pairs` while the lock is awaited: the number of entries; 0 when the
 * reference must push them (empty, another shape or type; nothing to free);
 * -1 with an exception. */
static Py_ssize_t lane_entries(PyObject *pairs, lane_entry **out, PyObject **owner) {
    PyObject *tuple;
    if (PyTuple_CheckExact(pairs))
        tuple = Py_NewRef(pairs);
    else if (PyList_CheckExact(pairs))
        tuple = PyList_AsTuple(pairs);
    else
        return 0;
    if (!tuple)
        return -1;
    Py_ssize_t n = PyTuple_GET_SIZE(tuple);
    lane_entry *entries = n ? PyMem_New(lane_entry, (size_t)n) : NULL;
    if (n && !entries) {
        Py_DECREF(tuple);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pair = PyTuple_GET_ITEM(tuple, i);
        if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2 ||
            !lane_item(PyTuple_GET_ITEM(pair, 0), &entries[i].data, &entries[i].size) ||
            !lane_priority(PyTuple_GET_ITEM(pair, 1), &entries[i].score)) {
            n = 0;
            break;
        }
    }
    if (n == 0) {
        PyMem_Free(entries);
        Py_DECREF(tuple);
        return 0;
    }
    *out = entries;
    *owner = tuple;
    return n;
}

/* ==== pop ================================================================= */

/* 1 when none of the delayed, leases and attempts keys holds anything: each
 * is absent, or an empty sorted set or hash (a reliable queue's leases empty
 * out; the reference reads those as absent too); 0 when one holds something
 * (the reference settles first); -1 with an exception. */
static int lane_quiet(QueueLaneObject *q, PyObject *values) {
    for (int i = 0; i < 3; i++) {
        PyObject *v = PyDict_GetItemWithError(values, q->quiet[i]); /* borrowed */
        if (!v) {
            if (PyErr_Occurred())
                return -1;
            continue;
        }
        if (Py_IS_TYPE(v, &SortedSetType) ? ((SortedSetObject *)v)->z.length != 0
                                          : !PyDict_CheckExact(v) || PyDict_GET_SIZE(v) != 0)
            return 0;
    }
    return 1;
}


/* The tables a direct pop holds (each a new reference or NULL) until it is
 * done: releasing one may run Python code, so none is released while a
 * pointer into the ready set is in use. */
typedef struct {
    PyObject *values, *deadlines, *ready;
} lane_hold;

/* Releases what lane_ready_set took. */
static void lane_release(lane_hold *h) {
    Py_XDECREF(h->ready);
    Py_XDECREF(h->deadlines);
    Py_XDECREF(h->values);
}

/* The ready set of a direct pop, with the lock held, into h->ready: 1 when
 * the queue is quiet (lane_quiet), the ready set has no deadline and is a
 * raw SortedSet; 0 to decline (absent or another type: the reference
 * answers, None, [] or WRONGTYPE); -1 with an exception. The checks that
 * may run Python code (each dict lookup may compare a stored key with its
 * __eq__) come first and hold their tables in `h`; the ready set is looked
 * up last and held, so it is the set stored once such code has run, and no
 * Python code runs between this and the pop. The caller calls
 * lane_release(h) on every path. */
static inline int lane_ready_set(QueueLaneObject *q, lane_hold *h) {
    int done;
    if ((done = lane_table(q, str_values, &h->values)) <= 0 ||
        (done = lane_quiet(q, h->values)) <= 0 ||
        (done = lane_table(q, str_deadlines, &h->deadlines)) <= 0)
        return done;
    if (PyDict_GET_SIZE(h->deadlines) && (done = lane_has(h->deadlines, q->ready)) != 0)
        return done < 0 ? -1 : 0;
    h->ready = Py_XNewRef(PyDict_GetItemWithError(h->values, q->ready));
    if (!h->ready)
        return PyErr_Occurred() ? -1 : 0;
    return Py_IS_TYPE(h->ready, &SortedSetType) && ((SortedSetObject *)h->ready)->raw;
}

/* The item of queue node `x` (its member past the sequence prefix) as bytes,
 * or str for a text queue: a new reference, NULL with an exception. Runs no
 * Python code. */
static inline PyObject *node_item(const QueueLaneObject *q, const zsl_node *x) {
    const char *p = zsl_member(x) + (x->mlen > SEQ_BYTES ? SEQ_BYTES : x->mlen);
    Py_ssize_t n = x->mlen > SEQ_BYTES ? (Py_ssize_t)(x->mlen - SEQ_BYTES) : 0;
    return q->text ? PyUnicode_DecodeUTF8(p, n, "surrogateescape")
                   : PyBytes_FromStringAndSize(p, n);
}

/* The direct pop of the head, serialised by lane_enter: the item (or (item,
 * priority) with `with_priority`) as a new reference; Py_None (new
 * reference) when the queue is empty; NULL with no exception to decline;
 * NULL with one on error. The ready set comes from lane_ready_set. */
static PyObject *lane_pop_locked(QueueLaneObject *q, int with_priority) {
    PyObject *result = NULL;
    lane_hold h = {NULL, NULL, NULL};
    if (lane_ready_set(q, &h) <= 0)
        goto out;
    zset *z = &((SortedSetObject *)h.ready)->z;
    if (!z->length) {
        result = Py_NewRef(Py_None);
        goto out;
    }
    zsl_node *x = z->header->level[0].forward;
    /* Result objects first (no GC allocation before the node is gone). */
    PyObject *item = node_item(q, x);
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
    lane_release(&h);
    return result;
}

/* The direct pop of up to `count` > 0 heads, with the lock held: a new
 * list of items, NULL with no exception to decline, NULL with one on error.
 * The ready set comes from lane_ready_set; the items are made (no Python
 * code runs) and the heads deleted before the list is allocated, which may
 * run the collector: no pointer into the set is held across it. */
static PyObject *lane_pop_many_locked(QueueLaneObject *q, Py_ssize_t count) {
    PyObject *result = NULL;
    PyObject **items = NULL;
    lane_hold h = {NULL, NULL, NULL};
    if (lane_ready_set(q, &h) <= 0)
        goto out;
    zset *z = &((SortedSetObject *)h.ready)->z;
    Py_ssize_t n = (size_t)count < z->length ? count : (Py_ssize_t)z->length;
    if (n && !(items = PyMem_New(PyObject *, (size_t)n))) {
        PyErr_NoMemory();
        goto out;
    }
    /* Every item first: an allocation that fails leaves the set as it was. */
    zsl_node *x = z->header->level[0].forward;
    for (Py_ssize_t i = 0; i < n; i++, x = x->level[0].forward) {
        if (!(items[i] = node_item(q, x))) {
            while (i > 0)
                Py_DECREF(items[--i]);
            goto out;
        }
    }
    for (Py_ssize_t i = 0; i < n; i++)
        zset_delete(z, z->header->level[0].forward);
    result = PyList_New(n);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (result)
            PyList_SET_ITEM(result, i, items[i]);
        else
            Py_DECREF(items[i]);
    }
out:
    PyMem_Free(items);
    lane_release(&h);
    return result;
}

/* ==== calls =============================================================== */

/* Hands the call to the operation's reference: `args` are the lane's
 * positional arguments (PUSH_ARGS or POP_ARGS of them). */
static PyObject *lane_reference(QueueLaneObject *q, PyObject *const *args, Py_ssize_t nargs) {
    return PyObject_Vectorcall(q->reference, args, (size_t)nargs, NULL);
}

/* The push of `args` = (item, priority, delay, at, now_us): done here when
 * the item and priority are plain and delay, at and now_us are None, else
 * (or when declined) by the reference. */
static PyObject *lane_push(QueueLaneObject *q, PyObject *const *args) {
    lane_entry entry;
    if (args[2] != Py_None || args[3] != Py_None || args[4] != Py_None ||
        !lane_item(args[0], &entry.data, &entry.size) || !lane_priority(args[1], &entry.score))
        return lane_reference(q, args, PUSH_ARGS);
    int taken = lane_enter(q, q->system_clock);
    if (taken < 0)
        return NULL;
    int done = lane_push_locked(q, taken, &entry, 1);
    PyObject *unlocked = lane_leave(q, taken, Py_NewRef(Py_None));
    if (!unlocked)
        return NULL;
    Py_DECREF(unlocked);
    if (done < 0)
        return NULL;
    if (done == 0)
        return lane_reference(q, args, PUSH_ARGS);
    Py_RETURN_NONE;
}

/* The push of `args` = (pairs, delay, at, now_us), pairs as the queue
 * checked them: done here, under the lock, when delay, at and now_us are
 * None and every pair is plain; else (or when declined) by the reference.
 * Answers how many were pushed. */
static PyObject *lane_push_many(QueueLaneObject *q, PyObject *const *args) {
    lane_entry *entries = NULL;
    PyObject *owner = NULL;
    Py_ssize_t n = 0;
    if (args[1] == Py_None && args[2] == Py_None && args[3] == Py_None &&
        (n = lane_entries(args[0], &entries, &owner)) < 0)
        return NULL;
    if (n == 0)
        return lane_reference(q, args, PUSH_MANY_ARGS);
    int done = lane_enter(q, 0);
    if (done > 0) {
        done = lane_push_locked(q, 1, entries, n);
        PyObject *unlocked = lane_leave(q, 1, Py_NewRef(Py_None));
        if (!unlocked)
            done = -1;
        Py_XDECREF(unlocked);
    }
    PyMem_Free(entries);
    Py_DECREF(owner);
    if (done < 0)
        return NULL;
    if (done == 0)
        return lane_reference(q, args, PUSH_MANY_ARGS);
    return PyLong_FromSsize_t(n);
}

/* The pop of `args` = (count, now_us): up to `count` heads taken here,
 * under the lock, when `count` is an int > 0, now_us is None and nothing
 * needs settling; else (or when declined) the reference. */
static PyObject *lane_pop_many(QueueLaneObject *q, PyObject *const *args) {
    Py_ssize_t count = -1;
    if (args[1] == Py_None && PyLong_CheckExact(args[0])) {
        count = PyLong_AsSsize_t(args[0]);
        if (count < 0)
            PyErr_Clear(); /* too large, or negative: the reference answers */
    }
    if (count <= 0)
        return lane_reference(q, args, POP_MANY_ARGS);
    if (lane_enter(q, 0) < 0)
        return NULL;
    PyObject *result = lane_leave(q, 1, lane_pop_many_locked(q, count));
    if (result || PyErr_Occurred())
        return result;
    return lane_reference(q, args, POP_MANY_ARGS);
}

/* 1 when `timeout` is None or a number of seconds the reference accepts
 * (an exact int or a finite exact float within [0, max_timeout]), with
 * *seconds set (0 for None); 0 when the reference must look at it (and
 * raise, or take a subclass as it sees fit). */
static int lane_timeout(const QueueLaneObject *q, PyObject *timeout, double *seconds) {
    if (timeout == Py_None) {
        *seconds = 0.0;
        return 1;
    }
    if (PyFloat_CheckExact(timeout)) {
        *seconds = PyFloat_AS_DOUBLE(timeout);
        return *seconds >= 0.0 && *seconds <= q->max_timeout; /* false for NaN */
    }
    if (PyLong_CheckExact(timeout)) {
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(timeout, &overflow);
        if (overflow || v < 0 || (double)v > q->max_timeout) {
            PyErr_Clear();
            return 0;
        }
        *seconds = (double)v;
        return 1;
    }
    return 0;
}

/* The pop of `args` = (timeout, now_us): with now_us None and a timeout
 * the reference accepts, the head taken here when nothing needs settling;
 * an empty queue answers None here only when there is nothing to wait for
 * (no timeout, or 0). Anything else, or declined, goes to the reference
 * (which waits for a push when there is a timeout). */
static PyObject *lane_pop(QueueLaneObject *q, PyObject *const *args) {
    double timeout;
    if (args[1] != Py_None || !lane_timeout(q, args[0], &timeout))
        return lane_reference(q, args, POP_ARGS);
    int taken = lane_enter(q, 1); /* no Python code runs before the pop is done */
    if (taken < 0)
        return NULL;
    PyObject *result = lane_leave(q, taken, lane_pop_locked(q, q->kind == LANE_POP_PRIORITY));
    if (result == Py_None && timeout > 0.0)
        Py_CLEAR(result); /* empty: the reference waits */
    if (result || PyErr_Occurred())
        return result;
    return lane_reference(q, args, POP_ARGS);
}

/* lane(*args): the operation with its positional arguments (see lane_push,
 * lane_pop, lane_push_many, lane_pop_many); any other shape of call goes to
 * the reference as given. */
static PyObject *QueueLane_call(PyObject *self, PyObject *const *args, size_t nargsf,
                                PyObject *kwnames) {
    QueueLaneObject *q = (QueueLaneObject *)self;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (!lane_ready(q))
        return NULL;
    if (!kwnames && nargs == lane_arity[q->kind]) {
        switch (q->kind) {
        case LANE_PUSH:
            return lane_push(q, args);
        case LANE_PUSH_MANY:
            return lane_push_many(q, args);
        case LANE_POP_MANY:
            return lane_pop_many(q, args);
        default:
            return lane_pop(q, args);
        }
    }
    return PyObject_Vectorcall(q->reference, args, (size_t)nargs, kwnames);
}

/* Binds a call of `fname` with signature (positional-or-keyword names[0 ..
 * npos), then keyword-only names[npos .. n)) to `slots` (borrowed; NULL when
 * not given), as Python binds a call: 0, or -1 with the TypeError Python
 * would raise (too many positional arguments, an unknown or repeated
 * keyword, a missing required one: the first `required` names). */
static int lane_bind(const char *fname, PyObject *const *args, Py_ssize_t nargs,
                     PyObject *kwnames, PyObject *const *names, Py_ssize_t n, Py_ssize_t npos,
                     Py_ssize_t required, PyObject **slots) {
    if (nargs > npos) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %zd positional arguments (%zd given)",
                     fname, npos, nargs);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        slots[i] = i < nargs ? args[i] : NULL;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, k);
        Py_ssize_t i = 0;
        while (i < n && name != names[i])
            i++;
        for (Py_ssize_t j = 0; i == n && j < n; j++) { /* not interned: compare the text */
            int equal = PyUnicode_Compare(name, names[j]);
            if (equal == -1 && PyErr_Occurred())
                return -1;
            if (equal == 0)
                i = j;
        }
        if (i == n) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", fname,
                         name);
            return -1;
        }
        if (slots[i]) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%U'", fname,
                         name);
            return -1;
        }
        slots[i] = args[nargs + k];
    }
    for (Py_ssize_t i = 0; i < required; i++) {
        if (!slots[i]) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%U'", fname, names[i]);
            return -1;
        }
    }
    return 0;
}

/* Raises TypeError when the lane is not initialised or its kind is not
 * `kind`: 0 when it is, -1. */
static int lane_is(QueueLaneObject *q, int kind) {
    if (!lane_ready(q))
        return -1;
    if (q->kind == kind)
        return 0;
    PyErr_Format(PyExc_TypeError, "this QueueLane runs %s, not %s", kind_names[q->kind],
                 kind_names[kind]);
    return -1;
}

/* lane.push(item, priority=0.0, *, delay=None, at=None, now_us=None): Queue.push. */
static PyObject *QueueLane_push(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames) {
    QueueLaneObject *q = (QueueLaneObject *)self;
    PyObject *const names[PUSH_ARGS] = {str_item, str_priority, str_delay, str_at, str_now_us};
    PyObject *slots[PUSH_ARGS];
    if (lane_is(q, LANE_PUSH) < 0)
        return NULL;
    if (!kwnames && (nargs == 1 || nargs == 2)) { /* the common call: no binding to do */
        PyObject *const full[PUSH_ARGS] = {args[0], nargs == 2 ? args[1] : zero_priority, Py_None,
                                           Py_None, Py_None};
        return lane_push(q, full);
    }
    if (lane_bind("push", args, nargs, kwnames, names, PUSH_ARGS, 2, 1, slots) < 0)
        return NULL;
    slots[1] = slots[1] ? slots[1] : zero_priority;
    for (int i = 2; i < PUSH_ARGS; i++)
        slots[i] = slots[i] ? slots[i] : Py_None;
    return lane_push(q, slots);
}

/* The method of a pop lane: (timeout=None, *, now_us=None), as lane_pop. */
static PyObject *lane_pop_method(QueueLaneObject *q, int kind, PyObject *const *args,
                                 Py_ssize_t nargs, PyObject *kwnames) {
    PyObject *const names[POP_ARGS] = {str_timeout, str_now_us};
    PyObject *slots[POP_ARGS];
    if (lane_is(q, kind) < 0)
        return NULL;
    if (!kwnames && nargs == 0) { /* the common call */
        PyObject *const none[POP_ARGS] = {Py_None, Py_None};
        return lane_pop(q, none);
    }
    if (lane_bind(kind_names[kind], args, nargs, kwnames, names, POP_ARGS, 1, 0, slots) < 0)
        return NULL;
    for (int i = 0; i < POP_ARGS; i++)
        slots[i] = slots[i] ? slots[i] : Py_None;
    return lane_pop(q, slots);
}

/* lane.pop(timeout=None, *, now_us=None): Queue.pop. */
static PyObject *QueueLane_pop(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames) {
    return lane_pop_method((QueueLaneObject *)self, LANE_POP, args, nargs, kwnames);
}

/* lane.pop_with_priority(timeout=None, *, now_us=None): Queue.pop_with_priority. */
static PyObject *QueueLane_pop_with_priority(PyObject *self, PyObject *const *args,
                                             Py_ssize_t nargs, PyObject *kwnames) {
    return lane_pop_method((QueueLaneObject *)self, LANE_POP_PRIORITY, args, nargs, kwnames);
}

/* lane.method: the lane's own method (push, pop or pop_with_priority) bound
 * to the lane, a new reference; None for push_many and pop_many, whose queue
 * methods check their arguments in Python first. */
static PyObject *QueueLane_method(PyObject *self, void *closure) {
    if (!lane_ready((QueueLaneObject *)self))
        return NULL;
    int kind = ((QueueLaneObject *)self)->kind;
    if (kind == LANE_PUSH_MANY || kind == LANE_POP_MANY)
        Py_RETURN_NONE;
    return PyObject_GetAttrString(self, kind_names[kind]);
}

/* ==== type ================================================================ */

static PyMethodDef QueueLane_methods[] = {
    {"push", (PyCFunction)(void (*)(void))QueueLane_push, METH_FASTCALL | METH_KEYWORDS,
     "push($self, /, item, priority=0.0, *, delay=None, at=None, now_us=None)\n--\n\n"
     "Queue.push, on a push lane."},
    {"pop", (PyCFunction)(void (*)(void))QueueLane_pop, METH_FASTCALL | METH_KEYWORDS,
     "pop($self, /, timeout=None, *, now_us=None)\n--\n\nQueue.pop, on a pop lane."},
    {"pop_with_priority", (PyCFunction)(void (*)(void))QueueLane_pop_with_priority,
     METH_FASTCALL | METH_KEYWORDS,
     "pop_with_priority($self, /, timeout=None, *, now_us=None)\n--\n\n"
     "Queue.pop_with_priority, on a pop_with_priority lane."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef QueueLane_getset[] = {
    {"method", QueueLane_method, NULL,
     "The step taking the queue method's own signature (push, pop or pop_with_priority).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject QueueLaneType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ranked.backends.native._native.QueueLane",
    .tp_basicsize = sizeof(QueueLaneObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "A memory queue's push or pop in C (see ranked.backends.native.queue).",
    .tp_traverse = QueueLane_traverse,
    .tp_clear = QueueLane_clear,
    .tp_dealloc = QueueLane_dealloc,
    .tp_init = QueueLane_init,
    .tp_new = QueueLane_new,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(QueueLaneObject, vectorcall),
    .tp_methods = QueueLane_methods,
    .tp_getset = QueueLane_getset,
};

/* Interns the names the lane compares keywords and attributes against, makes
 * the default priority and adds QueueLane to `m`; 0, or -1 with an exception
 * set. */
int queue_lane_add_to_module(PyObject *m) {
    struct {
        PyObject **slot;
        const char *text;
    } names[] = {
        {&str_values, "_values"},  {&str_deadlines, "_deadlines"}, {&str_waiting, "waiting"},
        {&str_notify, "notify"},   {&str_item, "item"},            {&str_priority, "priority"},
        {&str_delay, "delay"},     {&str_at, "at"},                {&str_now_us, "now_us"},
        {&str_timeout, "timeout"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!*names[i].slot && !(*names[i].slot = PyUnicode_InternFromString(names[i].text)))
            return -1;
    }
    if (!zero_priority && !(zero_priority = PyFloat_FromDouble(0.0)))
        return -1;
    if (PyType_Ready(&QueueLaneType) < 0)
        return -1;
    return PyModule_AddObjectRef(m, "QueueLane", (PyObject *)&QueueLaneType);
}
