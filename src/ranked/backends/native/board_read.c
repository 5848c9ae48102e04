/* board_read.c - BoardReader: the memory backend's one-call read of one
 * member's entry (score and rank) on the common leaderboard (one all-time
 * window, plain scores), the read twin of board_fast.c's BoardWriter.
 *
 * A reader is built once per board (ranked/backends/native/board.py, the
 * factory of the board's plain-entry step) and called as reader(member). It
 * answers the member's Entry(member, score, rank, None), built as the board's
 * general path builds it; None when the member is not on the board; or
 * False, having read nothing, when anything is unusual (another member
 * type, the key missing, empty, expiring or of another type, the backend's
 * lock held): the caller then runs the general path, which raises the usual
 * errors or takes the lock and waits.
 *
 * Atomicity: as the writer's. Python code that changes the keyspace holds
 * the backend's lock; the reader checks that nobody holds it, then looks up
 * and ranks without running any Python code and without releasing the GIL,
 * so it never sees a step half done.
 */
#include "board_common.h"

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *kvars;          /* the keyspace's instance __dict__ */
    PyObject *key;            /* exact bytes: the window's sorted-set key */
    PyObject *locked;         /* the backend lock's bound `locked` */
    PyTypeObject *entry_type; /* Entry: a 4-field tuple subclass */
    int reverse;
    int style;
} BoardReaderObject;

static PyObject *BoardReader_call(PyObject *self, PyObject *const *args, size_t nargsf,
                                  PyObject *kwnames);

/* BoardReader(keyspace_vars, key, reverse, style, lock, entry_type): see
 * _native.pyi and ranked/backends/native/board.py. New reference, or NULL
 * with TypeError / ValueError. Keeps an exact bytes copy of `key`, so that
 * its lookups run no code of a bytes subclass. */
static PyObject *BoardReader_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"keyspace_vars", "key", "reverse", "style", "lock", "entry_type",
                             NULL};
    PyObject *kvars, *key, *lock, *etype;
    const char *style;
    int reverse;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!O!psOO:BoardReader", kwlist, &PyDict_Type,
                                     &kvars, &PyBytes_Type, &key, &reverse, &style, &lock,
                                     &etype))
        return NULL;
    int s = board_style(style);
    if (s < 0) {
        PyErr_Format(PyExc_ValueError, "unknown rank style %s", style);
        return NULL;
    }
    if (board_check_tuple_type(etype, "entry_type") < 0)
        return NULL;
    PyObject *locked = PyObject_GetAttrString(lock, "locked");
    if (!locked)
        return NULL;
    PyObject *own_key = board_own_bytes(key);
    BoardReaderObject *r = own_key ? (BoardReaderObject *)type->tp_alloc(type, 0) : NULL;
    if (!r) {
        Py_DECREF(locked);
        Py_XDECREF(own_key);
        return NULL;
    }
    r->vectorcall = BoardReader_call;
    r->kvars = Py_NewRef(kvars);
    r->key = own_key;
    r->locked = locked;
    r->entry_type = (PyTypeObject *)Py_NewRef(etype);
    r->reverse = reverse;
    r->style = s;
    return (PyObject *)r;
}

/* GC: visit every object the reader holds. */
static int BoardReader_traverse(BoardReaderObject *r, visitproc visit, void *arg) {
    Py_VISIT(r->kvars);
    Py_VISIT(r->key);
    Py_VISIT(r->locked);
    Py_VISIT(r->entry_type);
    return 0;
}

/* GC: drop every object the reader holds. */
static int BoardReader_clear(BoardReaderObject *r) {
    Py_CLEAR(r->kvars);
    Py_CLEAR(r->key);
    Py_CLEAR(r->locked);
    Py_CLEAR(r->entry_type);
    return 0;
}

/* Untrack, drop the references, free. */
static void BoardReader_dealloc(BoardReaderObject *r) {
    PyObject_GC_UnTrack(r);
    BoardReader_clear(r);
    Py_TYPE(r)->tp_free((PyObject *)r);
}

/* reader(member) -> Entry | None | False; see the file comment. The caller
 * keeps the reader and the member alive for the call (as any vectorcall
 * caller does); the member's bytes are borrowed from the exact str or bytes
 * argument, and the `locked` call runs before the set is looked up. */
static PyObject *BoardReader_call(PyObject *self, PyObject *const *args, size_t nargsf,
                                  PyObject *kwnames) {
    BoardReaderObject *r = (BoardReaderObject *)self;
    if (kwnames || PyVectorcall_NARGS(nargsf) != 1) {
        PyErr_SetString(PyExc_TypeError, "BoardReader takes (member)");
        return NULL;
    }
    PyObject *member = args[0];
    const char *m;
    Py_ssize_t len;
    if (!board_member_bytes(member, &m, &len))
        Py_RETURN_FALSE;
    PyObject *held = PyObject_CallNoArgs(r->locked);
    if (!held)
        return NULL;
    int free_now = held == Py_False;
    Py_DECREF(held);
    if (!free_now)
        Py_RETURN_FALSE; /* someone is inside the lock: the general path waits for it */
    board_found found;
    if (board_tables(r->kvars, r->key, &found))
        board_set(&found, r->key);
    PyErr_Clear(); /* a failed lookup means "not here" */
    if (!found.set) {
        board_release(&found);
        Py_RETURN_FALSE;
    }
    /* From the end of the set's lookup to the rank no Python code runs. */
    zset *z = &found.set->z;
    zsl_node *x = zset_lookup(z, m, (size_t)len, zdict_hash(m, (size_t)len));
    double score = 0.0;
    size_t rank = 0;
    if (x) {
        score = x->score;
        rank = zboard_rank(z, x, r->style, r->reverse);
    }
    board_release(&found);
    if (!x)
        Py_RETURN_NONE;
    PyObject *items[4] = {Py_NewRef(member), PyFloat_FromDouble(score), PyLong_FromSize_t(rank),
                          Py_NewRef(Py_None)};
    if (!items[1] || !items[2]) {
        for (int i = 0; i < 4; i++)
            Py_XDECREF(items[i]);
        return NULL;
    }
    PyObject *entry = r->entry_type->tp_alloc(r->entry_type, 4);
    if (!entry) {
        for (int i = 0; i < 4; i++)
            Py_DECREF(items[i]);
        return NULL;
    }
    for (int i = 0; i < 4; i++)
        PyTuple_SET_ITEM(entry, i, items[i]);
    return entry;
}

static PyTypeObject BoardReaderType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ranked.backends.native._native.BoardReader",
    .tp_doc = "BoardReader(keyspace_vars, key, reverse, style, lock, entry_type): "
              "reader(member) -> Entry | None (absent) | False (run the general path).",
    .tp_basicsize = sizeof(BoardReaderObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = BoardReader_new,
    .tp_traverse = (traverseproc)BoardReader_traverse,
    .tp_clear = (inquiry)BoardReader_clear,
    .tp_dealloc = (destructor)BoardReader_dealloc,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(BoardReaderObject, vectorcall),
};

/* Adds BoardReader to module m; 0, or -1 with an exception. */
int board_read_add_to_module(PyObject *m) {
    if (board_names_init() < 0)
        return -1;
    if (PyType_Ready(&BoardReaderType) < 0)
        return -1;
    return PyModule_AddObjectRef(m, "BoardReader", (PyObject *)&BoardReaderType);
}
