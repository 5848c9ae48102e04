/* _zset_object.h - the SortedSet object as other C files of the _zset
 * extension see it. Feature fast paths (queue lanes, leaderboard submits)
 * live in their own .c files, work on the core (zsl.h) directly, and are
 * added to the module by PyInit__zset through zset_extensions[].
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

/* The SortedSet type; PyObject_TypeCheck(o, &SortedSetType) before casting. */
extern PyTypeObject SortedSetType;

/* Adds one feature's types and functions to the module `m`; 0 on success,
 * -1 with an exception set. Called once, after SortedSetType is ready. */
typedef int (*zset_extension)(PyObject *m);

/* rl_fast.c: the memory rate limiter's decision, RateDecider. */
int rl_fast_add_to_module(PyObject *m);

/* board_fast.c: BoardWriter (the memory backend's one-call board submit)
 * and board_rank. */
int board_fast_add_to_module(PyObject *m);

/* board_method.c: BoardSubmit (a board's `submit` as one C call). */
int board_method_add_to_module(PyObject *m);

/* queue_lane.c: the QueueLane type (a memory queue's push and pop). */
int queue_lane_add_to_module(PyObject *m);

#endif
