/* board_method.c - BoardSubmit: `board.submit` of a memory board that can
 * use a BoardWriter (board_fast.c), as one C call from the caller's frame.
 *
 * ranked.leaderboard.Leaderboard puts one in its instance __dict__ under
 * "submit", so `board.submit(...)` reaches it instead of the class's method
 * (a function is a non-data descriptor: the instance attribute wins). It
 * accepts the method's signature, (member, score, *, operator=None, at=None,
 * tie=None); for a plain call it runs the writer, and for anything else
 * (another argument shape, a given `at` or `tie`, no writer yet, the writer
 * answering None) it calls `fallback`, the class's method bound to the
 * board, with the arguments exactly as received. The fallback is the
 * reference behaviour; this object only skips a Python frame.
 */
#include "native.h"

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *fallback; /* the bound Leaderboard.submit */
    PyObject *writer;   /* a BoardWriter, or NULL while the board has none */
} BoardSubmitObject;

static PyObject *name_operator, *name_at, *name_tie; /* interned keyword names */

/* 1 when `name` (a keyword of the call) is `want` (interned); compares
 * pointers first, as keywords of calls are interned. */
static int bs_is(PyObject *name, PyObject *want) {
    return name == want || PyUnicode_Compare(name, want) == 0;
}

/* The call: the writer's Submission, or the fallback's result. New
 * reference, or NULL with an exception (the writer's or the fallback's).
 * The writer and the fallback are called through strong references taken
 * here: the writer runs Python code (its housekeeping, the lock's `locked`)
 * that may set `writer` to None, dropping what b->writer held. The
 * arguments are the caller's, alive for the call. */
static PyObject *BoardSubmit_call(PyObject *self, PyObject *const *args, size_t nargsf,
                                  PyObject *kwnames) {
    BoardSubmitObject *b = (BoardSubmitObject *)self;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (!b->fallback) { /* only after the collector cleared it */
        PyErr_SetString(PyExc_TypeError, "BoardSubmit has no fallback");
        return NULL;
    }
    if (b->writer && nargs == 2) {
        PyObject *op = Py_None;
        int plain = 1;
        Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
        for (Py_ssize_t i = 0; i < nkw && plain; i++) {
            PyObject *name = PyTuple_GET_ITEM(kwnames, i), *value = args[nargs + i];
            if (bs_is(name, name_operator))
                op = value;
            else if (!(bs_is(name, name_at) || bs_is(name, name_tie)) || value != Py_None)
                plain = 0;
        }
        if (PyErr_Occurred())
            return NULL;
        if (plain) {
            PyObject *writer = Py_NewRef(b->writer);
            PyObject *call[3] = {args[0], args[1], op};
            PyObject *done = PyObject_Vectorcall(writer, call, 3, NULL);
            Py_DECREF(writer);
            if (done != Py_None)
                return done; /* the Submission, or NULL with the writer's error */
            Py_DECREF(done);
        }
    }
    PyObject *fallback = Py_NewRef(b->fallback);
    PyObject *result = PyObject_Vectorcall(fallback, args, nargsf, kwnames);
    Py_DECREF(fallback);
    return result;
}

/* BoardSubmit(fallback): no writer yet; new reference, or NULL with
 * TypeError. */
static PyObject *BoardSubmit_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"fallback", NULL};
    PyObject *fallback;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O:BoardSubmit", kwlist, &fallback))
        return NULL;
    if (!PyCallable_Check(fallback)) {
        PyErr_SetString(PyExc_TypeError, "fallback must be callable");
        return NULL;
    }
    BoardSubmitObject *b = (BoardSubmitObject *)type->tp_alloc(type, 0);
    if (!b)
        return NULL;
    b->vectorcall = BoardSubmit_call;
    b->fallback = Py_NewRef(fallback);
    b->writer = NULL;
    return (PyObject *)b;
}

/* GC: visit the fallback and the writer. */
static int BoardSubmit_traverse(BoardSubmitObject *b, visitproc visit, void *arg) {
    Py_VISIT(b->fallback);
    Py_VISIT(b->writer);
    return 0;
}

/* GC: drop the fallback and the writer. */
static int BoardSubmit_clear(BoardSubmitObject *b) {
    Py_CLEAR(b->fallback);
    Py_CLEAR(b->writer);
    return 0;
}

/* Untrack, drop the references, free. */
static void BoardSubmit_dealloc(BoardSubmitObject *b) {
    PyObject_GC_UnTrack(b);
    BoardSubmit_clear(b);
    Py_TYPE(b)->tp_free((PyObject *)b);
}

/* writer getter: the BoardWriter in use, or None. */
static PyObject *BoardSubmit_get_writer(BoardSubmitObject *b, void *closure) {
    return Py_NewRef(b->writer ? b->writer : Py_None);
}

/* writer setter: a callable, or None (or deletion) for "always the fallback";
 * 0, or -1 with TypeError. */
static int BoardSubmit_set_writer(BoardSubmitObject *b, PyObject *value, void *closure) {
    if (value && value != Py_None && !PyCallable_Check(value)) {
        PyErr_SetString(PyExc_TypeError, "writer must be callable or None");
        return -1;
    }
    Py_XSETREF(b->writer, value && value != Py_None ? Py_NewRef(value) : NULL);
    return 0;
}

/* __wrapped__ (what inspect.signature follows) and __doc__: the fallback's. */
static PyObject *BoardSubmit_get_wrapped(BoardSubmitObject *b, void *closure) {
    if (!b->fallback) {
        PyErr_SetString(PyExc_AttributeError, "__wrapped__");
        return NULL;
    }
    return Py_NewRef(b->fallback);
}

/* __doc__: the fallback method's docstring, or None without a fallback. */
static PyObject *BoardSubmit_get_doc(BoardSubmitObject *b, void *closure) {
    if (!b->fallback)
        Py_RETURN_NONE;
    return PyObject_GetAttrString(b->fallback, "__doc__");
}

static PyGetSetDef BoardSubmit_getset[] = {
    {"writer", (getter)BoardSubmit_get_writer, (setter)BoardSubmit_set_writer,
     "The BoardWriter in use, or None: every call goes to the fallback.", NULL},
    {"__wrapped__", (getter)BoardSubmit_get_wrapped, NULL, "The bound method it stands for.",
     NULL},
    {"__doc__", (getter)BoardSubmit_get_doc, NULL, NULL, NULL},
    {NULL},
};

static PyTypeObject BoardSubmitType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ranked.backends.native._native.BoardSubmit",
    .tp_basicsize = sizeof(BoardSubmitObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = BoardSubmit_new,
    .tp_dealloc = (destructor)BoardSubmit_dealloc,
    .tp_traverse = (traverseproc)BoardSubmit_traverse,
    .tp_clear = (inquiry)BoardSubmit_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(BoardSubmitObject, vectorcall),
    .tp_getset = BoardSubmit_getset,
};

/* Adds BoardSubmit to module m; 0, or -1 with an exception. */
int board_method_add_to_module(PyObject *m) {
    if (!(name_operator = PyUnicode_InternFromString("operator")) ||
        !(name_at = PyUnicode_InternFromString("at")) ||
        !(name_tie = PyUnicode_InternFromString("tie")))
        return -1;
    if (PyType_Ready(&BoardSubmitType) < 0)
        return -1;
    return PyModule_AddObjectRef(m, "BoardSubmit", (PyObject *)&BoardSubmitType);
}
