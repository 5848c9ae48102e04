/* native.h - what the memory backend's native procedures share.
 *
 * They are built into ranked.backends.native._native, a module apart from
 * the engine, and reach the engine's sorted sets only through its C API
 * (engine/zset_capi.h), imported once by the module's init: every zset_*
 * call and SortedSetType below goes through that table.
 */
#ifndef RANKED_NATIVE_H
#define RANKED_NATIVE_H

#include "_zset_object.h" /* Python.h first: it sets the POSIX feature macros */
#include "zset_api.h"
#include <structmember.h>

/* Adds one procedure family's types and functions to the module `m`; 0 on
 * success, -1 with an exception set. Called once by PyInit__native, after
 * the engine's C API is imported. */
typedef int (*native_extension)(PyObject *m);

/* Calls `release` (a lock's bound release method) keeping any exception
 * already set: `result` passes through (stolen, returned), or is dropped
 * and NULL returned when the release fails (the exception already set, if
 * any, wins over the release's). Runs Python code. */
static inline PyObject *native_release(PyObject *release, PyObject *result) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyObject *r = PyObject_CallNoArgs(release);
    if (!r) {
        Py_XDECREF(result);
        if (type) {
            PyErr_Clear();
            PyErr_Restore(type, value, tb);
        }
        return NULL;
    }
    Py_DECREF(r);
    PyErr_Restore(type, value, tb);
    return result;
}

/* Byte offset of the writable object slot `name` of `type` (a __slots__
 * field), for reading and writing instances of it from C; -1 with TypeError
 * when `name` is not one. Runs no Python code. */
static inline Py_ssize_t native_slot_offset(PyTypeObject *type, PyObject *name) {
    PyObject *descr = PyDict_GetItemWithError(type->tp_dict, name);
    if (descr && Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
        PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
        if (member->type == T_OBJECT_EX && !(member->flags & READONLY))
            return member->offset;
    }
    if (!PyErr_Occurred())
        PyErr_Format(PyExc_TypeError, "%R is not a __slots__ field of %s", name, type->tp_name);
    return -1;
}

/* The attribute `name` of `owner` (a bound method, kept to call later) in
 * *field as a new reference; 0, or -1 with an exception set. Runs Python code
 * (the attribute lookup). */
static inline int native_method(PyObject **field, PyObject *owner, const char *name) {
    *field = PyObject_GetAttrString(owner, name);
    return *field ? 0 : -1;
}

/* rl_fast.c: the memory rate limiter's decision, RateDecider. */
int rl_fast_add_to_module(PyObject *m);

/* board_fast.c: BoardWriter (the memory backend's one-call board submit)
 * and board_rank. */
int board_fast_add_to_module(PyObject *m);

/* board_read.c: BoardReader (the memory backend's one-call read of a
 * member's entry on a plain board). */
int board_read_add_to_module(PyObject *m);

/* board_method.c: BoardSubmit (a board's `submit` as one C call). */
int board_method_add_to_module(PyObject *m);

/* queue_lane.c: the QueueLane type (a memory queue's push and pop). */
int queue_lane_add_to_module(PyObject *m);

/* ready.c: AwaitNow (a call made awaitable without a coroutine) and Ready. */
int ready_add_to_module(PyObject *m);

/* guard_check.c: GuardCheck (the write guard's check step). */
int guard_check_add_to_module(PyObject *m);

/* locked.c: Locked (a step's Python reference run under the backend's lock). */
int locked_add_to_module(PyObject *m);

#endif
