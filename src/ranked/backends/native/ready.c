/* ready.c - AwaitNow: a callable made awaitable without a coroutine.
 *
 * The asyncio memory backend has nothing to wait for: a bound operation runs
 * at once. Wrapping it in `async def` costs a coroutine per call (about a
 * third of a rate-limit decision). AwaitNow(f) is called like f; the call
 * runs f at once and returns a Ready: an awaitable whose first step returns
 * f's result (StopIteration(value)), or raises f's exception, at the await,
 * as a coroutine would. A result that is itself a coroutine (a step that must
 * wait, handing its waiting over) is returned as it is: awaiting it waits.
 *
 * An AwaitNow keeps the last Ready it returned; when nobody else holds it any
 * more (the caller awaited it and let it go, as `await f(...)` does), the next
 * call fills that one again instead of allocating a new one. Nobody can see
 * the difference: only the AwaitNow holds it.
 */
#include "native.h"

#include <structmember.h>

/* -- Ready: an awaitable that is its own iterator ------------------------- */

typedef struct {
    PyObject_HEAD
    PyObject *value; /* owned: the result, or NULL when an exception is held or consumed */
    PyObject *exc_type, *exc_value, *exc_tb; /* owned: the exception to raise, or NULLs */
} ReadyObject;

static PyTypeObject ReadyType;

/* Free a Ready and the result or exception it still holds. */
static void Ready_dealloc(ReadyObject *self) {
    Py_XDECREF(self->value);
    Py_XDECREF(self->exc_type);
    Py_XDECREF(self->exc_value);
    Py_XDECREF(self->exc_tb);
    PyObject_Free(self);
}

/* __await__ / __iter__: the Ready itself (new reference). */
static PyObject *Ready_await(PyObject *self) { return Py_NewRef(self); }

/* __next__: finish with the result (StopIteration carrying it; a plain NULL
 * return for None, which the interpreter reads as StopIteration(None)), or
 * raise the stored exception. A second step finishes with None. */
static PyObject *Ready_next(ReadyObject *self) {
    if (self->exc_type) {
        PyErr_Restore(self->exc_type, self->exc_value, self->exc_tb); /* steals all three */
        self->exc_type = self->exc_value = self->exc_tb = NULL;
        return NULL;
    }
    PyObject *value = self->value;
    self->value = NULL;
    if (value && value != Py_None) {
        /* a tuple or an exception as the value must not be unpacked: wrap it */
        PyObject *stop = PyObject_CallOneArg(PyExc_StopIteration, value);
        Py_DECREF(value);
        if (stop) {
            PyErr_SetObject(PyExc_StopIteration, stop);
            Py_DECREF(stop);
        }
        return NULL;
    }
    Py_XDECREF(value);
    return NULL;
}

/* am_send: what an await of a Ready runs. PYGEN_RETURN with a new reference
 * to the result in *result (None once consumed), no StopIteration made; or
 * PYGEN_ERROR with the stored exception set. The sent value is ignored. */
static PySendResult Ready_send(ReadyObject *self, PyObject *sent, PyObject **result) {
    if (self->exc_type) {
        PyErr_Restore(self->exc_type, self->exc_value, self->exc_tb); /* steals all three */
        self->exc_type = self->exc_value = self->exc_tb = NULL;
        *result = NULL;
        return PYGEN_ERROR;
    }
    *result = self->value ? self->value : Py_NewRef(Py_None);
    self->value = NULL;
    return PYGEN_RETURN;
}

static PyAsyncMethods Ready_async = {
    .am_await = Ready_await,
    .am_send = (sendfunc)Ready_send,
};

static PyTypeObject ReadyType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ranked.backends.native._native.Ready",
    .tp_basicsize = sizeof(ReadyObject),
    .tp_dealloc = (destructor)Ready_dealloc,
    .tp_as_async = &Ready_async,
    .tp_iter = Ready_await,
    .tp_iternext = (iternextfunc)Ready_next,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The finished result of a call made through AwaitNow; await it once.",
};

/* -- AwaitNow: the callable ------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    PyObject *func;          /* owned: what a call runs */
    vectorcallfunc vectorcall;
    ReadyObject *spare;      /* owned: the last Ready returned, or NULL */
} AwaitNowObject;

/* Empty a Ready nobody else holds: drop a result or exception never awaited.
 * Decrefs run no Python code that could reach the Ready (nobody holds it). */
static void Ready_empty(ReadyObject *ready) {
    Py_CLEAR(ready->value);
    Py_CLEAR(ready->exc_type);
    Py_CLEAR(ready->exc_value);
    Py_CLEAR(ready->exc_tb);
}

/* A Ready to fill: the spare one when this AwaitNow alone holds it (emptied),
 * else a new one that becomes the spare. New reference, or NULL with
 * MemoryError set. */
static ReadyObject *AwaitNow_ready(AwaitNowObject *self) {
    ReadyObject *ready = self->spare;
    if (ready && Py_REFCNT(ready) == 1) {
        Ready_empty(ready);
        return (ReadyObject *)Py_NewRef(ready);
    }
    ready = PyObject_New(ReadyObject, &ReadyType);
    if (!ready)
        return NULL;
    ready->value = ready->exc_type = ready->exc_value = ready->exc_tb = NULL;
    Py_XSETREF(self->spare, (ReadyObject *)Py_NewRef(ready));
    return ready;
}

/* Call func with the arguments as given; a Ready holding its result or its
 * exception, or the result itself when it is a coroutine. NULL only when the
 * Ready itself cannot be made. func runs Python code: the call holds func
 * for its duration, and takes the Ready only after func has returned. */
static PyObject *AwaitNow_call(AwaitNowObject *self, PyObject *const *args, size_t nargsf,
                               PyObject *kwnames) {
    PyObject *func = Py_NewRef(self->func);
    PyObject *value = PyObject_Vectorcall(func, args, nargsf, kwnames);
    Py_DECREF(func);
    if (value && PyCoro_CheckExact(value))
        return value;
    PyObject *type = NULL, *exc = NULL, *tb = NULL;
    if (!value)
        PyErr_Fetch(&type, &exc, &tb);
    ReadyObject *ready = AwaitNow_ready(self);
    if (!ready) {
        Py_XDECREF(value);
        Py_XDECREF(type);
        Py_XDECREF(exc);
        Py_XDECREF(tb);
        return NULL;
    }
    ready->value = value;
    ready->exc_type = type;
    ready->exc_value = exc;
    ready->exc_tb = tb;
    return (PyObject *)ready;
}

/* AwaitNow(func): func must be callable; TypeError otherwise. */
static PyObject *AwaitNow_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *func;
    if (kwargs && PyDict_GET_SIZE(kwargs)) {
        PyErr_SetString(PyExc_TypeError, "AwaitNow() takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_UnpackTuple(args, "AwaitNow", 1, 1, &func))
        return NULL;
    if (!PyCallable_Check(func)) {
        PyErr_Format(PyExc_TypeError, "AwaitNow() needs a callable, not %s",
                     Py_TYPE(func)->tp_name);
        return NULL;
    }
    AwaitNowObject *self = (AwaitNowObject *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    self->func = Py_NewRef(func);
    self->spare = NULL;
    self->vectorcall = (vectorcallfunc)AwaitNow_call;
    return (PyObject *)self;
}

/* GC: visit the callable. (The spare Ready is not a GC object; it holds
 * nothing once awaited.) */
static int AwaitNow_traverse(AwaitNowObject *self, visitproc visit, void *arg) {
    Py_VISIT(self->func);
    return 0;
}

/* GC: drop the callable and the spare Ready. */
static int AwaitNow_clear(AwaitNowObject *self) {
    Py_CLEAR(self->func);
    Py_CLEAR(self->spare);
    return 0;
}

/* Untrack, drop the callable, free. */
static void AwaitNow_dealloc(AwaitNowObject *self) {
    PyObject_GC_UnTrack(self);
    AwaitNow_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMemberDef AwaitNow_members[] = {
    {"func", T_OBJECT_EX, offsetof(AwaitNowObject, func), READONLY, "What a call runs."},
    {NULL},
};

static PyTypeObject AwaitNowType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ranked.backends.native._native.AwaitNow",
    .tp_basicsize = sizeof(AwaitNowObject),
    .tp_dealloc = (destructor)AwaitNow_dealloc,
    .tp_vectorcall_offset = offsetof(AwaitNowObject, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "AwaitNow(func): called like func, runs it at once, returns an awaitable of "
              "its result (its exception is raised at the await).",
    .tp_traverse = (traverseproc)AwaitNow_traverse,
    .tp_clear = (inquiry)AwaitNow_clear,
    .tp_members = AwaitNow_members,
    .tp_new = AwaitNow_new,
};

/* Ready both types and add AwaitNow and Ready to the module; 0 or -1. */
int ready_add_to_module(PyObject *m) {
    if (PyType_Ready(&ReadyType) < 0 || PyType_Ready(&AwaitNowType) < 0)
        return -1;
    if (PyModule_AddObjectRef(m, "Ready", (PyObject *)&ReadyType) < 0)
        return -1;
    return PyModule_AddObjectRef(m, "AwaitNow", (PyObject *)&AwaitNowType);
}
