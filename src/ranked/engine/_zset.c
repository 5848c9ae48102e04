/* _zset.c - the Python binding of the engine: ranked.engine._zset.SortedSet.
 *
 * The contract, the signatures and the full docstrings are written once, in the
 * pure-Python twin skiplist.py (the contract is its SortedSet's docstring, and
 * _zset.pyi re-exports that class for type checkers); this class follows them and
 * raises the same errors with the same texts. All structure lives in the
 * Python-free core (zsl.h: zsl_list.c, zsl_dict.c, zsl_rand.c); this file
 * converts arguments, calls the core and builds results.
 *
 * Rules every method here follows:
 *  - every argument is converted and validated before the set changes, so an
 *    error leaves it exactly as it was (out-of-memory in a multi-member write
 *    is the only exception);
 *  - no Python code runs in the middle of a core mutation; the GIL makes each
 *    call atomic;
 *  - a node pointer is never used after anything that could run Python code
 *    (allocating a GC-tracked object can trigger a collection and __del__
 *    methods); readers compare z.modcount to notice changes.
 *
 * Names: py_* convert arguments and results, SortedSet_* / ZIter_* are the
 * methods and slots, ss_* are shared operations on a SortedSetObject. Indexes
 * in Python are 0-based; core ranks are 1-based.
 *
 * Each SortedSet_<name> method's contract is the docstring of <name> in
 * SortedSet_methods (with its signature in skiplist.py): it returns a new
 * reference, or NULL with an exception set (the set unchanged, by the rules
 * above).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <limits.h>
#include <math.h>
#include <string.h>

#include "_zset_object.h"
#include "zset_capi.h"

static PyObject *InvalidScoreError;
static PyObject *SnapshotError;
static PyObject *MappingABC;
static PyObject *SequenceABC;
static PyObject *style_names[3]; /* interned "unique", "competition", "dense" */

PyTypeObject SortedSetType;
static PyTypeObject ZIterType;

#define FLAG_NX 1
#define FLAG_XX 2
#define FLAG_GT 4
#define FLAG_LT 8
#define FLAG_CH 16

/* ==== argument conversion ================================================= */

/* Keyword-capable FASTCALL signature: names[0..nargs-1], of which the first
 * npos may come positionally and the first nreq are required. */
typedef struct {
    const char *fname;
    int npos;
    int nreq;
    int nargs;
    const char *const *names;
    PyObject *keys[8]; /* interned names, made on first keyword call */
} argspec;

/* Index of keyword `key` in spec, or spec->nargs when unknown. Compares
 * interned pointers first (keywords in calls are interned), then text.
 * -1 with MemoryError when the interned names cannot be made. */
static int py_keyword_index(argspec *spec, PyObject *key) {
    if (!spec->keys[0]) {
        for (int j = 0; j < spec->nargs; j++)
            if (!(spec->keys[j] = PyUnicode_InternFromString(spec->names[j])))
                return -1;
    }
    for (int j = 0; j < spec->nargs; j++)
        if (spec->keys[j] == key)
            return j;
    for (int j = 0; j < spec->nargs; j++)
        if (PyUnicode_Compare(spec->keys[j], key) == 0)
            return j;
    if (PyErr_Occurred())
        return -1;
    return spec->nargs;
}

/* Spread args/kwnames over out[0..spec->nargs-1] as borrowed references,
 * NULL for arguments not given. Returns 0, or -1 with TypeError set. */
static int py_parse_slow(argspec *spec, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames, PyObject **out) {
    for (int i = 0; i < spec->nargs; i++)
        out[i] = NULL;
    if (nargs > spec->npos) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %d positional argument%s (%zd given)",
                     spec->fname, spec->npos, spec->npos == 1 ? "" : "s", nargs);
        return -1;
    }
    for (Py_ssize_t i = 0; i < nargs; i++)
        out[i] = args[i];
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k);
        int j = py_keyword_index(spec, key);
        if (j < 0)
            return -1;
        if (j == spec->nargs) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'",
                         spec->fname, key);
            return -1;
        }
        if (out[j]) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'",
                         spec->fname, spec->names[j]);
            return -1;
        }
        out[j] = args[nargs + k];
    }
    for (int i = 0; i < spec->nreq; i++) {
        if (!out[i]) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", spec->fname,
                         spec->names[i]);
            return -1;
        }
    }
    return 0;
}

/* py_parse_slow's contract. Inlined so the common call (positional
 * arguments only) costs a few moves and no function call. */
static inline int py_parse(argspec *spec, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames, PyObject **out) {
    if (kwnames == NULL && nargs >= spec->nreq && nargs <= spec->npos) {
        for (Py_ssize_t i = 0; i < nargs; i++)
            out[i] = args[i];
        for (int i = (int)nargs; i < spec->nargs; i++)
            out[i] = NULL;
        return 0;
    }
    return py_parse_slow(spec, args, nargs, kwnames, out);
}

/* A member as bytes: p[0:n] borrowed from the argument (or from `owned`,
 * a new reference the caller drops with mbuf_release). */
typedef struct {
    const char *p;
    size_t n;
    PyObject *owned;
} mbuf;

/* Drop the converted member's owned buffer, if any; b stays reusable. */
static void mbuf_release(mbuf *b) { Py_CLEAR(b->owned); }

/* Convert a str (UTF-8, surrogateescape) or bytes member. Returns 0, or -1
 * with TypeError (other types), UnicodeEncodeError (surrogates outside the
 * escape range) or ValueError (longer than 4 GiB). */
static int py_member(PyObject *o, mbuf *b) {
    b->owned = NULL;
    if (PyUnicode_CheckExact(o) && PyUnicode_IS_COMPACT_ASCII(o)) {
        /* ASCII text is its own UTF-8: read it in place, no call */
        b->p = (const char *)PyUnicode_DATA(o);
        b->n = (size_t)PyUnicode_GET_LENGTH(o);
    } else if (PyUnicode_Check(o)) {
        Py_ssize_t n;
        const char *p = PyUnicode_AsUTF8AndSize(o, &n);
        if (!p) {
            if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError))
                return -1;
            PyErr_Clear();
            PyObject *e = PyUnicode_AsEncodedString(o, "utf-8", "surrogateescape");
            if (!e)
                return -1;
            b->owned = e;
            p = PyBytes_AS_STRING(e);
            n = PyBytes_GET_SIZE(e);
        }
        b->p = p;
        b->n = (size_t)n;
    } else if (PyBytes_Check(o)) {
        b->p = PyBytes_AS_STRING(o);
        b->n = (size_t)PyBytes_GET_SIZE(o);
    } else {
        PyErr_Format(PyExc_TypeError, "member must be str or bytes, not %.200s",
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    if (b->n > ZSL_MAX_MEMBER_LEN) {
        mbuf_release(b);
        PyErr_SetString(PyExc_ValueError, "member is longer than 4 GiB");
        return -1;
    }
    return 0;
}

/* Convert a lex bound: None means unbounded (*given = 0). */
static int py_member_or_none(PyObject *o, mbuf *b, int *given) {
    b->owned = NULL;
    *given = !(o == NULL || o == Py_None);
    return *given ? py_member(o, b) : 0;
}

/* Convert a score-like number as Python's float(x) converts it: an exact
 * float or int by its value; anything else whose type has __float__ or
 * __index__ (float and int subclasses included) through PyNumber_Float, so
 * a subclass's own __float__ is honoured, as float(x) honours it (the pure
 * twin calls float(x)). Never text: str, bytes, bytearray and other objects
 * float() would parse (buffers) are refused. May run Python code (__float__,
 * __index__): the caller holds nothing borrowed from a set across it.
 * `what` names the argument in errors. Returns 0, or -1 with TypeError,
 * OverflowError or InvalidScoreError (NaN). */
static int py_score(PyObject *o, const char *what, double *out) {
    double d;
    if (PyFloat_CheckExact(o)) {
        d = PyFloat_AS_DOUBLE(o);
    } else if (PyLong_CheckExact(o)) {
        d = PyLong_AsDouble(o);
        if (d == -1.0 && PyErr_Occurred())
            return -1;
    } else {
        PyNumberMethods *nb = Py_TYPE(o)->tp_as_number;
        if (PyUnicode_Check(o) || PyBytes_Check(o) || PyByteArray_Check(o) || !nb ||
            (!nb->nb_float && !nb->nb_index))
            goto type_error;
        PyObject *f = PyNumber_Float(o);
        if (!f) {
            if (PyErr_ExceptionMatches(PyExc_TypeError)) {
                PyErr_Clear();
                goto type_error;
            }
            return -1;
        }
        d = PyFloat_AS_DOUBLE(f);
        Py_DECREF(f);
    }
    if (isnan(d)) {
        PyErr_Format(InvalidScoreError, "%s is not a number (NaN)", what);
        return -1;
    }
    *out = d;
    return 0;
type_error:
    PyErr_Format(PyExc_TypeError, "%s must be a number, not %.200s", what, Py_TYPE(o)->tp_name);
    return -1;
}

/* Convert the member `mo`, then the score `so` named `what` (so == NULL keeps
 * *score, a default the caller set), in argument order. 0, or -1 with an
 * exception and nothing left to release. */
static inline int py_member_score(PyObject *mo, PyObject *so, const char *what, mbuf *m,
                                  double *score) {
    if (py_member(mo, m) < 0)
        return -1;
    if (so && py_score(so, what, score) < 0) {
        mbuf_release(m);
        return -1;
    }
    return 0;
}

/* Values beyond this are clamped: every index rule gives the same answer
 * for them as for the exact value, for any set that fits in memory. */
#define COUNT_CLAMP (LLONG_MAX / 4)

/* Convert an integer argument (anything with __index__). o == NULL gives
 * `dflt`. Returns 0, or -1 with TypeError. */
static int py_count(PyObject *o, const char *what, long long dflt, long long *out) {
    if (!o) {
        *out = dflt;
        return 0;
    }
    PyObject *i = PyLong_CheckExact(o) ? Py_NewRef(o) : PyNumber_Index(o);
    if (!i) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "%s must be an integer, not %.200s", what,
                         Py_TYPE(o)->tp_name);
        }
        return -1;
    }
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(i, &overflow);
    Py_DECREF(i);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (overflow || v > COUNT_CLAMP || v < -COUNT_CLAMP)
        v = (overflow > 0 || v > 0) ? COUNT_CLAMP : -COUNT_CLAMP;
    *out = v;
    return 0;
}

/* Truth value of an optional argument (absent = false); -1 on error. The
 * bools callers pass are checked by identity before the generic protocol. */
static inline int py_truth(PyObject *o) {
    if (o == NULL || o == Py_False)
        return 0;
    if (o == Py_True)
        return 1;
    return PyObject_IsTrue(o);
}

/* Read the nx/xx/gt/lt/ch flags from a[0..n-1] and refuse the combinations
 * Redis refuses. Returns the FLAG_* mask, or -1 with ValueError. */
static int py_flags(PyObject *const *a, int n) {
    int mask = 0;
    for (int i = 0; i < n; i++) {
        int t = py_truth(a[i]);
        if (t < 0)
            return -1;
        if (t)
            mask |= 1 << i;
    }
    if ((mask & FLAG_NX) && (mask & FLAG_XX)) {
        PyErr_SetString(PyExc_ValueError, "XX and NX options at the same time are not compatible");
        return -1;
    }
    if (((mask & FLAG_GT) && (mask & FLAG_LT)) ||
        ((mask & FLAG_NX) && (mask & (FLAG_GT | FLAG_LT)))) {
        PyErr_SetString(PyExc_ValueError,
                        "GT, LT, and/or NX options at the same time are not compatible");
        return -1;
    }
    return mask;
}

/* One validated (member, score) pair; p[0:n] is kept alive by the keeper
 * list py_pairs returns. */
typedef struct {
    const char *p;
    size_t n;
    uint32_t h;
    double score;
} cpair;

/* How far ahead the bulk loops start loading memory: far enough to cover a
 * cache miss, near enough that the lines are still there when used. */
#define PAIRS_AHEAD 16

/* Cache hints for py_pairs at item i of the list pairs[0:n]: the tuple
 * PAIRS_AHEAD items ahead, and the member and score of the one half as far
 * ahead (its tuple was hinted earlier, so reading its items costs no miss).
 * Large inputs hold their objects scattered over the heap; loading them
 * early overlaps those misses. Reads only; never runs Python code. */
static inline void py_pairs_prefetch(PyObject *pairs, Py_ssize_t i, Py_ssize_t n) {
#if defined(__GNUC__)
    if (i + PAIRS_AHEAD < n)
        __builtin_prefetch(PyList_GET_ITEM(pairs, i + PAIRS_AHEAD));
    if (i + PAIRS_AHEAD / 2 < n) {
        PyObject *t = PyList_GET_ITEM(pairs, i + PAIRS_AHEAD / 2);
        if (PyTuple_CheckExact(t) && PyTuple_GET_SIZE(t) == 2) {
            __builtin_prefetch(PyTuple_GET_ITEM(t, 0));
            __builtin_prefetch(PyTuple_GET_ITEM(t, 1));
        }
    }
#else
    (void)pairs;
    (void)i;
    (void)n;
#endif
}

/* Validated pairs v[0:n] (PyMem_Malloc'ed); `keeper` (a new reference) keeps
 * every member buffer alive. */
typedef struct {
    PyObject *keeper;
    cpair *v;
    Py_ssize_t n;
} cpairs;

/* Free the pairs and drop their keeper. */
static void cpairs_release(cpairs *c) {
    PyMem_Free(c->v);
    Py_DECREF(c->keeper);
}

/* Materialise and validate pairs (a Mapping, or an iterable of (member, score)
 * tuples) into *out, which the caller releases with cpairs_release. 0, or -1
 * with an exception set and nothing to release. */
static int py_pairs(PyObject *pairs, cpairs *out) {
    if (PyUnicode_Check(pairs) || PyBytes_Check(pairs) || PyByteArray_Check(pairs)) {
        PyErr_SetString(PyExc_TypeError,
                        "pairs must be a mapping or an iterable of (member, score) pairs");
        return -1;
    }
    PyObject *keeper;
    if (PyDict_Check(pairs)) {
        keeper = PyDict_Items(pairs);
    } else {
        int is_mapping = PyObject_IsInstance(pairs, MappingABC);
        if (is_mapping < 0)
            return -1;
        if (is_mapping) {
            PyObject *items = PyObject_CallMethod(pairs, "items", NULL);
            if (!items)
                return -1;
            keeper = PySequence_List(items);
            Py_DECREF(items);
        } else {
            if (!Py_TYPE(pairs)->tp_iter) {
                PyErr_Format(PyExc_TypeError,
                             "pairs must be a mapping or an iterable, not %.200s",
                             Py_TYPE(pairs)->tp_name);
                return -1;
            }
            keeper = PySequence_List(pairs);
        }
    }
    if (!keeper)
        return -1;
    Py_ssize_t n = PyList_GET_SIZE(keeper);
    cpair *arr = PyMem_Malloc(sizeof(cpair) * (size_t)(n ? n : 1));
    if (!arr) {
        Py_DECREF(keeper);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        py_pairs_prefetch(keeper, i, n);
        /* keeper is private and tuples are immutable: the items stay alive
         * even if a __float__ below runs arbitrary code. */
        PyObject *item = PyList_GET_ITEM(keeper, i);
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2) {
            PyErr_SetString(PyExc_TypeError, "each pair must be a (member, score) tuple");
            goto error;
        }
        mbuf m;
        if (py_member(PyTuple_GET_ITEM(item, 0), &m) < 0)
            goto error;
        if (m.owned) {
            int rc = PyList_Append(keeper, m.owned);
            mbuf_release(&m);
            if (rc < 0)
                goto error;
            PyObject *last = PyList_GET_ITEM(keeper, PyList_GET_SIZE(keeper) - 1);
            m.p = PyBytes_AS_STRING(last);
        }
        arr[i].p = m.p;
        arr[i].n = m.n;
        arr[i].h = zdict_hash(m.p, m.n);
        if (py_score(PyTuple_GET_ITEM(item, 1), "score", &arr[i].score) < 0)
            goto error;
    }
    *out = (cpairs){keeper, arr, n};
    return 0;
error:
    PyMem_Free(arr);
    Py_DECREF(keeper);
    return -1;
}

/* ==== result building ===================================================== */

/* The member of node x as the set returns it: bytes when raw, else str
 * decoded with surrogateescape. New reference; allocates no GC object. */
static PyObject *py_member_out(const SortedSetObject *s, const zsl_node *x) {
    if (s->raw)
        return PyBytes_FromStringAndSize(zsl_member(x), (Py_ssize_t)x->mlen);
    if (x->ascii) { /* the common case: skip the UTF-8 decoder and its checks */
        PyObject *u = PyUnicode_New((Py_ssize_t)x->mlen, 127);
        if (u)
            memcpy(PyUnicode_DATA(u), zsl_member(x), x->mlen);
        return u;
    }
    return PyUnicode_DecodeUTF8(zsl_member(x), (Py_ssize_t)x->mlen, "surrogateescape");
}

/* (member, score) of node x. x is read before the tuple allocation (which
 * may run a collection), never after. New reference. */
static PyObject *py_pair(const SortedSetObject *s, const zsl_node *x) {
    PyObject *m = py_member_out(s, x);
    PyObject *f = m ? PyFloat_FromDouble(x->score) : NULL;
    return py_tuple2(m, f);
}

/* Rows at either end of a large set are read far more often than the rest
 * (a leaderboard's top N). ss_edge_pair keeps the (member, score) tuple it
 * last returned for each of the first and last ZSET_EDGE positions, and
 * returns it again while the node at that position holds an equal member
 * with the same score bits: a tuple of a str or bytes and a float is
 * immutable, so an equal one serves as well as a new one, and no write has to
 * invalidate anything. The array is allocated on first use and freed only
 * with the set (never while a read may still index it). */
#define ZSET_EDGE 32
#define ZSET_EDGE_MIN 256 /* below this, rows are cheap enough to build */

/* Does the cached tuple t hold node x's member (as this set returns
 * members) and x's exact score? */
static int ss_edge_matches(const SortedSetObject *s, PyObject *t, const zsl_node *x) {
    PyObject *m = PyTuple_GET_ITEM(t, 0);
    double score = PyFloat_AS_DOUBLE(PyTuple_GET_ITEM(t, 1));
    if (memcmp(&score, &x->score, sizeof score) != 0)
        return 0;
    if (s->raw)
        return PyBytes_CheckExact(m) && (size_t)PyBytes_GET_SIZE(m) == x->mlen &&
               memcmp(PyBytes_AS_STRING(m), zsl_member(x), x->mlen) == 0;
    return x->ascii && PyUnicode_CheckExact(m) && PyUnicode_IS_COMPACT_ASCII(m) &&
           (size_t)PyUnicode_GET_LENGTH(m) == x->mlen &&
           memcmp(PyUnicode_DATA(m), zsl_member(x), x->mlen) == 0;
}

/* (member, score) of node x, which sits at 1-based rank `rank`: the tuple
 * cached for that end position when it still matches, else a new one (kept
 * for the position when it is at an end). New reference, or NULL. */
static PyObject *ss_edge_pair(SortedSetObject *s, const zsl_node *x, size_t rank) {
    size_t n = s->z.length, slot;
    if (n < ZSET_EDGE_MIN)
        return py_pair(s, x);
    if (rank <= ZSET_EDGE)
        slot = rank - 1;
    else if (n - rank < ZSET_EDGE)
        slot = ZSET_EDGE + (n - rank);
    else
        return py_pair(s, x);
    if (!s->edge && !(s->edge = PyMem_Calloc(2 * ZSET_EDGE, sizeof(PyObject *))))
        return py_pair(s, x); /* no cache, no error: the row is built as usual */
    PyObject *t = s->edge[slot];
    if (t && ss_edge_matches(s, t, x))
        return Py_NewRef(t);
    t = py_pair(s, x); /* x is not read after this allocation */
    if (t)
        Py_XSETREF(s->edge[slot], Py_NewRef(t));
    return t;
}

/* Drop `list` (may be NULL) and raise RuntimeError for a set changed by
 * Python code run in the middle of a range read. Always NULL. */
static PyObject *py_changed_error(PyObject *list) {
    Py_XDECREF(list);
    PyErr_SetString(PyExc_RuntimeError, "SortedSet changed during a range read");
    return NULL;
}

/* Range walk predicates: does node x still lie inside the range? */
typedef struct {
    int kind; /* 0: none (count only), 1: score <= / <, 2: score >= / >, 3: member up to, 4: member from */
    int incl;
    double score;
    const char *p;
    size_t n;
} bound;

/* Does node x satisfy bound b (kind 0: always)? */
static int bound_holds(const bound *b, const zsl_node *x) {
    switch (b->kind) {
    case 1:
        return b->incl ? x->score <= b->score : x->score < b->score;
    case 2:
        return b->incl ? x->score >= b->score : x->score > b->score;
    case 3: {
        int c = zsl_cmp_members(zsl_member(x), x->mlen, b->p, b->n);
        return b->incl ? c <= 0 : c < 0;
    }
    case 4: {
        int c = zsl_cmp_members(zsl_member(x), x->mlen, b->p, b->n);
        return b->incl ? c >= 0 : c > 0;
    }
    default:
        return 1;
    }
}

/* List of up to `limit` (< 0: no limit) pairs walking from the node of
 * 1-based rank `rank` (forward, or backward when reverse) while `b` holds.
 * rank may be out of range (empty list). The caller computed rank (and b's
 * member bytes stay alive) with no Python code run since; every allocation
 * here may run a collection, hence finalisers that change the set, so the
 * modcount is taken before the first one and a change raises RuntimeError
 * before any rank or node found earlier is used. New reference, or NULL.
 * O(log n + k). */
static PyObject *ss_collect(SortedSetObject *s, size_t rank, int reverse, long long limit,
                            const bound *b) {
    uint64_t mc = s->z.modcount;
    PyObject *list = PyList_New(0);
    if (!list)
        return NULL;
    if (s->z.modcount != mc)
        return py_changed_error(list);
    zsl_node *x = zset_by_rank(&s->z, rank);
    while (x && limit != 0 && bound_holds(b, x)) {
        PyObject *t = py_pair(s, x);
        if (!t || PyList_Append(list, t) < 0) {
            Py_XDECREF(t);
            Py_DECREF(list);
            return NULL;
        }
        Py_DECREF(t);
        if (s->z.modcount != mc)
            return py_changed_error(list);
        x = reverse ? x->backward : x->level[0].forward;
        limit--;
    }
    return list;
}

/* Fill the k slots of the new list `list` (taken over) with the pairs of
 * node x and the k - 1 nodes after it (before it when reverse); they exist,
 * as found under modcount mc with no Python code run since. `rank` is x's
 * 1-based rank, for the cached end rows (ss_edge_pair), or 0 to build every
 * pair anew (py_pair). Every pair's allocation may run finalisers that change
 * the set: a change raises RuntimeError before x is read again. Returns
 * list, or NULL (list dropped). */
static inline PyObject *ss_fill(SortedSetObject *s, PyObject *list, const zsl_node *x,
                                size_t rank, int reverse, size_t k, uint64_t mc) {
    for (size_t i = 0; i < k; i++) {
        PyObject *t = rank ? ss_edge_pair(s, x, reverse ? rank - i : rank + i) : py_pair(s, x);
        if (!t) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, t);
        if (s->z.modcount != mc) /* x may be gone: never touch it again */
            return py_changed_error(list);
        x = reverse ? x->backward : x->level[0].forward;
    }
    return list;
}

/* Exactly k pairs starting at 1-based rank `rank` (1 <= rank, and k nodes
 * exist in that direction: the caller clamped, with no Python code run
 * since). The list allocation may run finalisers that change the set: the
 * modcount is taken before it, and a change raises RuntimeError before the
 * clamped rank is used (else the walk would stop early and leave NULL slots
 * in the list). New reference, or NULL. */
static PyObject *ss_collect_exact(SortedSetObject *s, size_t rank, int reverse, size_t k) {
    uint64_t mc = s->z.modcount;
    PyObject *list = PyList_New((Py_ssize_t)k);
    if (!list)
        return NULL;
    if (s->z.modcount != mc)
        return py_changed_error(list);
    return ss_fill(s, list, zset_by_rank(&s->z, rank), rank, reverse, k, mc);
}

/* ==== object lifecycle ==================================================== */

/* Make the just allocated object s (NULL: its allocation failed, with an
 * exception set) an empty set whose members come back as bytes when raw.
 * Returns s, or NULL with an exception (s dropped). */
static SortedSetObject *ss_setup(SortedSetObject *s, int raw) {
    if (!s)
        return NULL;
    s->edge = NULL; /* before anything that may deallocate s */
    s->raw = raw;
    if (zset_init(&s->z) < 0) {
        s->z.header = NULL;
        Py_DECREF(s);
        PyErr_NoMemory();
        return NULL;
    }
    return s;
}

/* A fresh empty set of the exact SortedSet type; NULL with MemoryError. */
static SortedSetObject *ss_new(int raw) {
    return ss_setup(PyObject_New(SortedSetObject, &SortedSetType), raw);
}

/* tp_new: an empty set (str members) of `type`; NULL with MemoryError. */
static PyObject *SortedSet_tp_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    return (PyObject *)ss_setup((SortedSetObject *)type->tp_alloc(type, 0), 0);
}

/* Free the cached end rows, every node and the table, then the object. */
static void SortedSet_dealloc(PyObject *self) {
    SortedSetObject *s = (SortedSetObject *)self;
    if (s->edge) {
        for (size_t i = 0; i < 2 * ZSET_EDGE; i++)
            Py_XDECREF(s->edge[i]);
        PyMem_Free(s->edge);
    }
    zset_destroy(&s->z);
    Py_TYPE(self)->tp_free(self);
}

static Py_ssize_t ss_load(SortedSetObject *s, cpair *pairs, Py_ssize_t n);

/* SortedSet(pairs=None, *, raw=False): the set's contents become the pairs;
 * 0, or -1 with an exception (the set unchanged when the pairs do not
 * convert). */
static int SortedSet_init(PyObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"pairs", "raw", NULL};
    PyObject *pairs = Py_None, *rawobj = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O$O:SortedSet", kwlist, &pairs, &rawobj))
        return -1;
    int raw = py_truth(rawobj);
    if (raw < 0)
        return -1;
    SortedSetObject *s = (SortedSetObject *)self;
    cpairs c;
    if (pairs != Py_None && py_pairs(pairs, &c) < 0)
        return -1;
    s->raw = raw;
    if (s->z.length)
        zset_clear(&s->z);
    if (pairs == Py_None)
        return 0;
    Py_ssize_t rc = ss_load(s, c.v, c.n);
    cpairs_release(&c);
    return rc < 0 ? -1 : 0;
}

/* "SortedSet(<n> members)". */
static PyObject *SortedSet_repr(PyObject *self) {
    return PyUnicode_FromFormat("%s(%zu members)", Py_TYPE(self)->tp_name,
                                ((SortedSetObject *)self)->z.length);
}

/* ==== size ================================================================ */

/* len(): the number of members. O(1). */
static Py_ssize_t SortedSet_len(PyObject *self) {
    return (Py_ssize_t)((SortedSetObject *)self)->z.length;
}

/* `member in s`: 1/0; other types are never members; -1 on a member
 * that does not convert (UnicodeEncodeError). O(1). */
static int SortedSet_contains(PyObject *self, PyObject *member) {
    if (!PyUnicode_Check(member) && !PyBytes_Check(member))
        return 0;
    mbuf m;
    if (py_member(member, &m) < 0)
        return -1;
    int found = zset_find(&((SortedSetObject *)self)->z, m.p, m.n) != NULL;
    mbuf_release(&m);
    return found;
}

/* Remove every member; the set stays usable. O(n). */
static PyObject *SortedSet_clear(PyObject *self, PyObject *unused) {
    zset_clear(&((SortedSetObject *)self)->z);
    Py_RETURN_NONE;
}

/* The `raw` property: True when members come back as bytes. */
static PyObject *SortedSet_get_raw(PyObject *self, void *closure) {
    return PyBool_FromLong(((SortedSetObject *)self)->raw);
}

/* ==== writes ============================================================== */

/* Do the GT / LT flags in `flags` forbid moving a member from score `cur`
 * to `now`? (NaN never passes either test.) */
static inline int flags_refuse(int flags, double now, double cur) {
    return ((flags & FLAG_GT) && !(now > cur)) || ((flags & FLAG_LT) && !(now < cur));
}

/* ZADD of one converted pair under the FLAG_* mask (already checked).
 * Returns 1 when added (with CH: added or changed), 0 otherwise, -1 with
 * MemoryError. */
static int ss_add(SortedSetObject *s, const char *p, size_t n, uint32_t h, double score,
                  int flags) {
    zsl_node *x = zset_lookup(&s->z, p, n, h);
    if (!x) {
        if (flags & FLAG_XX)
            return 0;
        if (!zset_insert(&s->z, score, p, n, h)) {
            PyErr_NoMemory();
            return -1;
        }
        return 1;
    }
    if (flags & FLAG_NX)
        return 0;
    double cur = x->score;
    if (flags_refuse(flags, score, cur))
        return 0;
    if (score != cur) { /* so 0.0 never overwrites a stored -0.0 */
        zset_set_score(&s->z, x, score, h);
        return (flags & FLAG_CH) ? 1 : 0;
    }
    return 0;
}

static const char *const kw_add[] = {"member", "score", "nx", "xx", "gt", "lt", "ch"};
static argspec spec_add = {"add", 2, 2, 7, kw_add, {NULL}};

static PyObject *SortedSet_add(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames) {
    PyObject *a[7];
    int flags = 0;
    mbuf m;
    double score;
    if (py_parse(&spec_add, args, nargs, kwnames, a) < 0 ||
        (kwnames && (flags = py_flags(a + 2, 5)) < 0) ||
        py_member_score(a[0], a[1], "score", &m, &score) < 0)
        return NULL;
    int r = ss_add((SortedSetObject *)self, m.p, m.n, zdict_hash(m.p, m.n), score, flags);
    mbuf_release(&m);
    return r < 0 ? NULL : PyLong_FromLong(r);
}

static const char *const kw_add_many[] = {"pairs", "nx", "xx", "gt", "lt", "ch"};
static argspec spec_add_many = {"add_many", 1, 1, 6, kw_add_many, {NULL}};

static PyObject *SortedSet_add_many(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames) {
    PyObject *a[6];
    int flags;
    cpairs c;
    if (py_parse(&spec_add_many, args, nargs, kwnames, a) < 0 ||
        (flags = py_flags(a + 1, 5)) < 0 || py_pairs(a[0], &c) < 0)
        return NULL;
    long total = 0;
    for (Py_ssize_t i = 0; i < c.n; i++) {
        const cpair *q = &c.v[i];
        int r = ss_add((SortedSetObject *)self, q->p, q->n, q->h, q->score, flags);
        if (r < 0) {
            total = -1;
            break;
        }
        total += r;
    }
    cpairs_release(&c);
    return total < 0 ? NULL : PyLong_FromLong(total);
}

static const char *const kw_incr[] = {"member", "amount", "nx", "xx", "gt", "lt"};
static argspec spec_incr = {"incr", 2, 1, 6, kw_incr, {NULL}};

static PyObject *SortedSet_incr(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames) {
    PyObject *a[6];
    int flags = 0;
    mbuf m;
    double step = 1.0;
    if (py_parse(&spec_incr, args, nargs, kwnames, a) < 0 ||
        (kwnames && (flags = py_flags(a + 2, 4)) < 0) ||
        py_member_score(a[0], a[1], "increment", &m, &step) < 0)
        return NULL;
    SortedSetObject *s = (SortedSetObject *)self;
    uint32_t h = zdict_hash(m.p, m.n);
    zsl_node *x = zset_lookup(&s->z, m.p, m.n, h);
    PyObject *result;
    if (!x) {
        if (flags & FLAG_XX) {
            result = Py_NewRef(Py_None);
        } else if (!zset_insert(&s->z, step, m.p, m.n, h)) {
            result = PyErr_NoMemory(); /* Redis stores the increment itself: -0.0 stays */
        } else {
            result = PyFloat_FromDouble(step);
        }
    } else if (flags & FLAG_NX) {
        result = Py_NewRef(Py_None);
    } else {
        double cur = x->score, now = cur + step;
        if (isnan(now)) {
            PyErr_SetString(InvalidScoreError, "resulting score is not a number (NaN)");
            result = NULL;
        } else if (flags_refuse(flags, now, cur)) {
            result = Py_NewRef(Py_None);
        } else {
            if (now != cur)
                zset_set_score(&s->z, x, now, h);
            result = PyFloat_FromDouble(now);
        }
    }
    mbuf_release(&m);
    return result;
}

static PyObject *SortedSet_remove(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    SortedSetObject *s = (SortedSetObject *)self;
    mbuf one[8];
    mbuf *ms = nargs <= 8 ? one : PyMem_Malloc(sizeof(mbuf) * (size_t)nargs);
    if (!ms)
        return PyErr_NoMemory();
    Py_ssize_t done = 0;
    long removed = -1;
    for (; done < nargs; done++)
        if (py_member(args[done], &ms[done]) < 0)
            goto out;
    removed = 0;
    for (Py_ssize_t i = 0; i < nargs; i++) {
        zsl_node *x = zset_find(&s->z, ms[i].p, ms[i].n);
        if (x) {
            zset_delete(&s->z, x);
            removed++;
        }
    }
out:
    for (Py_ssize_t i = 0; i < done; i++)
        mbuf_release(&ms[i]);
    if (ms != one)
        PyMem_Free(ms);
    return removed < 0 ? NULL : PyLong_FromLong(removed);
}

/* Set order of two pairs for qsort: (score, member bytes). */
static int cpair_order(const void *a, const void *b) {
    const cpair *x = a, *y = b;
    if (x->score != y->score)
        return x->score < y->score ? -1 : 1;
    return zsl_cmp_members(x->p, x->n, y->p, y->n);
}

/* Is pairs[0:n] in strictly ascending set order? O(n), members compared
 * only on equal scores. */
static int cpairs_sorted(const cpair *pairs, Py_ssize_t n) {
    for (Py_ssize_t i = 1; i < n; i++)
        if (cpair_order(&pairs[i - 1], &pairs[i]) >= 0)
            return 0;
    return 1;
}

/* Keep one pair per member, in place: the last one given, as adding the
 * pairs one by one would leave it, except that an equal later score keeps
 * the earlier one's sign (adding 0.0 never overwrites a stored -0.0). The
 * survivors keep their input order. Returns how many survive, or -1 with
 * MemoryError (pairs unchanged). O(n) expected, with a scratch table of
 * indexes keyed by the pairs' member hashes. */
static Py_ssize_t cpairs_dedupe(cpair *pairs, Py_ssize_t n) {
    size_t cap = 16;
    while (cap < 2 * (size_t)n)
        cap *= 2;
    uint32_t *slots = PyMem_Calloc(cap, sizeof *slots); /* index + 1; 0: empty */
    if (!slots) {
        PyErr_NoMemory();
        return -1;
    }
    size_t mask = cap - 1;
    for (Py_ssize_t i = 0; i < n; i++) {
#if defined(__GNUC__)
        if (i + PAIRS_AHEAD < n)
            __builtin_prefetch(&slots[pairs[i + PAIRS_AHEAD].h & mask]);
#endif
        cpair *q = &pairs[i];
        size_t j = q->h & mask;
        for (; slots[j]; j = (j + 1) & mask) {
            cpair *old = &pairs[slots[j] - 1];
            if (old->h == q->h && old->n == q->n && memcmp(old->p, q->p, q->n) == 0) {
                if (old->score == q->score)
                    q->score = old->score;
                old->h = 0; /* dropped: zdict_hash never returns 0 */
                break;
            }
        }
        slots[j] = (uint32_t)i + 1;
    }
    PyMem_Free(slots);
    Py_ssize_t live = 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (pairs[i].h)
            pairs[live++] = pairs[i];
    return live;
}

/* Add validated pairs without flags, appending in O(1) per pair while they
 * arrive after the tail (bulk mode), else by search. Unsorted input into an
 * empty set is first reduced to one pair per member and sorted (O(n log n),
 * same result as adding them in turn), so it takes the bulk path too, and
 * its nodes are allocated in rank order: neighbours in the list are
 * neighbours in memory, so walks along the list (ranges, around-me) and the
 * last steps of every descent read nearby memory. pairs may be reordered. Returns the number of new members, or -1 with MemoryError. */
static Py_ssize_t ss_load(SortedSetObject *s, cpair *pairs, Py_ssize_t n) {
    zset *z = &s->z;
    zset_bulk bulk;
    int bulk_on = 0;
    Py_ssize_t added = 0;
    if (z->length == 0 && zdict_reserve(z, (size_t)n) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    if (z->length == 0 && n > 1 && (size_t)n < UINT32_MAX / 2 && !cpairs_sorted(pairs, n)) {
        n = cpairs_dedupe(pairs, n);
        if (n < 0)
            return -1;
        qsort(pairs, (size_t)n, sizeof *pairs, cpair_order);
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        const cpair *q = &pairs[i];
        if (i + PAIRS_AHEAD < n) { /* the table slot and member bytes of a later pair */
            zdict_prefetch(&z->dict, pairs[i + PAIRS_AHEAD].h);
#if defined(__GNUC__)
            __builtin_prefetch(pairs[i + PAIRS_AHEAD].p);
#endif
        }
        zsl_node *x = zset_lookup(z, q->p, q->n, q->h);
        int appendable = !x && (!z->tail || zsl_cmp(z->tail, q->score, q->p, q->n) < 0);
        if (appendable && zdict_reserve(z, 1) == 0) {
            zsl_node *node = zsl_node_new(z, q->score, q->p, q->n);
            if (node) {
                if (!bulk_on) {
                    zset_bulk_begin(z, &bulk);
                    bulk_on = 1;
                }
                zset_bulk_append(z, &bulk, node);
                added++;
                continue;
            }
        }
        if (bulk_on) {
            zset_bulk_end(z, &bulk);
            bulk_on = 0;
        }
        int r = ss_add(s, q->p, q->n, q->h, q->score, 0);
        if (r < 0)
            return -1;
        added += r;
    }
    if (bulk_on)
        zset_bulk_end(z, &bulk);
    return added;
}

static const char *const kw_load[] = {"pairs"};
static argspec spec_load = {"load", 1, 1, 1, kw_load, {NULL}};

static PyObject *SortedSet_load(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames) {
    PyObject *a[1];
    cpairs c;
    if (py_parse(&spec_load, args, nargs, kwnames, a) < 0 || py_pairs(a[0], &c) < 0)
        return NULL;
    Py_ssize_t added = ss_load((SortedSetObject *)self, c.v, c.n);
    cpairs_release(&c);
    return added < 0 ? NULL : PyLong_FromSsize_t(added);
}

/* ==== point reads ========================================================= */

static const char *const kw_member[] = {"member"};
static argspec spec_score = {"score", 1, 1, 1, kw_member, {NULL}};

static PyObject *SortedSet_score(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames) {
    PyObject *a[1];
    mbuf m;
    if (py_parse(&spec_score, args, nargs, kwnames, a) < 0 || py_member(a[0], &m) < 0)
        return NULL;
    zsl_node *x = zset_find(&((SortedSetObject *)self)->z, m.p, m.n);
    mbuf_release(&m);
    if (!x)
        Py_RETURN_NONE;
    return PyFloat_FromDouble(x->score);
}

static const char *const kw_members[] = {"members"};
static argspec spec_scores = {"scores", 1, 1, 1, kw_members, {NULL}};

static PyObject *SortedSet_scores(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames) {
    PyObject *a[1];
    if (py_parse(&spec_scores, args, nargs, kwnames, a) < 0)
        return NULL;
    PyObject *keys = PySequence_List(a[0]);
    if (!keys)
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(keys);
    for (Py_ssize_t i = 0; i < n; i++) { /* validate every member first, like the twin */
        mbuf m;
        if (py_member(PyList_GET_ITEM(keys, i), &m) < 0) {
            Py_DECREF(keys);
            return NULL;
        }
        mbuf_release(&m);
    }
    PyObject *out = PyList_New(n);
    for (Py_ssize_t i = 0; out && i < n; i++) {
        mbuf m;
        if (py_member(PyList_GET_ITEM(keys, i), &m) < 0) {
            Py_CLEAR(out);
            break;
        }
        zsl_node *x = zset_find(&((SortedSetObject *)self)->z, m.p, m.n);
        mbuf_release(&m);
        PyObject *v = x ? PyFloat_FromDouble(x->score) : Py_NewRef(Py_None);
        if (!v) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, i, v);
    }
    Py_DECREF(keys);
    return out;
}

#define STYLE_UNIQUE 0
#define STYLE_COMPETITION 1
#define STYLE_DENSE 2

/* The rank of member `mo` in `style` (STYLE_*): 1-based, from the lowest
 * score, or from the highest when reverse. Sets *rank, 0 for a member that
 * is not in the set. 0, or -1 when mo does not convert. The member is
 * converted last, after every other argument: it runs no Python code.
 * O(log n) for every style. */
static inline int ss_rank(const zset *z, PyObject *mo, int style, int reverse, size_t *rank) {
    mbuf m;
    if (py_member(mo, &m) < 0)
        return -1;
    size_t r = 0, dr = 0, *drank = style == STYLE_DENSE ? &dr : NULL;
    const zsl_node *x = style == STYLE_COMPETITION ? zset_find(z, m.p, m.n)
                                                   : zset_find_rank(z, m.p, m.n, &r, drank, 0, 0);
    mbuf_release(&m);
    if (!x)
        r = 0;
    else if (style == STYLE_UNIQUE)
        r = reverse ? z->length - r + 1 : r;
    else if (style == STYLE_COMPETITION)
        r = reverse ? 1 + z->length - zset_count_below(z, x->score, 1)
                    : 1 + zset_count_below(z, x->score, 0);
    else
        r = reverse ? z->groups - dr + 1 : dr;
    *rank = r;
    return 0;
}

static const char *const kw_index[] = {"member", "reverse"};
static argspec spec_index = {"index", 1, 1, 2, kw_index, {NULL}};

static PyObject *SortedSet_index(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames) {
    PyObject *a[2];
    int reverse;
    size_t r;
    if (py_parse(&spec_index, args, nargs, kwnames, a) < 0 || (reverse = py_truth(a[1])) < 0 ||
        ss_rank(&((SortedSetObject *)self)->z, a[0], STYLE_UNIQUE, reverse, &r) < 0)
        return NULL;
    if (!r)
        Py_RETURN_NONE;
    return PyLong_FromSize_t(r - 1);
}

static const char *const kw_rank[] = {"member", "style", "reverse"};
static argspec spec_rank = {"rank", 1, 1, 3, kw_rank, {NULL}};

static PyObject *SortedSet_rank(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames) {
    PyObject *a[3];
    if (py_parse(&spec_rank, args, nargs, kwnames, a) < 0)
        return NULL;
    int style = STYLE_COMPETITION; /* the index in style_names */
    if (a[1]) {
        style = -1;
        for (int i = 0; i < 3 && style < 0; i++)
            if (a[1] == style_names[i])
                style = i;
        if (PyUnicode_Check(a[1]))
            for (int i = 0; i < 3 && style < 0; i++)
                if (PyUnicode_Compare(a[1], style_names[i]) == 0)
                    style = i;
        if (style < 0) {
            PyErr_Format(PyExc_ValueError,
                         "rank style must be one of ('unique', 'competition', 'dense'), not %R",
                         a[1]);
            return NULL;
        }
    }
    int reverse = py_truth(a[2]);
    size_t r;
    if (reverse < 0 || ss_rank(&((SortedSetObject *)self)->z, a[0], style, reverse, &r) < 0)
        return NULL;
    if (!r)
        Py_RETURN_NONE;
    return PyLong_FromSize_t(r);
}

/* (member, score) at 0-based index (negative from the end); IndexError. */
static PyObject *ss_at(SortedSetObject *s, PyObject *index) {
    long long i;
    if (py_count(index, "index", 0, &i) < 0)
        return NULL;
    long long len = (long long)s->z.length;
    if (i < 0)
        i += len;
    if (i < 0 || i >= len) {
        PyErr_SetString(PyExc_IndexError, "sorted set index out of range");
        return NULL;
    }
    return py_pair(s, zset_by_rank(&s->z, (size_t)i + 1));
}

static const char *const kw_at[] = {"index"};
static argspec spec_at = {"at", 1, 1, 1, kw_at, {NULL}};

static PyObject *SortedSet_at(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
    PyObject *a[1];
    if (py_parse(&spec_at, args, nargs, kwnames, a) < 0)
        return NULL;
    return ss_at((SortedSetObject *)self, a[0]);
}

/* s[i]: the (member, score) pair at index i, as at(i). */
static PyObject *SortedSet_subscript(PyObject *self, PyObject *index) {
    return ss_at((SortedSetObject *)self, index);
}

/* ==== range reads ========================================================= */

/* Convert ZRANGE-style start and stop indexes (o[0], o[1]). 0, or -1 with
 * TypeError. */
static int py_start_stop(PyObject *const *o, long long *start, long long *stop) {
    return py_count(o[0], "start", 0, start) < 0 || py_count(o[1], "stop", 0, stop) < 0 ? -1 : 0;
}

/* ZRANGE index rules: negatives count from the end, then clamp. Returns 0
 * for an empty range, else 1 with 0-based *first <= *last < length. */
static int ss_clamp(long long start, long long stop, size_t length, size_t *first,
                    size_t *last) {
    long long len = (long long)length;
    if (start < 0)
        start += len;
    if (stop < 0)
        stop += len;
    if (start < 0)
        start = 0;
    if (start > stop || start >= len)
        return 0;
    if (stop >= len)
        stop = len - 1;
    *first = (size_t)start;
    *last = (size_t)stop;
    return 1;
}

static const char *const kw_range_index[] = {"start", "stop", "reverse"};
static argspec spec_range_index = {"range_by_index", 2, 2, 3, kw_range_index, {NULL}};

static PyObject *SortedSet_range_by_index(PyObject *self, PyObject *const *args,
                                          Py_ssize_t nargs, PyObject *kwnames) {
    PyObject *a[3];
    long long start, stop;
    int reverse;
    if (py_parse(&spec_range_index, args, nargs, kwnames, a) < 0 ||
        py_start_stop(a, &start, &stop) < 0 || (reverse = py_truth(a[2])) < 0)
        return NULL;
    SortedSetObject *s = (SortedSetObject *)self;
    size_t first, last;
    if (!ss_clamp(start, stop, s->z.length, &first, &last))
        return PyList_New(0);
    size_t rank = reverse ? s->z.length - first : first + 1;
    return ss_collect_exact(s, rank, reverse, last - first + 1);
}

static const char *const kw_range_around[] = {"member", "before", "after", "reverse"};
static argspec spec_range_around = {"range_around", 3, 3, 4, kw_range_around, {NULL}};

/* range_around(member, before, after, *, reverse=False): None for a missing
 * member, else (index, pairs) where pairs is the window of up to
 * before + after + 1 consecutive pairs holding the member, shifted (not
 * shrunk) at the ends. One descent (zset_find_rank, which loads the window's
 * nodes meanwhile) for the index, then the window is reached from the
 * member's node along level 0. O(log n + k). */
static PyObject *SortedSet_range_around(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                        PyObject *kwnames) {
    PyObject *a[4];
    long long before, after;
    mbuf m;
    if (py_parse(&spec_range_around, args, nargs, kwnames, a) < 0 || py_member(a[0], &m) < 0)
        return NULL;
    int reverse = 0;
    if (py_count(a[1], "before", 0, &before) < 0 || py_count(a[2], "after", 0, &after) < 0 ||
        (reverse = py_truth(a[3])) < 0) {
        mbuf_release(&m);
        return NULL;
    }
    if (before < 0 || after < 0) {
        mbuf_release(&m);
        PyErr_Format(PyExc_ValueError, "%s must not be negative", before < 0 ? "before" : "after");
        return NULL;
    }
    SortedSetObject *s = (SortedSetObject *)self;
    zset *z = &s->z;
    /* 1-based, ascending; the window's nodes load while the rank is found */
    size_t r;
    size_t back = (size_t)(reverse ? after : before), ahead = (size_t)(reverse ? before : after);
    const zsl_node *x = zset_find_rank(z, m.p, m.n, &r, NULL, back, ahead);
    mbuf_release(&m);
    if (!x)
        Py_RETURN_NONE;
    size_t n = z->length;
    size_t index = reverse ? n - r : r - 1;
    size_t want = (size_t)before + (size_t)after + 1; /* both clamped: no overflow */
    size_t k = want < n ? want : n;
    size_t first = index > (size_t)before ? index - (size_t)before : 0;
    if (first > n - k)
        first = n - k;
    /* from x, step index - first places back in the chosen order */
    for (size_t i = index - first; i; i--)
        x = reverse ? x->level[0].forward : x->backward;
    uint64_t mc = z->modcount;
    PyObject *list = PyList_New((Py_ssize_t)k); /* may run a collection: recheck */
    if (!list)
        return NULL;
    if (z->modcount != mc)
        return py_changed_error(list);
    if (!(list = ss_fill(s, list, x, 0, reverse, k, mc)))
        return NULL;
    return py_tuple2(PyLong_FromSize_t(index), list);
}

/* A score or lex range measured on a set: below = number of nodes before
 * it, upto = number of nodes not after it (each by one descent), and the
 * bounds a walk over it checks: hi going up, lo going down. */
typedef struct {
    size_t below, upto;
    bound hi, lo;
} range_walk;

/* Number of members in the measured range r. */
static inline size_t range_size(const range_walk *r) {
    return r->upto > r->below ? r->upto - r->below : 0;
}

/* Shared range walk for score and lex ranges, as the twin's _range: walk
 * from the first (or last) rank in range r, skipping `offset` members, while
 * the far (or near) bound holds, taking up to `count` (< 0: all). */
static inline PyObject *ss_range(SortedSetObject *s, const range_walk *r, int reverse,
                                 long long offset, long long count) {
    if (offset < 0 || count == 0)
        return PyList_New(0);
    if (reverse) {
        if ((long long)r->upto - offset < 1)
            return PyList_New(0);
        return ss_collect(s, (size_t)((long long)r->upto - offset), 1, count, &r->lo);
    }
    if ((long long)r->below + 1 + offset > (long long)s->z.length)
        return PyList_New(0);
    return ss_collect(s, (size_t)((long long)r->below + 1 + offset), 0, count, &r->hi);
}

/* Convert the exclusive flags of a range, min's then max's. 0, or -1 with
 * the exception of the first that fails. */
static int py_exclusive(PyObject *min_excl, PyObject *max_excl, int *lo_excl, int *hi_excl) {
    return (*lo_excl = py_truth(min_excl)) < 0 || (*hi_excl = py_truth(max_excl)) < 0 ? -1 : 0;
}

/* Convert score bounds min and max; an absent one (NULL) is -inf / +inf.
 * 0, or -1 with TypeError / OverflowError / InvalidScoreError. */
static int py_score_bounds(PyObject *min, PyObject *max, double *lo, double *hi) {
    *lo = -INFINITY;
    *hi = INFINITY;
    return (min && py_score(min, "min", lo) < 0) || (max && py_score(max, "max", hi) < 0) ? -1 : 0;
}

/* Measure the score range [min, max] (each end exclusive as asked) on z
 * into *r. */
static void ss_score_range(const zset *z, double min, double max, int min_excl, int max_excl,
                           range_walk *r) {
    r->below = zset_count_below(z, min, min_excl);
    r->upto = zset_count_below(z, max, !max_excl);
    r->hi = (bound){1, !max_excl, max, NULL, 0};
    r->lo = (bound){2, !min_excl, min, NULL, 0};
}

/* Convert the arguments a[0..3] of a score range (min, max, min_exclusive,
 * max_exclusive), then measure it on z into *r. 0, or -1 with an exception. */
static inline int py_score_range(const zset *z, PyObject *const *a, range_walk *r) {
    double min, max;
    int min_excl, max_excl;
    if (py_score_bounds(a[0], a[1], &min, &max) < 0 ||
        py_exclusive(a[2], a[3], &min_excl, &max_excl) < 0)
        return -1;
    ss_score_range(z, min, max, min_excl, max_excl, r);
    return 0;
}

static const char *const kw_range_score[] = {"min",     "max",    "min_exclusive", "max_exclusive",
                                             "reverse", "offset", "count"};
static argspec spec_range_score = {"range_by_score", 2, 0, 7, kw_range_score, {NULL}};

static PyObject *SortedSet_range_by_score(PyObject *self, PyObject *const *args,
                                          Py_ssize_t nargs, PyObject *kwnames) {
    PyObject *a[7];
    double min, max;
    long long offset, count;
    int min_excl, max_excl, reverse;
    if (py_parse(&spec_range_score, args, nargs, kwnames, a) < 0 ||
        py_score_bounds(a[0], a[1], &min, &max) < 0 || py_count(a[5], "offset", 0, &offset) < 0 ||
        py_count(a[6], "count", -1, &count) < 0 ||
        py_exclusive(a[2], a[3], &min_excl, &max_excl) < 0 || (reverse = py_truth(a[4])) < 0)
        return NULL;
    SortedSetObject *s = (SortedSetObject *)self;
    range_walk r;
    ss_score_range(&s->z, min, max, min_excl, max_excl, &r);
    return ss_range(s, &r, reverse, offset, count);
}

/* Lex range arguments, converted. */
typedef struct {
    mbuf lo, hi;
    int lo_given, hi_given, lo_excl, hi_excl;
} lex_args;

/* Release both converted lex bounds of l. */
static void lex_release(lex_args *l) {
    mbuf_release(&l->lo);
    mbuf_release(&l->hi);
}

/* Convert lex bounds (None = open end) and their exclusive flags into *l:
 * 0, or -1 with an exception and nothing left to release. */
static int py_lex_args(PyObject *min, PyObject *max, PyObject *min_excl, PyObject *max_excl,
                       lex_args *l) {
    l->lo.owned = l->hi.owned = NULL;
    if (py_member_or_none(min, &l->lo, &l->lo_given) < 0)
        return -1;
    if (py_member_or_none(max, &l->hi, &l->hi_given) < 0 ||
        py_exclusive(min_excl, max_excl, &l->lo_excl, &l->hi_excl) < 0) {
        lex_release(l);
        return -1;
    }
    return 0;
}

/* Measure the lex range l on z into *r; r's bounds borrow l's member bytes,
 * so l is released only once r is no longer used. */
static void ss_lex_range(const zset *z, const lex_args *l, range_walk *r) {
    r->below = l->lo_given ? zset_count_lex_below(z, l->lo.p, l->lo.n, l->lo_excl) : 0;
    r->upto = l->hi_given ? zset_count_lex_below(z, l->hi.p, l->hi.n, !l->hi_excl) : z->length;
    r->hi = l->hi_given ? (bound){3, !l->hi_excl, 0, l->hi.p, l->hi.n} : (bound){0, 0, 0, NULL, 0};
    r->lo = l->lo_given ? (bound){4, !l->lo_excl, 0, l->lo.p, l->lo.n} : (bound){0, 0, 0, NULL, 0};
}

static const char *const kw_range_lex[] = {"min",     "max",    "min_exclusive", "max_exclusive",
                                           "reverse", "offset", "count"};
static argspec spec_range_lex = {"range_by_lex", 2, 0, 7, kw_range_lex, {NULL}};

static PyObject *SortedSet_range_by_lex(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                        PyObject *kwnames) {
    PyObject *a[7];
    lex_args l;
    long long offset, count;
    if (py_parse(&spec_range_lex, args, nargs, kwnames, a) < 0 ||
        py_lex_args(a[0], a[1], a[2], a[3], &l) < 0)
        return NULL;
    int reverse = py_truth(a[4]);
    if (reverse < 0 || py_count(a[5], "offset", 0, &offset) < 0 ||
        py_count(a[6], "count", -1, &count) < 0) {
        lex_release(&l);
        return NULL;
    }
    SortedSetObject *s = (SortedSetObject *)self;
    range_walk r;
    ss_lex_range(&s->z, &l, &r);
    PyObject *out = ss_range(s, &r, reverse, offset, count);
    lex_release(&l);
    return out;
}

static const char *const kw_count_range[] = {"min", "max", "min_exclusive", "max_exclusive"};
static argspec spec_count_score = {"count_by_score", 2, 0, 4, kw_count_range, {NULL}};
static argspec spec_count_lex = {"count_by_lex", 2, 0, 4, kw_count_range, {NULL}};

static PyObject *SortedSet_count_by_score(PyObject *self, PyObject *const *args,
                                          Py_ssize_t nargs, PyObject *kwnames) {
    PyObject *a[4];
    range_walk r;
    if (py_parse(&spec_count_score, args, nargs, kwnames, a) < 0 ||
        py_score_range(&((SortedSetObject *)self)->z, a, &r) < 0)
        return NULL;
    return PyLong_FromSize_t(range_size(&r));
}

static PyObject *SortedSet_count_by_lex(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                        PyObject *kwnames) {
    PyObject *a[4];
    lex_args l;
    range_walk r;
    if (py_parse(&spec_count_lex, args, nargs, kwnames, a) < 0 ||
        py_lex_args(a[0], a[1], a[2], a[3], &l) < 0)
        return NULL;
    ss_lex_range(&((SortedSetObject *)self)->z, &l, &r);
    lex_release(&l);
    return PyLong_FromSize_t(range_size(&r));
}

/* ==== cursor iterator ===================================================== */

/* A cursor over a set: holds a strong reference to it, a copy of the last
 * yielded (score, member) and the set's modcount at that time. While the
 * modcount is unchanged the remembered node is still valid and the next one
 * is one pointer away; otherwise the cursor re-seeks strictly after (before,
 * when reversed) its copied point. Holds no other Python objects, and the
 * set holds none, so it needs no GC support. */
typedef struct {
    PyObject_HEAD
    SortedSetObject *set; /* NULL once exhausted */
    zsl_node *node;       /* last yielded node; valid only while modcount matches */
    uint64_t modcount;
    int have_node, have_point, reverse, members_only;
    double score;
    char *mem;
    size_t mlen, mcap;
} ZIterObject;

/* Remember (score, m[0:len]) as the cursor point. 0, or -1 with MemoryError. */
static int ziter_set_point(ZIterObject *it, double score, const char *m, size_t len) {
    if (len > it->mcap) {
        char *p = PyMem_Realloc(it->mem, len);
        if (!p) {
            PyErr_NoMemory();
            return -1;
        }
        it->mem = p;
        it->mcap = len;
    }
    if (len)
        memcpy(it->mem, m, len);
    it->mlen = len;
    it->score = score;
    it->have_point = 1;
    return 0;
}

/* New cursor on s (a new reference to s is taken). */
static PyObject *ziter_new(SortedSetObject *s, int reverse, int members_only) {
    ZIterObject *it = PyObject_New(ZIterObject, &ZIterType);
    if (!it)
        return NULL;
    it->set = (SortedSetObject *)Py_NewRef(s);
    it->node = NULL;
    it->modcount = 0;
    it->have_node = it->have_point = 0;
    it->reverse = reverse;
    it->members_only = members_only;
    it->score = 0.0;
    it->mem = NULL;
    it->mlen = it->mcap = 0;
    return (PyObject *)it;
}

/* Drop the set reference and the saved resume point, free the iterator. */
static void ZIter_dealloc(PyObject *self) {
    ZIterObject *it = (ZIterObject *)self;
    Py_XDECREF(it->set);
    PyMem_Free(it->mem);
    PyObject_Free(self);
}

/* Next (member, score) pair, or member (members_only); NULL with no
 * exception at the end. Resumes after the last one returned (by node while
 * the set is unchanged, else by its (score, member) point), so changes never
 * break the iteration. */
static PyObject *ZIter_next(PyObject *self) {
    ZIterObject *it = (ZIterObject *)self;
    if (!it->set)
        return NULL;
    zset *z = &it->set->z;
    zsl_node *x;
    if (it->have_node && it->modcount == z->modcount)
        x = it->reverse ? it->node->backward : it->node->level[0].forward;
    else if (!it->have_point)
        x = it->reverse ? z->tail : z->header->level[0].forward;
    else if (it->reverse)
        x = zset_seek_before(z, it->score, it->mem ? it->mem : "", it->mlen);
    else
        x = zset_seek_after(z, it->score, it->mem ? it->mem : "", it->mlen);
    if (!x) {
        Py_CLEAR(it->set);
        return NULL;
    }
    if (ziter_set_point(it, x->score, zsl_member(x), x->mlen) < 0)
        return NULL;
    it->node = x;
    it->have_node = 1;
    it->modcount = z->modcount;
    return it->members_only ? py_member_out(it->set, x) : py_pair(it->set, x);
}

/* iter(s): members in ascending order, as items() (changes never break it). */
static PyObject *SortedSet_iter(PyObject *self) {
    return ziter_new((SortedSetObject *)self, 0, 1);
}

static const char *const kw_items[] = {"reverse", "after"};
static argspec spec_items = {"items", 0, 0, 2, kw_items, {NULL}};

static PyObject *SortedSet_items(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames) {
    PyObject *a[2];
    int reverse;
    if (py_parse(&spec_items, args, nargs, kwnames, a) < 0 || (reverse = py_truth(a[0])) < 0)
        return NULL;
    double score = 0.0;
    mbuf m = {NULL, 0, NULL};
    PyObject *after = a[1] == Py_None ? NULL : a[1];
    if (after) {
        if (!PyTuple_Check(after) || PyTuple_GET_SIZE(after) != 2) {
            PyErr_SetString(PyExc_TypeError, "after must be a (score, member) tuple");
            return NULL;
        }
        if (py_score(PyTuple_GET_ITEM(after, 0), "after score", &score) < 0 ||
            py_member(PyTuple_GET_ITEM(after, 1), &m) < 0)
            return NULL;
    }
    ZIterObject *it = (ZIterObject *)ziter_new((SortedSetObject *)self, reverse, 0);
    if (it && after && ziter_set_point(it, score, m.p, m.n) < 0)
        Py_CLEAR(it);
    mbuf_release(&m);
    return (PyObject *)it;
}

static const char *const kw_items_after[] = {"score", "member", "count", "reverse"};
static argspec spec_items_after = {"items_after", 3, 3, 4, kw_items_after, {NULL}};

static PyObject *SortedSet_items_after(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                       PyObject *kwnames) {
    PyObject *a[4];
    double score;
    long long count;
    mbuf m;
    if (py_parse(&spec_items_after, args, nargs, kwnames, a) < 0 ||
        py_score(a[0], "score", &score) < 0 || py_member(a[1], &m) < 0)
        return NULL;
    int reverse = 0;
    if (py_count(a[2], "count", 0, &count) < 0 || (reverse = py_truth(a[3])) < 0) {
        mbuf_release(&m);
        return NULL;
    }
    if (count < 0) {
        mbuf_release(&m);
        PyErr_SetString(PyExc_ValueError, "count must not be negative");
        return NULL;
    }
    SortedSetObject *s = (SortedSetObject *)self;
    PyObject *out;
    if (count == 0) {
        out = PyList_New(0);
    } else {
        zsl_node *x = reverse ? zset_seek_before(&s->z, score, m.p, m.n)
                              : zset_seek_after(&s->z, score, m.p, m.n);
        size_t rank = x ? zset_rank(&s->z, x, NULL) : 0;
        static const bound all = {0, 0, 0, NULL, 0};
        out = ss_collect(s, rank, reverse, count, &all);
    }
    mbuf_release(&m);
    return out;
}

/* ==== removals ============================================================ */

static const char *const kw_start_stop[] = {"start", "stop"};
static argspec spec_remove_index = {"remove_range_by_index", 2, 2, 2, kw_start_stop, {NULL}};

static PyObject *SortedSet_remove_range_by_index(PyObject *self, PyObject *const *args,
                                                 Py_ssize_t nargs, PyObject *kwnames) {
    PyObject *a[2];
    long long start, stop;
    if (py_parse(&spec_remove_index, args, nargs, kwnames, a) < 0 ||
        py_start_stop(a, &start, &stop) < 0)
        return NULL;
    zset *z = &((SortedSetObject *)self)->z;
    size_t first, last;
    if (!ss_clamp(start, stop, z->length, &first, &last))
        return PyLong_FromLong(0);
    return PyLong_FromSize_t(zset_delete_rank_range(z, first + 1, last + 1));
}

/* Delete the run of nodes from 1-based rank `first` on while `b` holds.
 * Returns how many were deleted. O(log n + k). */
static size_t ss_remove_run(zset *z, size_t first, const bound *b) {
    size_t k = 0;
    for (zsl_node *x = zset_by_rank(z, first); x && bound_holds(b, x); x = x->level[0].forward)
        k++;
    return k ? zset_delete_rank_range(z, first, first + k - 1) : 0;
}

static argspec spec_remove_score = {"remove_range_by_score", 2, 2, 4, kw_count_range, {NULL}};
static argspec spec_remove_lex = {"remove_range_by_lex", 2, 2, 4, kw_count_range, {NULL}};

static PyObject *SortedSet_remove_range_by_score(PyObject *self, PyObject *const *args,
                                                 Py_ssize_t nargs, PyObject *kwnames) {
    PyObject *a[4];
    zset *z = &((SortedSetObject *)self)->z;
    range_walk r;
    if (py_parse(&spec_remove_score, args, nargs, kwnames, a) < 0 || py_score_range(z, a, &r) < 0)
        return NULL;
    return PyLong_FromSize_t(ss_remove_run(z, r.below + 1, &r.hi));
}

static PyObject *SortedSet_remove_range_by_lex(PyObject *self, PyObject *const *args,
                                               Py_ssize_t nargs, PyObject *kwnames) {
    PyObject *a[4];
    lex_args l;
    if (py_parse(&spec_remove_lex, args, nargs, kwnames, a) < 0 ||
        py_lex_args(a[0], a[1], a[2], a[3], &l) < 0)
        return NULL;
    zset *z = &((SortedSetObject *)self)->z;
    range_walk r;
    ss_lex_range(z, &l, &r);
    size_t removed = ss_remove_run(z, r.below + 1, &r.hi);
    lex_release(&l);
    return PyLong_FromSize_t(removed);
}

/* ZPOPMIN / ZPOPMAX. Each node's member and score become Python objects
 * (no GC allocation) before the node is deleted; the tuple is built after. */
static PyObject *ss_pop(SortedSetObject *s, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames, argspec *spec, int from_max) {
    PyObject *a[1];
    long long count;
    if (py_parse(spec, args, nargs, kwnames, a) < 0 || py_count(a[0], "count", 1, &count) < 0)
        return NULL;
    if (count < 0) {
        PyErr_SetString(PyExc_ValueError, "count must not be negative");
        return NULL;
    }
    PyObject *out = PyList_New(0);
    while (out && count-- > 0 && s->z.length) {
        zsl_node *x = from_max ? s->z.tail : s->z.header->level[0].forward;
        PyObject *m = py_member_out(s, x);
        PyObject *f = m ? PyFloat_FromDouble(x->score) : NULL;
        if (m && f)
            zset_delete(&s->z, x);
        PyObject *t = py_tuple2(m, f);
        if (!t || PyList_Append(out, t) < 0)
            Py_CLEAR(out);
        Py_XDECREF(t);
    }
    return out;
}

static const char *const kw_count[] = {"count"};
static argspec spec_pop_min = {"pop_min", 1, 0, 1, kw_count, {NULL}};
static argspec spec_pop_max = {"pop_max", 1, 0, 1, kw_count, {NULL}};

static PyObject *SortedSet_pop_min(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames) {
    return ss_pop((SortedSetObject *)self, args, nargs, kwnames, &spec_pop_min, 0);
}

static PyObject *SortedSet_pop_max(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames) {
    return ss_pop((SortedSetObject *)self, args, nargs, kwnames, &spec_pop_max, 1);
}

/* ==== random members ====================================================== */

static PyObject *SortedSet_random_member(PyObject *self, PyObject *unused) {
    SortedSetObject *s = (SortedSetObject *)self;
    if (!s->z.length)
        Py_RETURN_NONE;
    return py_pair(s, zset_by_rank(&s->z, 1 + (size_t)zsl_rand_below(s->z.length)));
}

/* k distinct 0-based positions below n (0 < k < n) by Floyd's sampling, with
 * a small open-addressing set of the positions taken. out has k slots.
 * Returns 0, or -1 with MemoryError. */
static int ss_sample(size_t n, size_t k, size_t *out) {
    size_t cap = 16;
    while (cap < 2 * k)
        cap *= 2;
    size_t *taken = PyMem_Malloc(cap * sizeof *taken);
    if (!taken) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < cap; i++)
        taken[i] = SIZE_MAX;
    size_t used = 0;
    for (size_t j = n - k; j < n; j++) {
        size_t t = (size_t)zsl_rand_below((uint64_t)j + 1);
        for (int pass = 0; pass < 2; pass++) { /* try t; if already taken, take j */
            size_t slot = (t * 0x9E3779B97F4A7C15ull) & (cap - 1);
            while (taken[slot] != SIZE_MAX && taken[slot] != t)
                slot = (slot + 1) & (cap - 1);
            if (taken[slot] == SIZE_MAX) {
                taken[slot] = t;
                out[used++] = t;
                break;
            }
            t = j;
        }
    }
    PyMem_Free(taken);
    return 0;
}

static argspec spec_random_members = {"random_members", 1, 1, 1, kw_count, {NULL}};

/* random_members(count): the positions are drawn below the current length,
 * then read with no Python code run in between except by the allocations,
 * which are checked against the modcount (RuntimeError on a change). */

static PyObject *SortedSet_random_members(PyObject *self, PyObject *const *args,
                                          Py_ssize_t nargs, PyObject *kwnames) {
    PyObject *a[1];
    long long count;
    if (py_parse(&spec_random_members, args, nargs, kwnames, a) < 0 ||
        py_count(a[0], "count", 0, &count) < 0)
        return NULL;
    SortedSetObject *s = (SortedSetObject *)self;
    size_t n = s->z.length;
    if (count == 0 || n == 0)
        return PyList_New(0);
    if (count > 0 && (unsigned long long)count >= n)
        return ss_collect_exact(s, 1, 0, n);
    size_t k = count > 0 ? (size_t)count : (size_t)(-count);
    if (k > (size_t)PY_SSIZE_T_MAX / sizeof(size_t))
        return PyErr_NoMemory();
    size_t *pos = PyMem_Malloc(k * sizeof *pos);
    if (!pos)
        return PyErr_NoMemory();
    if (count > 0) {
        if (ss_sample(n, k, pos) < 0) {
            PyMem_Free(pos);
            return NULL;
        }
    } else {
        for (size_t i = 0; i < k; i++)
            pos[i] = (size_t)zsl_rand_below(n);
    }
    uint64_t mc = s->z.modcount; /* the positions are below n: the set as it is now */
    PyObject *out = PyList_New((Py_ssize_t)k);
    if (out && s->z.modcount != mc)
        out = py_changed_error(out); /* a finaliser run by the allocation changed it */
    for (size_t i = 0; out && i < k; i++) {
        PyObject *t = py_pair(s, zset_by_rank(&s->z, pos[i] + 1));
        if (!t) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, (Py_ssize_t)i, t);
        if (s->z.modcount != mc) {
            out = py_changed_error(out);
            break;
        }
    }
    PyMem_Free(pos);
    return out;
}

/* ==== set algebra ========================================================= */

/* Order nodes by (score, member) for qsort. */
static int node_order(const void *a, const void *b) {
    const zsl_node *x = *(zsl_node *const *)a, *y = *(zsl_node *const *)b;
    return zsl_cmp(x, y->score, zsl_member(y), y->mlen);
}

/* Link n unlinked nodes of s (allocated with zsl_node_new on s->z, members
 * distinct and absent from s) in sorted order, taking ownership of them.
 * Returns 0, or -1 with MemoryError (then the nodes are freed). */
static int ss_link_sorted(SortedSetObject *s, zsl_node **nodes, size_t n, int presorted) {
    if (zdict_reserve(&s->z, n) < 0) {
        for (size_t i = 0; i < n; i++)
            zsl_node_free(&s->z, nodes[i]);
        PyErr_NoMemory();
        return -1;
    }
    if (!presorted && n > 1)
        qsort(nodes, n, sizeof *nodes, node_order);
    zset_bulk bulk;
    zset_bulk_begin(&s->z, &bulk);
    for (size_t i = 0; i < n; i++)
        zset_bulk_append(&s->z, &bulk, nodes[i]);
    zset_bulk_end(&s->z, &bulk);
    return 0;
}

/* A growable array of node pointers (PyMem). */
typedef struct {
    zsl_node **v;
    size_t n, cap;
} nodevec;

/* Append x, growing the vector: 0, or -1 (out of memory, x not added). */
static int nodevec_push(nodevec *nv, zsl_node *x) {
    if (nv->n == nv->cap) {
        size_t cap = nv->cap ? 2 * nv->cap : 64;
        zsl_node **v = PyMem_Realloc(nv->v, cap * sizeof *v);
        if (!v)
            return -1;
        nv->v = v;
        nv->cap = cap;
    }
    nv->v[nv->n++] = x;
    return 0;
}

/* Free nodes not yet linked into s and the vector itself. */
static void nodevec_discard(SortedSetObject *s, nodevec *nv) {
    for (size_t i = 0; i < nv->n; i++)
        zsl_node_free(&s->z, nv->v[i]);
    PyMem_Free(nv->v);
}

/* Validated inputs of union/inter/diff: `seq` is a private tuple of the
 * input sets (a strong reference to each, for the whole call: Python code
 * run while the other arguments convert may drop every other reference);
 * `sets` points at those sets, in argument order until algebra_order sorts
 * them (with their weights) by size. */
typedef struct {
    PyObject *seq;
    Py_ssize_t n;
    SortedSetObject **sets;
    double *weights;
    int aggregate; /* 0 sum, 1 min, 2 max */
} algebra_args;

/* Release what py_sets / py_algebra_args filled in g (zeroed first); safe on
 * a partly filled g. */
static void algebra_release(algebra_args *g) {
    Py_XDECREF(g->seq);
    PyMem_Free(g->sets);
    PyMem_Free(g->weights);
}

/* Complete a union/inter/diff result: on `failed` free the unlinked nodes of
 * `nv` and the new set `out` (may be NULL) and make sure an exception is set;
 * otherwise link `nv`'s nodes into `out` (`presorted`: as ss_link_sorted) and
 * free the vector. Always releases `g`. Returns a new reference or NULL. */
static PyObject *algebra_finish(SortedSetObject *out, nodevec *nv, int failed, int presorted,
                                algebra_args *g) {
    if (failed) {
        if (out)
            nodevec_discard(out, nv);
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        Py_CLEAR(out);
    } else {
        if (ss_link_sorted(out, nv->v, nv->n, presorted) < 0)
            Py_CLEAR(out);
        PyMem_Free(nv->v);
    }
    algebra_release(g);
    return (PyObject *)out;
}

/* Check `sets` (a Sequence of SortedSet, not a SortedSet) and fill g->seq
 * (a new tuple of its items, never the caller's list, which Python code may
 * empty later), g->n and g->sets (borrowed from g->seq) in argument order.
 * g is zeroed by the caller. Runs Python code (the ABC check, iterating a
 * sequence that is not a list or tuple) before anything is kept. 0, or -1
 * with TypeError / ValueError / MemoryError. */
static int py_sets(PyObject *sets, algebra_args *g) {
    int is_seq = PyObject_TypeCheck(sets, &SortedSetType) ? 0 : PyObject_IsInstance(sets, SequenceABC);
    if (is_seq < 0)
        return -1;
    if (!is_seq) {
        PyErr_SetString(PyExc_TypeError, "sets must be a sequence of SortedSet");
        return -1;
    }
    PyObject *fast = PySequence_Fast(sets, "sets must be a sequence of SortedSet");
    if (!fast)
        return -1;
    g->seq = PySequence_Tuple(fast); /* a list or a tuple: no Python code runs */
    Py_DECREF(fast);
    if (!g->seq)
        return -1;
    g->n = PyTuple_GET_SIZE(g->seq);
    g->sets = PyMem_Malloc(sizeof(SortedSetObject *) * (size_t)(g->n ? g->n : 1));
    if (!g->sets) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < g->n; i++) {
        PyObject *item = PyTuple_GET_ITEM(g->seq, i);
        if (!PyObject_TypeCheck(item, &SortedSetType)) {
            PyErr_Format(PyExc_TypeError, "sets must hold SortedSet objects, not %.200s",
                         Py_TYPE(item)->tp_name);
            return -1;
        }
        g->sets[i] = (SortedSetObject *)item;
    }
    if (g->n == 0) {
        PyErr_SetString(PyExc_ValueError, "at least one input set is required");
        return -1;
    }
    return 0;
}

/* Convert union/inter arguments into *g (zeroed here), in argument order:
 * the sets (held by g->seq from then on), the weights (their __len__,
 * __iter__ / __getitem__ and each weight's __float__ or __index__ may run
 * any Python code, even empty the caller's list of sets or write to a set:
 * nothing read from a set is kept across them), then the aggregate. The
 * sets are read only later, after algebra_order. 0, or -1 with an
 * exception; algebra_release(g) is safe either way. */
static int py_algebra_args(PyObject *sets, PyObject *weights, PyObject *aggregate,
                           algebra_args *g) {
    memset(g, 0, sizeof *g);
    if (py_sets(sets, g) < 0)
        return -1;
    g->weights = PyMem_Malloc(sizeof(double) * (size_t)g->n);
    if (!g->weights) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < g->n; i++)
        g->weights[i] = 1.0;
    if (weights && weights != Py_None) {
        Py_ssize_t nw = PyObject_Length(weights);
        if (nw < 0)
            return -1;
        if (nw != g->n) {
            PyErr_SetString(PyExc_ValueError, "weights must have one entry per input set");
            return -1;
        }
        PyObject *wl = PySequence_List(weights);
        if (!wl)
            return -1;
        int bad = PyList_GET_SIZE(wl) != g->n;
        for (Py_ssize_t i = 0; !bad && i < g->n; i++)
            bad = py_score(PyList_GET_ITEM(wl, i), "weight", &g->weights[i]) < 0;
        Py_DECREF(wl);
        if (bad) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "weights must have one entry per input set");
            return -1;
        }
    }
    g->aggregate = -1;
    if (!aggregate) {
        g->aggregate = 0;
    } else if (PyUnicode_Check(aggregate)) {
        static const char *const names[] = {"sum", "min", "max"};
        for (int i = 0; i < 3 && g->aggregate < 0; i++)
            if (PyUnicode_CompareWithASCIIString(aggregate, names[i]) == 0)
                g->aggregate = i;
    }
    if (g->aggregate < 0) {
        PyErr_Format(PyExc_ValueError, "aggregate must be one of ('sum', 'min', 'max'), not %R",
                     aggregate);
        return -1;
    }
    return 0;
}

/* Sort g's sets (with their weights) by size, stably: Redis visits the
 * smallest input first. Called once every argument is converted, so the
 * sizes are the ones the walk sees. Runs no Python code. */
static void algebra_order(algebra_args *g) {
    for (Py_ssize_t i = 1; i < g->n; i++) {
        SortedSetObject *s = g->sets[i];
        double w = g->weights[i];
        Py_ssize_t j = i;
        while (j > 0 && g->sets[j - 1]->z.length > s->z.length) {
            g->sets[j] = g->sets[j - 1];
            g->weights[j] = g->weights[j - 1];
            j--;
        }
        g->sets[j] = s;
        g->weights[j] = w;
    }
}

/* SUM (a NaN total becomes 0), MIN or MAX (a NaN value never wins). */
static double aggregate_scores(int how, double cur, double v) {
    if (how == 0) {
        double t = cur + v;
        return isnan(t) ? 0.0 : t;
    }
    if (how == 1)
        return v < cur ? v : cur;
    return v > cur ? v : cur;
}

static const char *const kw_algebra[] = {"sets", "weights", "aggregate", "raw"};
static argspec spec_union = {"union", 3, 1, 4, kw_algebra, {NULL}};
static argspec spec_inter = {"inter", 3, 1, 4, kw_algebra, {NULL}};

/* union (is_union) or inter: the arguments are converted in order (sets,
 * weights, aggregate, raw; each may run Python code), then the inputs are
 * ordered and walked with no Python code running until the result is
 * linked: the walk reads the sets through g.seq's strong references. */
static PyObject *ss_algebra(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                            int is_union) {
    PyObject *a[4];
    if (py_parse(is_union ? &spec_union : &spec_inter, args, nargs, kwnames, a) < 0)
        return NULL;
    algebra_args g;
    int raw = -1;
    if (py_algebra_args(a[0], a[1], a[2], &g) < 0 || (raw = py_truth(a[3])) < 0) {
        algebra_release(&g);
        return NULL;
    }
    algebra_order(&g);
    SortedSetObject *out = ss_new(raw);
    nodevec nv = {NULL, 0, 0};
    int failed = !out;
    if (!failed && is_union) {
        /* Accumulate in a scratch zset's table; nodes are charged to `out`. */
        zset acc;
        failed = zset_init(&acc) < 0;
        for (Py_ssize_t i = 0; !failed && i < g.n; i++) {
            double w = g.weights[i];
            for (zsl_node *x = g.sets[i]->z.header->level[0].forward; x && !failed;
                 x = x->level[0].forward) {
                double v = w * x->score;
                if (isnan(v))
                    v = 0.0;
                uint32_t h = zdict_hash(zsl_member(x), x->mlen);
                zsl_node *y = zset_lookup(&acc, zsl_member(x), x->mlen, h);
                if (y) {
                    y->score = aggregate_scores(g.aggregate, y->score, v);
                    zdict_rescore(&acc.dict, y, h);
                    continue;
                }
                y = zsl_node_new(&out->z, v, zsl_member(x), x->mlen);
                if (!y || zdict_reserve(&acc, 1) < 0 || nodevec_push(&nv, y) < 0) {
                    if (y)
                        zsl_node_free(&out->z, y);
                    failed = 1;
                    break;
                }
                zdict_insert(&acc.dict, y, h);
            }
        }
        if (acc.header)
            zset_destroy(&acc);
    } else if (!failed) {
        SortedSetObject *driver = g.sets[0];
        for (zsl_node *x = driver->z.header->level[0].forward; x && !failed;
             x = x->level[0].forward) {
            double total = g.weights[0] * x->score;
            if (isnan(total))
                total = 0.0;
            uint32_t h = zdict_hash(zsl_member(x), x->mlen);
            Py_ssize_t j = 1;
            for (; j < g.n; j++) {
                zsl_node *y = zset_lookup(&g.sets[j]->z, zsl_member(x), x->mlen, h);
                if (!y)
                    break;
                total = aggregate_scores(g.aggregate, total, y->score * g.weights[j]);
            }
            if (j < g.n)
                continue;
            zsl_node *y = zsl_node_new(&out->z, total, zsl_member(x), x->mlen);
            if (!y || nodevec_push(&nv, y) < 0) {
                if (y)
                    zsl_node_free(&out->z, y);
                failed = 1;
            }
        }
    }
    return algebra_finish(out, &nv, failed, 0, &g);
}

static PyObject *SortedSet_union(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames) {
    return ss_algebra(args, nargs, kwnames, 1);
}

static PyObject *SortedSet_inter(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames) {
    return ss_algebra(args, nargs, kwnames, 0);
}

static const char *const kw_diff[] = {"sets", "raw"};
static argspec spec_diff = {"diff", 1, 1, 2, kw_diff, {NULL}};

/* diff: the sets, then raw, are converted (each may run Python code); then
 * the first set is walked against the others with no Python code running,
 * through g.seq's strong references. */
static PyObject *SortedSet_diff(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames) {
    PyObject *a[2];
    if (py_parse(&spec_diff, args, nargs, kwnames, a) < 0)
        return NULL;
    algebra_args g;
    memset(&g, 0, sizeof g);
    int raw = -1;
    if (py_sets(a[0], &g) < 0 || (raw = py_truth(a[1])) < 0) {
        algebra_release(&g);
        return NULL;
    }
    SortedSetObject *out = ss_new(raw);
    nodevec nv = {NULL, 0, 0};
    int failed = !out;
    for (zsl_node *x = failed ? NULL : g.sets[0]->z.header->level[0].forward; x;
         x = x->level[0].forward) {
        uint32_t h = zdict_hash(zsl_member(x), x->mlen);
        Py_ssize_t j = 1;
        while (j < g.n && !zset_lookup(&g.sets[j]->z, zsl_member(x), x->mlen, h))
            j++;
        if (j < g.n)
            continue;
        zsl_node *y = zsl_node_new(&out->z, x->score, zsl_member(x), x->mlen);
        if (!y || nodevec_push(&nv, y) < 0) {
            if (y)
                zsl_node_free(&out->z, y);
            failed = 1;
            break;
        }
    }
    return algebra_finish(out, &nv, failed, 1, &g);
}

/* ==== whole set =========================================================== */

static PyObject *SortedSet_copy(PyObject *self, PyObject *unused) {
    SortedSetObject *s = (SortedSetObject *)self;
    SortedSetObject *out = ss_new(s->raw);
    if (!out)
        return NULL;
    if (zdict_reserve(&out->z, s->z.length) < 0) {
        Py_DECREF(out);
        return PyErr_NoMemory();
    }
    zset_bulk bulk;
    zset_bulk_begin(&out->z, &bulk);
    for (zsl_node *x = s->z.header->level[0].forward; x; x = x->level[0].forward) {
        zsl_node *y = zsl_node_new(&out->z, x->score, zsl_member(x), x->mlen);
        if (!y) {
            zset_bulk_end(&out->z, &bulk);
            Py_DECREF(out);
            return PyErr_NoMemory();
        }
        zset_bulk_append(&out->z, &bulk, y);
    }
    zset_bulk_end(&out->z, &bulk);
    return (PyObject *)out;
}

/* Write the low nbytes bytes of v at p, least significant first. */
static void put_le(unsigned char *p, uint64_t v, int nbytes) {
    for (int i = 0; i < nbytes; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* Read nbytes bytes at p, least significant first. */
static uint64_t get_le(const unsigned char *p, int nbytes) {
    uint64_t v = 0;
    for (int i = nbytes - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

#define SNAP_HEADER 13 /* "RKZS" + version u8 + count u64 */
#define SNAP_ENTRY 12  /* score f64 + length u32 */

static PyObject *SortedSet_snapshot(PyObject *self, PyObject *unused) {
    SortedSetObject *s = (SortedSetObject *)self;
    size_t size = SNAP_HEADER;
    for (zsl_node *x = s->z.header->level[0].forward; x; x = x->level[0].forward)
        size += SNAP_ENTRY + x->mlen;
    if (size > (size_t)PY_SSIZE_T_MAX)
        return PyErr_NoMemory();
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)size);
    if (!out)
        return NULL;
    unsigned char *p = (unsigned char *)PyBytes_AS_STRING(out);
    memcpy(p, "RKZS", 4);
    p[4] = 1;
    put_le(p + 5, s->z.length, 8);
    p += SNAP_HEADER;
    for (zsl_node *x = s->z.header->level[0].forward; x; x = x->level[0].forward) {
        uint64_t bits;
        memcpy(&bits, &x->score, sizeof bits);
        put_le(p, bits, 8);
        put_le(p + 8, x->mlen, 4);
        if (x->mlen)
            memcpy(p + SNAP_ENTRY, zsl_member(x), x->mlen);
        p += SNAP_ENTRY + x->mlen;
    }
    return out;
}

/* Drop `out` (may be NULL) and raise SnapshotError(msg). Always NULL. */
static PyObject *snap_error(SortedSetObject *out, const char *msg) {
    Py_XDECREF(out);
    PyErr_SetString(SnapshotError, msg);
    return NULL;
}

/* Parse and validate a snapshot into a new set (raw as given). */
static PyObject *ss_restore(const unsigned char *data, size_t size, int raw) {
    if (size < SNAP_HEADER)
        return snap_error(NULL, "snapshot truncated: incomplete header");
    if (memcmp(data, "RKZS", 4) != 0)
        return snap_error(NULL, "not a ranked sorted-set snapshot (bad magic)");
    if (data[4] != 1) {
        PyErr_Format(SnapshotError, "unknown snapshot version %d", data[4]);
        return NULL;
    }
    uint64_t count = get_le(data + 5, 8);
    size_t pos = SNAP_HEADER;
    if (count > (size - pos) / SNAP_ENTRY)
        return snap_error(NULL, "snapshot truncated: fewer entries than its count");
    SortedSetObject *out = ss_new(raw);
    if (!out)
        return NULL;
    zset *z = &out->z;
    if (zdict_reserve(z, (size_t)count) < 0) {
        Py_DECREF(out);
        return PyErr_NoMemory();
    }
    zset_bulk bulk;
    zset_bulk_begin(z, &bulk);
    const char *err = NULL;
    for (uint64_t i = 0; i < count && !err; i++) {
        if (size - pos < SNAP_ENTRY) {
            err = "snapshot truncated inside an entry";
            break;
        }
        uint64_t bits = get_le(data + pos, 8);
        double score;
        memcpy(&score, &bits, sizeof score);
        size_t len = (size_t)get_le(data + pos + 8, 4);
        pos += SNAP_ENTRY;
        if (size - pos < len) {
            err = "snapshot truncated inside a member";
            break;
        }
        const char *m = (const char *)data + pos;
        pos += len;
        if (isnan(score))
            err = "snapshot holds a NaN score";
        else if (z->tail && zsl_cmp(z->tail, score, m, len) >= 0)
            err = "snapshot entries are not in ascending order";
        else if (zset_find(z, m, len))
            err = "snapshot repeats a member";
        else {
            zsl_node *x = zsl_node_new(z, score, m, len);
            if (!x) {
                zset_bulk_end(z, &bulk);
                Py_DECREF(out);
                return PyErr_NoMemory();
            }
            zset_bulk_append(z, &bulk, x);
        }
    }
    zset_bulk_end(z, &bulk);
    if (!err && pos != size)
        err = "snapshot has trailing bytes";
    if (err)
        return snap_error(out, err);
    return (PyObject *)out;
}

static const char *const kw_restore[] = {"data", "raw"};
static argspec spec_restore = {"restore", 1, 1, 2, kw_restore, {NULL}};

static PyObject *SortedSet_restore(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames) {
    PyObject *a[2];
    int raw;
    if (py_parse(&spec_restore, args, nargs, kwnames, a) < 0 || (raw = py_truth(a[1])) < 0)
        return NULL;
    PyObject *data = a[0];
    if (!PyBytes_Check(data) && !PyByteArray_Check(data) && !PyMemoryView_Check(data)) {
        PyErr_Format(PyExc_TypeError, "snapshot must be bytes, not %.200s",
                     Py_TYPE(data)->tp_name);
        return NULL;
    }
    PyObject *bytes = PyBytes_Check(data) ? Py_NewRef(data) : PyBytes_FromObject(data);
    if (!bytes)
        return NULL;
    PyObject *out = ss_restore((const unsigned char *)PyBytes_AS_STRING(bytes),
                               (size_t)PyBytes_GET_SIZE(bytes), raw);
    Py_DECREF(bytes);
    return out;
}

/* copy.copy(s) and copy.deepcopy(s, memo): both are s.copy(), as members
 * and scores are immutable (the memo needs nothing from a set). */
static PyObject *SortedSet_deepcopy(PyObject *self, PyObject *memo) {
    return SortedSet_copy(self, NULL);
}

/* __reduce__: (SortedSet, (), (snapshot bytes, raw)), so pickle (any
 * protocol) makes an empty set and hands the state to __setstate__. New
 * reference, or NULL. Runs no Python code. */
static PyObject *SortedSet_reduce(PyObject *self, PyObject *unused) {
    PyObject *data = SortedSet_snapshot(self, NULL);
    if (!data)
        return NULL;
    return Py_BuildValue("(O()(NO))", (PyObject *)Py_TYPE(self), data,
                         ((SortedSetObject *)self)->raw ? Py_True : Py_False);
}

/* __setstate__((snapshot bytes, raw)): the set's contents become the
 * snapshot's and its raw flag `raw`. The state is converted (raw's __bool__
 * is the only Python code run) and the snapshot parsed into a new set
 * before this one changes, so a bad state (TypeError, SnapshotError) leaves
 * it as it was. The two zsets are then swapped by value (a zset holds no
 * pointer to itself) and the old contents freed with the new set; the
 * modcount moves past both sets' counts, so every cursor on this set
 * re-seeks from its point. None, or NULL with an exception. */
static PyObject *SortedSet_setstate(PyObject *self, PyObject *state) {
    if (!PyTuple_Check(state) || PyTuple_GET_SIZE(state) != 2 ||
        !PyBytes_Check(PyTuple_GET_ITEM(state, 0))) {
        PyErr_SetString(PyExc_TypeError, "SortedSet state must be a (snapshot bytes, raw) tuple");
        return NULL;
    }
    int raw = PyObject_IsTrue(PyTuple_GET_ITEM(state, 1));
    if (raw < 0)
        return NULL;
    PyObject *data = PyTuple_GET_ITEM(state, 0); /* kept alive by the tuple */
    SortedSetObject *fresh = (SortedSetObject *)ss_restore(
        (const unsigned char *)PyBytes_AS_STRING(data), (size_t)PyBytes_GET_SIZE(data), raw);
    if (!fresh)
        return NULL;
    SortedSetObject *s = (SortedSetObject *)self;
    uint64_t mc = s->z.modcount > fresh->z.modcount ? s->z.modcount : fresh->z.modcount;
    zset old = s->z;
    s->z = fresh->z;
    fresh->z = old;
    s->z.modcount = mc + 1;
    s->raw = raw;
    Py_DECREF(fresh); /* frees the old contents; runs no Python code */
    Py_RETURN_NONE;
}

static PyObject *SortedSet_memory_usage(PyObject *self, PyObject *unused) {
    SortedSetObject *s = (SortedSetObject *)self;
    size_t edge = s->edge ? 2 * ZSET_EDGE * sizeof(PyObject *) : 0;
    return PyLong_FromSize_t(sizeof(SortedSetObject) + s->z.bytes + edge);
}

static PyObject *SortedSet_check(PyObject *self, PyObject *unused) {
    char msg[256];
    if (zset_check(&((SortedSetObject *)self)->z, msg, sizeof msg) < 0) {
        PyErr_SetString(PyExc_AssertionError, msg);
        return NULL;
    }
    Py_RETURN_NONE;
}

/* ==== type objects ======================================================== */

#define FASTKW (METH_FASTCALL | METH_KEYWORDS)
/* A METH_FASTCALL function as PyMethodDef stores it (cast through void (*)(void)). */
#define FASTCALL_FN(f) ((PyCFunction)(void (*)(void))(f))

static PyMethodDef SortedSet_methods[] = {
    {"clear", SortedSet_clear, METH_NOARGS, "Remove every member. O(n). Redis: DEL."},
    {"add", FASTCALL_FN(SortedSet_add), FASTKW,
     "Add or update one member. O(log n). Redis: ZADD [NX|XX] [GT|LT] [CH]."},
    {"add_many", FASTCALL_FN(SortedSet_add_many), FASTKW,
     "ZADD with many pairs, applied in order. O(k log n). Redis: ZADD."},
    {"incr", FASTCALL_FN(SortedSet_incr), FASTKW,
     "Add amount to the member's score; the new score or None. O(log n). Redis: ZINCRBY."},
    {"remove", FASTCALL_FN(SortedSet_remove), METH_FASTCALL,
     "Remove the members; how many existed. O(k log n). Redis: ZREM."},
    {"load", FASTCALL_FN(SortedSet_load), FASTKW,
     "Bulk add; how many were new. O(n) for ascending input into an empty set, O(n log n) "
     "otherwise (other input into an empty set is sorted, then appended). Redis: ZADD."},
    {"score", FASTCALL_FN(SortedSet_score), FASTKW,
     "The member's score, or None. O(1). Redis: ZSCORE."},
    {"scores", FASTCALL_FN(SortedSet_scores), FASTKW,
     "Scores of many members, None for missing ones. O(k). Redis: ZMSCORE."},
    {"index", FASTCALL_FN(SortedSet_index), FASTKW,
     "0-based position (descending with reverse), or None. O(log n). Redis: ZRANK/ZREVRANK."},
    {"rank", FASTCALL_FN(SortedSet_rank), FASTKW,
     "1-based rank in a style (unique/competition/dense), or None. O(log n)."},
    {"at", FASTCALL_FN(SortedSet_at), FASTKW,
     "(member, score) at a 0-based index. O(log n). Redis: ZRANGE key i i WITHSCORES."},
    {"range_by_index", FASTCALL_FN(SortedSet_range_by_index), FASTKW,
     "Pairs from start to stop inclusive. O(log n + k). Redis: ZRANGE [REV] WITHSCORES."},
    {"range_around", FASTCALL_FN(SortedSet_range_around), FASTKW,
     "(index, window of up to before+after+1 pairs) around a member, or None. O(log n + k). "
     "Redis: ZREVRANK + ZRANGE (two commands)."},
    {"range_by_score", FASTCALL_FN(SortedSet_range_by_score), FASTKW,
     "Pairs in a score range. O(log n + k). Redis: ZRANGE BYSCORE [REV] [LIMIT]."},
    {"range_by_lex", FASTCALL_FN(SortedSet_range_by_lex), FASTKW,
     "Pairs in a member range. O(log n + k). Redis: ZRANGE BYLEX [REV] [LIMIT]."},
    {"count_by_score", FASTCALL_FN(SortedSet_count_by_score), FASTKW,
     "Members in a score range. O(log n). Redis: ZCOUNT."},
    {"count_by_lex", FASTCALL_FN(SortedSet_count_by_lex), FASTKW,
     "Members in a lex range. O(log n). Redis: ZLEXCOUNT."},
    {"items", FASTCALL_FN(SortedSet_items), FASTKW,
     "Cursor over (member, score) pairs, safe while the set changes. O(1) per step."},
    {"items_after", FASTCALL_FN(SortedSet_items_after), FASTKW,
     "Up to count pairs strictly after (score, member). O(log n + count)."},
    {"remove_range_by_index", FASTCALL_FN(SortedSet_remove_range_by_index), FASTKW,
     "Remove an index range. O(log n + k). Redis: ZREMRANGEBYRANK."},
    {"remove_range_by_score", FASTCALL_FN(SortedSet_remove_range_by_score), FASTKW,
     "Remove a score range. O(log n + k). Redis: ZREMRANGEBYSCORE."},
    {"remove_range_by_lex", FASTCALL_FN(SortedSet_remove_range_by_lex), FASTKW,
     "Remove a lex range. O(log n + k). Redis: ZREMRANGEBYLEX."},
    {"pop_min", FASTCALL_FN(SortedSet_pop_min), FASTKW,
     "Remove and return up to count lowest pairs. O(k log n). Redis: ZPOPMIN."},
    {"pop_max", FASTCALL_FN(SortedSet_pop_max), FASTKW,
     "Remove and return up to count highest pairs. O(k log n). Redis: ZPOPMAX."},
    {"random_member", SortedSet_random_member, METH_NOARGS,
     "One uniformly random pair, or None. O(log n). Redis: ZRANDMEMBER."},
    {"random_members", FASTCALL_FN(SortedSet_random_members), FASTKW,
     "ZRANDMEMBER key count WITHSCORES. O(|count| log n)."},
    {"union", FASTCALL_FN(SortedSet_union), FASTKW | METH_CLASS,
     "Union with weights and SUM/MIN/MAX. O(N log N). Redis: ZUNION."},
    {"inter", FASTCALL_FN(SortedSet_inter), FASTKW | METH_CLASS,
     "Intersection with weights and SUM/MIN/MAX. Redis: ZINTER."},
    {"diff", FASTCALL_FN(SortedSet_diff), FASTKW | METH_CLASS,
     "Members of the first set in none of the others. Redis: ZDIFF."},
    {"copy", SortedSet_copy, METH_NOARGS, "An independent copy. O(n). Redis: COPY."},
    {"__copy__", SortedSet_copy, METH_NOARGS, "copy.copy(s): as s.copy(). O(n)."},
    {"__deepcopy__", SortedSet_deepcopy, METH_O,
     "copy.deepcopy(s): as s.copy() (members and scores are immutable). O(n)."},
    {"__reduce__", SortedSet_reduce, METH_NOARGS,
     "Pickle support: (SortedSet, (), (snapshot, raw)). O(n)."},
    {"__setstate__", SortedSet_setstate, METH_O,
     "Pickle support: the contents become those of a (snapshot, raw) state. O(n)."},
    {"snapshot", SortedSet_snapshot, METH_NOARGS, "Serialise to bytes. O(n). Redis: DUMP."},
    {"restore", FASTCALL_FN(SortedSet_restore), FASTKW | METH_CLASS,
     "Rebuild from snapshot() bytes. O(n). Redis: RESTORE."},
    {"memory_usage", SortedSet_memory_usage, METH_NOARGS,
     "Allocator bytes held by the structure. O(1). Redis: MEMORY USAGE."},
    {"_check", SortedSet_check, METH_NOARGS, "Verify every invariant. O(n)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef SortedSet_getset[] = {
    {"raw", SortedSet_get_raw, NULL, "True when members are returned as bytes.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PySequenceMethods SortedSet_as_sequence = {
    .sq_length = SortedSet_len,
    .sq_contains = SortedSet_contains,
};

static PyMappingMethods SortedSet_as_mapping = {
    .mp_length = SortedSet_len,
    .mp_subscript = SortedSet_subscript,
};

PyTypeObject SortedSetType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ranked.engine._zset.SortedSet",
    .tp_basicsize = sizeof(SortedSetObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A Redis-style sorted set (C engine). Its contract is the docstring of "
               "ranked.engine.skiplist.SortedSet.",
    .tp_new = SortedSet_tp_new,
    .tp_init = SortedSet_init,
    .tp_dealloc = SortedSet_dealloc,
    .tp_repr = SortedSet_repr,
    .tp_iter = SortedSet_iter,
    .tp_as_sequence = &SortedSet_as_sequence,
    .tp_as_mapping = &SortedSet_as_mapping,
    .tp_methods = SortedSet_methods,
    .tp_getset = SortedSet_getset,
};

static PyTypeObject ZIterType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ranked.engine._zset.SortedSetIterator",
    .tp_basicsize = sizeof(ZIterObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Cursor over a SortedSet; survives changes to the set.",
    .tp_dealloc = ZIter_dealloc,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = ZIter_next,
};

/* keys_with_prefix(mapping, prefix) -> list: the bytes keys of the dict `mapping` that
 * start with the bytes `prefix`, in the dict's order (the keyspace's scan for one board's
 * keys among every key of the process). Keys that are not bytes are skipped. O(len(mapping))
 * memcmp calls and no call back into Python while it holds the dict's borrowed keys, so the
 * dict cannot change under it. Returns a new list (new references to its keys), or NULL
 * with TypeError for a wrong argument or MemoryError. */
static PyObject *zset_keys_with_prefix(PyObject *Py_UNUSED(module), PyObject *const *args,
                                       Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "keys_with_prefix(mapping, prefix) takes 2 arguments");
        return NULL;
    }
    PyObject *mapping = args[0], *prefix = args[1];
    if (!PyDict_Check(mapping) || !PyBytes_Check(prefix)) {
        PyErr_SetString(PyExc_TypeError, "keys_with_prefix takes a dict and a bytes prefix");
        return NULL;
    }
    const char *head = PyBytes_AS_STRING(prefix);
    Py_ssize_t size = PyBytes_GET_SIZE(prefix);
    PyObject *found = PyList_New(0);
    if (found == NULL)
        return NULL;
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(mapping, &pos, &key, &value)) {
        if (PyBytes_Check(key) && PyBytes_GET_SIZE(key) >= size &&
            memcmp(PyBytes_AS_STRING(key), head, (size_t)size) == 0 &&
            PyList_Append(found, key) < 0) {
            Py_DECREF(found);
            return NULL;
        }
    }
    return found;
}

static PyMethodDef zset_functions[] = {
    {"keys_with_prefix", FASTCALL_FN(zset_keys_with_prefix), METH_FASTCALL,
     "keys_with_prefix(mapping, prefix): the bytes keys of a dict starting with prefix. "
     "O(len(mapping))."},
    {NULL},
};

static struct PyModuleDef zset_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "ranked.engine._zset",
    .m_doc = "C engine of ranked: a skip list with spans and a seeded hash table.",
    .m_size = -1,
    .m_methods = zset_functions,
};

/* The engine's C API (zset_capi.h), published as a capsule by PyInit__zset. */
static zset_capi_t zset_capi = {
    .version = ZSET_CAPI_VERSION,
    .sorted_set_type = &SortedSetType,
    .hash = zdict_hash,
    .find = zset_find,
    .lookup = zset_lookup,
    .insert = zset_insert,
    .remove = zset_delete,
    .set_score = zset_set_score,
    .move = zset_move,
    .rank = zset_rank,
    .count_below = zset_count_below,
};

/* Borrow-free lookup of module.attr; new reference or NULL. */
static PyObject *import_attr(const char *module, const char *attr) {
    PyObject *mod = PyImport_ImportModule(module);
    if (!mod)
        return NULL;
    PyObject *value = PyObject_GetAttrString(mod, attr);
    Py_DECREF(mod);
    return value;
}

/* Module init: import the error classes, ready the types, add SortedSet
 * and the C API capsule (_C_API). NULL with an exception on failure. */
PyMODINIT_FUNC PyInit__zset(void) {
    zsl_rand_init();
    if (!InvalidScoreError && !(InvalidScoreError = import_attr("ranked.errors", "InvalidScoreError")))
        return NULL;
    if (!SnapshotError && !(SnapshotError = import_attr("ranked.errors", "SnapshotError")))
        return NULL;
    if (!MappingABC && !(MappingABC = import_attr("collections.abc", "Mapping")))
        return NULL;
    if (!SequenceABC && !(SequenceABC = import_attr("collections.abc", "Sequence")))
        return NULL;
    static const char *const styles[] = {"unique", "competition", "dense"};
    for (int i = 0; i < 3; i++)
        if (!style_names[i] && !(style_names[i] = PyUnicode_InternFromString(styles[i])))
            return NULL;
    if (PyType_Ready(&SortedSetType) < 0 || PyType_Ready(&ZIterType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&zset_module);
    if (!m)
        return NULL;
    if (PyModule_AddObjectRef(m, "SortedSet", (PyObject *)&SortedSetType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    PyObject *capi = PyCapsule_New(&zset_capi, ZSET_CAPI_NAME, NULL);
    int added = capi ? PyModule_AddObjectRef(m, "_C_API", capi) : -1;
    Py_XDECREF(capi);
    if (added < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
