/* _zset_object.h - the SortedSet object as C code outside _zset.c sees it:
 * the memory backend's native procedures (ranked.backends.native._native)
 * read and write its zset through the engine's C API (zset_capi.h).
 */
#ifndef RANKED_ZSET_OBJECT_H
#define RANKED_ZSET_OBJECT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "zsl.h"

typedef struct {
    PyObject_HEAD
    zset z;
    int raw;        /* 1: members come back as bytes, 0: as str */
    PyObject **edge; /* NULL, or the rows last returned at the set's ends (_zset.c) */
} SortedSetObject;

/* A 2-tuple (a, b) that steals both references; NULL (with both dropped)
 * when either is NULL or the tuple cannot be made. */
static inline PyObject *py_tuple2(PyObject *a, PyObject *b) {
    if (!a || !b) {
        Py_XDECREF(a);
        Py_XDECREF(b);
        return NULL;
    }
    PyObject *t = PyTuple_New(2);
    if (!t) {
        Py_DECREF(a);
        Py_DECREF(b);
        return NULL;
    }
    PyTuple_SET_ITEM(t, 0, a);
    PyTuple_SET_ITEM(t, 1, b);
    return t;
}

/* The SortedSet type; PyObject_TypeCheck(o, &SortedSetType) before casting.
 * Outside the engine's module it names the pointer of the C API (native.h). */
#ifndef RANKED_ZSET_CAPI
extern PyTypeObject SortedSetType;
#endif

#endif
