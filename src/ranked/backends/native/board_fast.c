/* board_fast.c - BoardWriter: the memory backend's one-call submit for the
 * common leaderboard (one all-time window, plain scores, no keep, no TTL).
 *
 * A writer is built once per board (ranked/backends/native/board.py, the
 * factory of the board's plain-submit step) and called as writer(member,
 * score, operator). It either does the whole submission and returns the
 * Submission, built here exactly as the board's finish_single builds it, or
 * returns None, having changed nothing, when anything is unusual (another
 * member or score type, an int of magnitude 2^53 or more, an unknown
 * operator, a non-finite or inexact incr/decr result, the key
 * missing, emptied, expiring or of another type, the backend's lock held):
 * the caller then runs the general path, which raises the usual errors or
 * does the usual work.
 *
 * Atomicity: the backend's lock serialises Python code that touches the
 * keyspace. The writer checks that nobody holds it, then looks up, updates
 * and ranks without running any Python code and without releasing the GIL,
 * so no other thread can take the lock or touch the keyspace in between:
 * the same guarantee as holding the lock, without its two calls. Every few
 * writes it first runs the backend's housekeeping (active expiry), which
 * takes the lock itself. Results are allocated only after the write.
 */
#include "board_common.h"

#include <math.h>

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *kvars;        /* the keyspace's instance __dict__ */
    PyObject *key;          /* bytes: the window's sorted-set key */
    PyObject *window;       /* str: the window id */
    PyObject *locked;       /* the backend lock's bound `locked` */
    PyObject *housekeeping; /* callable, run every `every` writes */
    PyTypeObject *result_type;     /* WindowResult: a 6-field tuple subclass */
    PyTypeObject *submission_type; /* Submission: a 3-field tuple subclass */
    PyObject *last;                /* the Submission returned last, or NULL (bw_reuse) */
    PyObject *last_windows;        /* borrowed: the dict under last's read-only windows */
    PyObject *seq_key; /* bytes: a journaled board's applied-event number, or NULL */
    Py_ssize_t every;
    Py_ssize_t writes;
    int reverse;
    int style;
    int op;
} BoardWriterObject;

static PyObject *name_heap;      /* interned "_heap" */
static PyObject *name_listpack;  /* interned "_listpack" */
static PyObject *op_names[4];    /* interned "best", "set", "incr", "decr" (ZBOARD_* order) */
static const char *const op_text[4] = {"best", "set", "incr", "decr"};

/* Index of str `o` in names[0..n-1] (interned pointers first), or -1; never
 * sets an exception (a str subclass with odd equality is just "unknown"). */
static int bw_index(PyObject *o, PyObject *const *names, int n) {
    for (int i = 0; i < n; i++)
        if (o == names[i])
            return i;
    if (!PyUnicode_CheckExact(o))
        return -1;
    for (int i = 0; i < n; i++)
        if (PyUnicode_Compare(o, names[i]) == 0)
            return i;
    PyErr_Clear();
    return -1;
}

static PyObject *BoardWriter_call(PyObject *self, PyObject *const *args, size_t nargsf,
                                  PyObject *kwnames);

/* BoardWriter(...): see _native.pyi and ranked/backends/native/board.py;
 * new reference, or NULL with TypeError / ValueError. The writer keeps
 * exact bytes / str copies of `key` and `window` (subclasses are copied), so
 * its lookups and its results run no code of theirs. */
static PyObject *BoardWriter_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"keyspace_vars", "key", "window", "reverse", "style",
                             "operator", "lock", "housekeeping", "every", "result_type",
                             "submission_type", "seq_key", NULL};
    PyObject *kvars, *key, *window, *lock, *housekeeping, *rtype, *stype, *seq_key = Py_None;
    const char *style, *op;
    int reverse;
    Py_ssize_t every;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!O!UpssOOnOO|O:BoardWriter", kwlist,
                                     &PyDict_Type, &kvars, &PyBytes_Type, &key, &window,
                                     &reverse, &style, &op, &lock, &housekeeping, &every, &rtype,
                                     &stype, &seq_key))
        return NULL;
    if (seq_key != Py_None && !PyBytes_Check(seq_key)) {
        PyErr_SetString(PyExc_TypeError, "seq_key must be bytes or None");
        return NULL;
    }
    int s = board_style(style), o = -1;
    for (int i = 0; i < 4; i++)
        if (strcmp(op, op_text[i]) == 0)
            o = i;
    if (s < 0 || o < 0) {
        PyErr_Format(PyExc_ValueError, "unknown %s %s", s < 0 ? "rank style" : "operator",
                     s < 0 ? style : op);
        return NULL;
    }
    if (every < 1) {
        PyErr_SetString(PyExc_ValueError, "every must be positive");
        return NULL;
    }
    if (!PyCallable_Check(housekeeping)) {
        PyErr_SetString(PyExc_TypeError, "housekeeping must be callable");
        return NULL;
    }
    if (board_check_tuple_type(rtype, "result_type") < 0 ||
        board_check_tuple_type(stype, "submission_type") < 0)
        return NULL;
    PyObject *locked = PyObject_GetAttrString(lock, "locked");
    if (!locked)
        return NULL;
    /* Plain copies of a bytes / str subclass: a subclass's __hash__ / __eq__
     * would run in the middle of every write's table lookups. */
    PyObject *own_key = board_own_bytes(key);
    PyObject *own_window = own_key ? PyUnicode_FromObject(window) : NULL;
    PyObject *own_seq = NULL;
    if (own_window && seq_key != Py_None)
        own_seq = PyBytes_FromStringAndSize(PyBytes_AS_STRING(seq_key), PyBytes_GET_SIZE(seq_key));
    int ok = own_window && (seq_key == Py_None || own_seq);
    BoardWriterObject *w = ok ? (BoardWriterObject *)type->tp_alloc(type, 0) : NULL;
    if (!w) {
        Py_DECREF(locked);
        Py_XDECREF(own_key);
        Py_XDECREF(own_window);
        Py_XDECREF(own_seq);
        return NULL;
    }
    w->seq_key = own_seq;
    w->vectorcall = BoardWriter_call;
    w->kvars = Py_NewRef(kvars);
    w->key = own_key;
    w->window = own_window;
    w->locked = locked;
    w->housekeeping = Py_NewRef(housekeeping);
    w->result_type = (PyTypeObject *)Py_NewRef(rtype);
    w->submission_type = (PyTypeObject *)Py_NewRef(stype);
    w->last = NULL;
    w->last_windows = NULL;
    w->every = every;
    w->writes = 0;
    w->reverse = reverse;
    w->style = s;
    w->op = o;
    return (PyObject *)w;
}

/* GC: visit every object the writer holds. */
static int BoardWriter_traverse(BoardWriterObject *w, visitproc visit, void *arg) {
    Py_VISIT(w->kvars);
    Py_VISIT(w->locked);
    Py_VISIT(w->housekeeping);
    Py_VISIT(w->result_type);
    Py_VISIT(w->submission_type);
    Py_VISIT(w->last);
    return 0;
}

/* GC: drop every object the writer holds. */
static int BoardWriter_clear(BoardWriterObject *w) {
    Py_CLEAR(w->kvars);
    Py_CLEAR(w->key);
    Py_CLEAR(w->window);
    Py_CLEAR(w->locked);
    Py_CLEAR(w->housekeeping);
    Py_CLEAR(w->result_type);
    Py_CLEAR(w->submission_type);
    Py_CLEAR(w->last);
    Py_CLEAR(w->seq_key);
    w->last_windows = NULL;
    return 0;
}

/* Untrack, drop the references, free. */
static void BoardWriter_dealloc(BoardWriterObject *w) {
    PyObject_GC_UnTrack(w);
    BoardWriter_clear(w);
    Py_TYPE(w)->tp_free((PyObject *)w);
}

/* Whether the number key of a sequenced writer holds exactly `after` as
 * Keyspace.store left it: an exact bytes value of decimal digits, no
 * deadline, not marked listpack; then f->seq holds it (strong), so that the
 * caller's replacement frees nothing it still reads. 0 with no exception
 * otherwise (absent, another type or number: the general path answers). The
 * caller holds f->values and f->deadlines. */
static int bw_seq_holds(BoardWriterObject *w, board_found *f, long long after) {
    if (PyDict_GET_SIZE(f->deadlines) && PyDict_Contains(f->deadlines, w->seq_key) != 0)
        return 0;
    PyObject *listpack = PyDict_GetItemWithError(w->kvars, name_listpack);
    if (!listpack || !PyAnySet_CheckExact(listpack) ||
        (PySet_GET_SIZE(listpack) && PySet_Contains(listpack, w->seq_key) != 0))
        return 0;
    PyObject *v = PyDict_GetItemWithError(f->values, w->seq_key);
    if (!v || !PyBytes_CheckExact(v))
        return 0;
    Py_ssize_t n = PyBytes_GET_SIZE(v);
    const char *text = PyBytes_AS_STRING(v);
    if (n < 1 || n > 18)
        return 0;
    long long held = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (text[i] < '0' || text[i] > '9')
            return 0;
        held = held * 10 + (text[i] - '0');
    }
    if (held != after || (n > 1 && text[0] == '0'))
        return 0;
    f->seq = Py_NewRef(v);
    return 1;
}

/* Fill *f with the sorted set at the writer's key when the fast path may
 * write it (board_tables, board_set), else f->set = NULL; never leaves an
 * exception (a failed lookup means "not here"). A sequenced writer also
 * needs its number key to hold `after` (bw_seq_holds), looked up before the
 * set. The caller calls board_release(f) after the write, on every path. */
static void bw_target(BoardWriterObject *w, board_found *f, long long after) {
    if (board_tables(w->kvars, w->key, f) && (!w->seq_key || bw_seq_holds(w, f, after)))
        board_set(f, w->key);
    PyErr_Clear();
}

/* tuple subclass `type` holding the n new references items[] (stolen, also
 * on failure). New reference or NULL. */
static PyObject *bw_tuple(PyTypeObject *type, PyObject **items, Py_ssize_t n) {
    PyObject *t = NULL;
    for (Py_ssize_t i = 0; i < n; i++)
        if (!items[i])
            goto fail;
    t = type->tp_alloc(type, n);
    if (!t)
        goto fail;
    for (Py_ssize_t i = 0; i < n; i++)
        PyTuple_SET_ITEM(t, i, items[i]);
    return t;
fail:
    for (Py_ssize_t i = 0; i < n; i++)
        Py_XDECREF(items[i]);
    return NULL;
}

/* The six WindowResult fields of a write, as new references (NULLs when an
 * allocation failed). An unchanged write shares its score and rank objects
 * between the "before" and "after" fields. */
static void bw_fields(BoardWriterObject *w, const zboard_result *r, PyObject **f) {
    f[0] = Py_NewRef(w->window);
    f[1] = PyFloat_FromDouble(r->score);
    f[3] = PyLong_FromSize_t(r->rank);
    if (!r->existed) {
        f[2] = Py_NewRef(Py_None);
        f[4] = Py_NewRef(Py_None);
    } else if (!r->changed && r->previous == r->score) {
        f[2] = Py_XNewRef(f[1]); /* the same value, even for a stored -0.0 */
        f[4] = Py_XNewRef(f[3]);
        if (signbit(r->previous) != signbit(r->score)) {
            Py_XDECREF(f[2]);
            f[2] = PyFloat_FromDouble(r->previous);
        }
    } else {
        f[2] = PyFloat_FromDouble(r->previous);
        f[4] = PyLong_FromSize_t(r->previous_rank);
    }
    f[5] = PyBool_FromLong(r->changed);
}

/* Refill the Submission this writer returned last time when nobody else
 * holds it, its WindowResult, its windows mapping proxy or the dict under
 * that proxy any more (the result is then referenced only by the Submission
 * and the dict): the zip() idiom of reusing an unshared result. Takes the
 * six fields (stolen, all non-NULL). New reference, or NULL (no exception)
 * when the last result is shared. */
static PyObject *bw_reuse(BoardWriterObject *w, PyObject *member, PyObject **f) {
    PyObject *last = w->last;
    if (!last || Py_REFCNT(last) != 1)
        return NULL;
    PyObject *result = PyTuple_GET_ITEM(last, 1);
    PyObject *windows = PyTuple_GET_ITEM(last, 2);
    /* last_windows is alive: last holds the proxy, which holds it. */
    if (Py_REFCNT(result) != 2 || Py_REFCNT(windows) != 1 || Py_REFCNT(w->last_windows) != 1)
        return NULL;
    PyObject *old[7];
    for (Py_ssize_t i = 0; i < 6; i++) {
        old[i] = PyTuple_GET_ITEM(result, i);
        PyTuple_SET_ITEM(result, i, f[i]);
    }
    old[6] = PyTuple_GET_ITEM(last, 0);
    PyTuple_SET_ITEM(last, 0, Py_NewRef(member));
    for (int i = 0; i < 7; i++) /* only str, bytes, float, int, bool and None */
        Py_DECREF(old[i]);
    if (!PyObject_GC_IsTracked(result))
        PyObject_GC_Track(result);
    if (!PyObject_GC_IsTracked(last))
        PyObject_GC_Track(last);
    return Py_NewRef(last);
}

/* The Submission of one write: (member, WindowResult, a read-only
 * MappingProxyType over a fresh {window: WindowResult}), as
 * WritePlan.finish_single builds it. New reference or NULL. */
static PyObject *bw_submission(BoardWriterObject *w, PyObject *member, const zboard_result *r) {
    PyObject *fields[6];
    bw_fields(w, r, fields);
    for (int i = 0; i < 6; i++) {
        if (!fields[i]) {
            for (int j = 0; j < 6; j++)
                Py_XDECREF(fields[j]);
            return NULL;
        }
    }
    PyObject *again = bw_reuse(w, member, fields);
    if (again)
        return again;
    PyObject *result = bw_tuple(w->result_type, fields, 6);
    if (!result)
        return NULL;
    PyObject *windows = PyDict_New();
    if (!windows || PyDict_SetItem(windows, w->window, result) < 0) {
        Py_XDECREF(windows);
        Py_DECREF(result);
        return NULL;
    }
    PyObject *proxy = PyDictProxy_New(windows);
    Py_DECREF(windows); /* the proxy holds it now (or it is freed with the result) */
    PyObject *items[3] = {Py_NewRef(member), result, proxy};
    PyObject *submission = bw_tuple(w->submission_type, items, 3);
    if (submission) {
        Py_XSETREF(w->last, Py_NewRef(submission));
        w->last_windows = windows;
    }
    return submission;
}

/* Whether the keyspace's expiry heap may hold work (1), or is an empty list
 * (0): with no deadline anywhere, the housekeeping step would do nothing. */
static int bw_expiry_pending(BoardWriterObject *w) {
    PyObject *heap = PyDict_GetItemWithError(w->kvars, name_heap);
    if (!heap)
        PyErr_Clear();
    return !(heap && PyList_CheckExact(heap) && PyList_GET_SIZE(heap) == 0);
}

/* The event numbers of a sequenced call: exact ints with 0 <= after < last
 * below 10^18 (1), else 0 with no exception (the general path answers). */
static int bw_seq_numbers(PyObject *a, PyObject *b, long long *after, long long *last) {
    if (!PyLong_CheckExact(a) || !PyLong_CheckExact(b))
        return 0;
    *after = PyLong_AsLongLong(a);
    *last = PyLong_AsLongLong(b);
    if (PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    return 0 <= *after && *after < *last && *last < 1000000000000000000LL;
}

/* writer(member, score, operator) -> Submission | None; see the file comment.
 * A sequenced writer (built with seq_key) takes (after, last, member, score,
 * operator): it writes only when seq_key holds `after`, and records `last`
 * there with the write, as the sequenced submit step does; None otherwise.
 * The caller keeps the writer and the arguments alive for the call (as any
 * vectorcall caller does); the housekeeping and `locked` calls run Python
 * code before the set is looked up, and the member's bytes (m, borrowed from
 * an exact str or bytes argument) are all that is kept across them. */
static PyObject *BoardWriter_call(PyObject *self, PyObject *const *args, size_t nargsf,
                                  PyObject *kwnames) {
    BoardWriterObject *w = (BoardWriterObject *)self;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    long long after = 0, last = 0;
    if (w->seq_key) {
        if (kwnames || nargs != 5) {
            PyErr_SetString(PyExc_TypeError,
                            "a sequenced BoardWriter takes (after, last, member, score, operator)");
            return NULL;
        }
        if (!bw_seq_numbers(args[0], args[1], &after, &last))
            Py_RETURN_NONE;
        args += 2;
    } else if (kwnames || nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "BoardWriter takes (member, score, operator)");
        return NULL;
    }
    PyObject *member = args[0], *score = args[1], *opobj = args[2];
    int op = opobj == Py_None ? w->op : bw_index(opobj, op_names, 4);
    if (op < 0)
        Py_RETURN_NONE;
    double value;
    if (PyFloat_CheckExact(score)) {
        value = PyFloat_AS_DOUBLE(score);
    } else if (PyLong_CheckExact(score)) { /* float(int), as the general path does */
        value = PyLong_AsDouble(score);
        if (value == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            Py_RETURN_NONE;
        }
        /* Every int below 2^53 in magnitude is exact; the general path checks the
         * others (it refuses those a float64 would round). */
        if (!(value > -0x1p53 && value < 0x1p53))
            Py_RETURN_NONE;
    } else {
        Py_RETURN_NONE;
    }
    if (!isfinite(value))
        Py_RETURN_NONE;
    const char *m;
    Py_ssize_t len;
    if (!board_member_bytes(member, &m, &len))
        Py_RETURN_NONE;
    uint32_t h = zdict_hash(m, (size_t)len);
    if (++w->writes >= w->every) {
        w->writes = 0;
        if (bw_expiry_pending(w)) { /* before the write: it runs Python code */
            PyObject *done = PyObject_CallNoArgs(w->housekeeping);
            if (!done)
                return NULL;
            Py_DECREF(done);
        }
    }
    PyObject *held = PyObject_CallNoArgs(w->locked);
    if (!held)
        return NULL;
    int free_now = held == Py_False;
    Py_DECREF(held);
    if (!free_now)
        Py_RETURN_NONE; /* someone is inside the lock: the general path waits for it */
    /* From the end of bw_target's last lookup to the end of zboard_submit no
     * Python code runs. */
    /* The number recorded with a sequenced write, made before it: once the
     * set is written, replacing the number's value cannot fail. */
    PyObject *recorded = NULL;
    if (w->seq_key) {
        char digits[24];
        int n = snprintf(digits, sizeof digits, "%lld", last);
        recorded = PyBytes_FromStringAndSize(digits, n);
        if (!recorded)
            return NULL;
    }
    board_found found;
    bw_target(w, &found, after);
    if (!found.set) {
        board_release(&found);
        Py_XDECREF(recorded);
        Py_RETURN_NONE;
    }
    zboard_result r;
    int rc = zboard_submit(&found.set->z, m, (size_t)len, h, value, op, w->style, w->reverse, &r);
    if (rc == ZBOARD_OK && recorded) {
        /* the key is in the table (bw_seq_holds): its value is replaced in place,
         * with no allocation; the old value is held by found.seq until released */
        if (PyDict_SetItem(found.values, w->seq_key, recorded) < 0) {
            Py_DECREF(recorded);
            board_release(&found);
            return NULL; /* cannot happen for a key present: no resize */
        }
    }
    Py_XDECREF(recorded);
    board_release(&found);
    if (rc == ZBOARD_NOMEM)
        return PyErr_NoMemory();
    if (rc != ZBOARD_OK) /* not finite or not exact: the general path raises */
        Py_RETURN_NONE;  /* InvalidScoreError or OutOfRangeError */
    return bw_submission(w, member, &r);
}

static PyTypeObject BoardWriterType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ranked.backends.native._native.BoardWriter",
    .tp_basicsize = sizeof(BoardWriterObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "One-call submit of a plain all-time board on a memory backend "
              "(see ranked.backends.memory).",
    .tp_new = BoardWriter_new,
    .tp_dealloc = (destructor)BoardWriter_dealloc,
    .tp_traverse = (traverseproc)BoardWriter_traverse,
    .tp_clear = (inquiry)BoardWriter_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(BoardWriterObject, vectorcall),
};

/* board_rank(zset, member, style, reverse) -> int | None: zboard_rank of a
 * member, for tests that pin the fused write's ranks to SortedSet.rank. */
static PyObject *board_rank(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4 || !PyObject_TypeCheck(args[0], &SortedSetType) ||
        !PyBytes_Check(args[1]) || !PyUnicode_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError,
                        "board_rank(zset: SortedSet, member: bytes, style: str, reverse: bool)");
        return NULL;
    }
    Py_ssize_t size;
    const char *name = PyUnicode_AsUTF8AndSize(args[2], &size);
    int style = -1;
    if (!name) /* not UTF-8: no style's name */
        PyErr_Clear();
    else if ((size_t)size == strlen(name)) /* no NUL inside */
        style = board_style(name);
    if (style < 0) {
        PyErr_Format(PyExc_ValueError, "unknown rank style %R", args[2]);
        return NULL;
    }
    int reverse = PyObject_IsTrue(args[3]);
    if (reverse < 0)
        return NULL;
    zset *z = &((SortedSetObject *)args[0])->z;
    zsl_node *x = zset_find(z, PyBytes_AS_STRING(args[1]), (size_t)PyBytes_GET_SIZE(args[1]));
    if (!x)
        Py_RETURN_NONE;
    return PyLong_FromSize_t(zboard_rank(z, x, style, reverse));
}

static PyMethodDef board_functions[] = {
    {"board_rank", (PyCFunction)(void (*)(void))board_rank, METH_FASTCALL,
     "board_rank(zset, member, style, reverse): the fused write's rank of a member, or None."},
    {NULL, NULL, 0, NULL},
};

/* Adds BoardWriter and board_rank to module m; 0, or -1 with an exception. */
int board_fast_add_to_module(PyObject *m) {
    if (board_names_init() < 0 || !(name_listpack = PyUnicode_InternFromString("_listpack")) ||
        !(name_heap = PyUnicode_InternFromString("_heap")))
        return -1;
    for (int i = 0; i < 4; i++)
        if (!(op_names[i] = PyUnicode_InternFromString(op_text[i])))
            return -1;
    if (PyType_Ready(&BoardWriterType) < 0)
        return -1;
    if (PyModule_AddObjectRef(m, "BoardWriter", (PyObject *)&BoardWriterType) < 0)
        return -1;
    return PyModule_AddFunctions(m, board_functions);
}
