/* board_common.h - what the board's one-call writer (board_fast.c) and
 * reader (board_read.c) share: the rank styles by name, their argument
 * checks and the member's bytes. Static inline: each file gets its own
 * copy, and no symbol is exported. Include after native.h.
 */
#ifndef RANKED_BOARD_COMMON_H
#define RANKED_BOARD_COMMON_H

#include "native.h"
#include "zsl_board.h"

#include <string.h>

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

#endif
