/* board_common.h - what the board's one-call writer (board_fast.c) and
 * reader (board_read.c) share: the rank styles by name, their argument
 * checks, the member's bytes and the lookup of the board's set. Static:
 * each file gets its own copy, and no symbol is exported. Include after
 * native.h; each file interns the table names (board_names_init) when its
 * module part is added.
 */
#ifndef RANKED_BOARD_COMMON_H
#define RANKED_BOARD_COMMON_H

#include "native.h"
#include "zsl_board.h"

#include <string.h>

static PyObject *name_values;    /* interned "_values" */
static PyObject *name_deadlines; /* interned "_deadlines" */

/* Intern the keyspace's table names: 0, or -1 with an exception. */
static inline int board_names_init(void) {
    if (!(name_values = PyUnicode_InternFromString("_values")) ||
        !(name_deadlines = PyUnicode_InternFromString("_deadlines")))
        return -1;
    return 0;
}

/* The ZBOARD_* style named `style`, or -1 (no exception set). */
static inline int board_style(const char *style) {
    static const char *const names[3] = {"unique", "competition", "dense"};
    for (int i = 0; i < 3; i++)
        if (strcmp(style, names[i]) == 0)
            return i;
    return -1;
}

/* A tuple subclass whose instances are plain tuples (a NamedTuple: no
 * __dict__, no extra slots)? 0, or -1 with TypeError naming `what`. */
static inline int board_check_tuple_type(PyObject *t, const char *what) {
    if (!PyType_Check(t) || !PyType_IsSubtype((PyTypeObject *)t, &PyTuple_Type) ||
        ((PyTypeObject *)t)->tp_basicsize != PyTuple_Type.tp_basicsize ||
        ((PyTypeObject *)t)->tp_dictoffset != 0) {
        PyErr_Format(PyExc_TypeError, "%s must be a NamedTuple class", what);
        return -1;
    }
    return 0;
}

/* `key` as an exact bytes object (a new reference: `key` itself, or a plain
 * copy of a subclass, whose __hash__ / __eq__ would otherwise run in the
 * middle of table lookups); NULL with an exception. `key` is a bytes. */
static inline PyObject *board_own_bytes(PyObject *key) {
    if (PyBytes_CheckExact(key))
        return Py_NewRef(key);
    return PyBytes_FromStringAndSize(PyBytes_AS_STRING(key), PyBytes_GET_SIZE(key));
}

/* The member's key bytes, borrowed from `member` (an exact str, as strict
 * UTF-8 like str.encode(), or an exact bytes) into *m and *len: 1; 0 with
 * no exception set for anything else (another type, a str that is not
 * UTF-8, longer than the engine takes): the general path then answers. */
static inline int board_member_bytes(PyObject *member, const char **m, Py_ssize_t *len) {
    if (PyUnicode_CheckExact(member) && PyUnicode_IS_COMPACT_ASCII(member)) {
        *m = (const char *)PyUnicode_DATA(member);
        *len = PyUnicode_GET_LENGTH(member);
    } else if (PyUnicode_CheckExact(member)) {
        *m = PyUnicode_AsUTF8AndSize(member, len);
        if (!*m) {
            PyErr_Clear();
            return 0;
        }
    } else if (PyBytes_CheckExact(member)) {
        *m = PyBytes_AS_STRING(member);
        *len = PyBytes_GET_SIZE(member);
    } else {
        return 0;
    }
    return (size_t)*len <= ZSL_MAX_MEMBER_LEN;
}

/* What a lookup of the board's set found: strong references the caller
 * drops with board_release once its read or write is done (so no table, and
 * no value a table held, is freed, running finalisers, between the lookup
 * and the use). */
typedef struct {
    PyObject *values, *deadlines; /* the keyspace's tables, or NULL */
    PyObject *seq;                /* the writer's applied-event number (sequenced), or NULL */
    SortedSetObject *set;         /* the set, or NULL: not here */
} board_found;

/* Drop what the lookup took. Runs no Python code unless a table or the set
 * was replaced meanwhile (then its finalisers may run): call it last. */
static inline void board_release(board_found *f) {
    Py_XDECREF(f->set);
    Py_XDECREF(f->seq);
    Py_XDECREF(f->deadlines);
    Py_XDECREF(f->values);
}

/* Take the keyspace's tables (kvars: its instance __dict__) into *f, with
 * f->set and f->seq NULL: 1 when both are plain dicts and `key` has no
 * deadline (Keyspace.zset_fast's test), so that its set may be looked up;
 * else 0. Either way the caller later calls board_release(f). A lookup may
 * run Python code (the __eq__ of a stored key that hashes like `key`): each
 * table is held while it is looked up. May leave an exception set. */
static inline int board_tables(PyObject *kvars, PyObject *key, board_found *f) {
    f->set = NULL;
    f->seq = NULL;
    f->values = Py_XNewRef(PyDict_GetItemWithError(kvars, name_values));
    f->deadlines = f->values ? Py_XNewRef(PyDict_GetItemWithError(kvars, name_deadlines)) : NULL;
    return f->values && f->deadlines && PyDict_CheckExact(f->values) &&
           PyDict_CheckExact(f->deadlines) &&
           !(PyDict_GET_SIZE(f->deadlines) && PyDict_Contains(f->deadlines, key) != 0);
}

/* f->set: the live, non-empty sorted set at `key` in f->values (strong), or
 * NULL. Look it up last: it is then the set stored once every key
 * comparison has run, and nothing runs between taking it and its use. May
 * leave an exception set. */
static inline void board_set(board_found *f, PyObject *key) {
    PyObject *v = PyDict_GetItemWithError(f->values, key);
    if (v && Py_TYPE(v) == &SortedSetType && ((SortedSetObject *)v)->z.length > 0)
        f->set = (SortedSetObject *)Py_NewRef(v);
}

#endif
