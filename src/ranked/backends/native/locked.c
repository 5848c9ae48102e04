/* locked.c - Locked: a step's Python reference run under the backend's lock.
 *
 * The memory backend runs a step that has no native implementation as its
 * reference, reference(keyspace, *args), holding the store's lock. Written in
 * Python that is a closure around `with lock:`, a frame and a context manager
 * per call, a visible share of a cheap read. Locked(reference, keyspace,
 * lock, every, expire) is called with the step's arguments and does the same
 * in C: acquire, (every `every`-th call: expire() first, the backend's active
 * expiry on writes; every = 0 for reads), reference(keyspace, *args),
 * release, whatever the reference raised.
 */
#include "native.h"

#include <structmember.h>

/* What a Locked holds (owned), by index: the reference func(keyspace, *args),
 * its first argument, the lock's bound acquire and release, and the active
 * expiry (a callable, or None). */
enum { FUNC, KEYSPACE, ACQUIRE, RELEASE, EXPIRE, HELD };

typedef struct {
    PyObject_HEAD
    PyObject *held[HELD];
    Py_ssize_t every;   /* housekeeping every this many calls; 0: never */
    Py_ssize_t calls;   /* calls so far, modulo `every` */
    vectorcallfunc vectorcall;
} LockedObject;

/* The reference's argument vector: keyspace, then the call's arguments
 * (keywords' values after them, as vectorcall lays them out). Uses `small`
 * when it fits, else a new block the caller frees with PyMem_Free; NULL with
 * MemoryError set when that block cannot be had. Borrowed pointers only. */
static PyObject **locked_arguments(PyObject *keyspace, PyObject *const *args, Py_ssize_t total,
                                   PyObject **small, Py_ssize_t room) {
    PyObject **stack = small;
    if (total + 1 > room) {
        stack = PyMem_Malloc((size_t)(total + 1) * sizeof(PyObject *));
        if (!stack) {
            PyErr_NoMemory();
            return NULL;
        }
    }
    stack[0] = keyspace;
    if (total)
        memcpy(stack + 1, args, (size_t)total * sizeof(PyObject *));
    return stack;
}

/* Run the reference under the lock: the result, or NULL with the exception
 * the reference (or the lock, or the housekeeping) raised. Holds its own
 * references to everything it calls for the call's duration, since the
 * reference runs Python code that may drop this object's fields. */
static PyObject *Locked_call(LockedObject *self, PyObject *const *args, size_t nargsf,
                             PyObject *kwnames) {
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    Py_ssize_t total = nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
    PyObject *small[8];
    PyObject *func = Py_NewRef(self->held[FUNC]), *keyspace = Py_NewRef(self->held[KEYSPACE]);
    PyObject *release = Py_NewRef(self->held[RELEASE]), *expire = Py_NewRef(self->held[EXPIRE]);
    PyObject *result = NULL;
    PyObject **stack = locked_arguments(keyspace, args, total, small, 8);
    if (!stack)
        goto done;
    PyObject *taken = PyObject_CallNoArgs(self->held[ACQUIRE]);
    if (!taken)
        goto done;
    Py_DECREF(taken);
    if (self->every > 0 && ++self->calls >= self->every && expire != Py_None) {
        self->calls = 0;
        PyObject *expired = PyObject_CallNoArgs(expire);
        if (!expired) {
            result = native_release(release, NULL);
            goto done;
        }
        Py_DECREF(expired);
    }
    result = native_release(release, PyObject_Vectorcall(func, stack, nargs + 1, kwnames));
done:
    if (stack && stack != small)
        PyMem_Free(stack);
    Py_DECREF(func);
    Py_DECREF(keyspace);
    Py_DECREF(release);
    Py_DECREF(expire);
    return result;
}

/* Locked(func, keyspace, lock, every, expire): func callable, lock with
 * acquire and release, every >= 0, expire callable or None; TypeError or
 * ValueError otherwise. */
static PyObject *Locked_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *func, *keyspace, *lock, *expire;
    Py_ssize_t every;
    if (kwargs && PyDict_GET_SIZE(kwargs)) {
        PyErr_SetString(PyExc_TypeError, "Locked() takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "OOOnO:Locked", &func, &keyspace, &lock, &every, &expire))
        return NULL;
    if (!PyCallable_Check(func) || (expire != Py_None && !PyCallable_Check(expire))) {
        PyErr_SetString(PyExc_TypeError, "Locked() needs a callable reference and expire");
        return NULL;
    }
    if (every < 0) {
        PyErr_SetString(PyExc_ValueError, "Locked() needs every >= 0");
        return NULL;
    }
    PyObject *acquire = PyObject_GetAttrString(lock, "acquire");
    PyObject *release = acquire ? PyObject_GetAttrString(lock, "release") : NULL;
    if (!release) {
        Py_XDECREF(acquire);
        return NULL;
    }
    LockedObject *self = (LockedObject *)type->tp_alloc(type, 0);
    PyObject *given[HELD] = {func, keyspace, acquire, release, expire};
    for (int i = 0; self && i < HELD; i++)
        self->held[i] = Py_NewRef(given[i]);
    Py_DECREF(acquire);
    Py_DECREF(release);
    if (!self)
        return NULL;
    self->every = every;
    self->calls = 0;
    self->vectorcall = (vectorcallfunc)Locked_call;
    return (PyObject *)self;
}

/* GC: visit every object held. */
static int Locked_traverse(LockedObject *self, visitproc visit, void *arg) {
    for (int i = 0; i < HELD; i++)
        Py_VISIT(self->held[i]);
    return 0;
}

/* GC: drop every object held. */
static int Locked_clear(LockedObject *self) {
    for (int i = 0; i < HELD; i++)
        Py_CLEAR(self->held[i]);
    return 0;
}

/* Untrack, drop what is held, free. */
static void Locked_dealloc(LockedObject *self) {
    PyObject_GC_UnTrack(self);
    Locked_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMemberDef Locked_members[] = {
    {"func", T_OBJECT_EX, offsetof(LockedObject, held), READONLY, "The reference it runs."},
    {NULL},
};

static PyTypeObject LockedType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ranked.backends.native._native.Locked",
    .tp_basicsize = sizeof(LockedObject),
    .tp_dealloc = (destructor)Locked_dealloc,
    .tp_vectorcall_offset = offsetof(LockedObject, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "Locked(func, keyspace, lock, every, expire): called with a step's arguments, "
              "runs func(keyspace, *args) holding lock (every `every`-th call first "
              "expire(); every = 0: never).",
    .tp_traverse = (traverseproc)Locked_traverse,
    .tp_clear = (inquiry)Locked_clear,
    .tp_members = Locked_members,
    .tp_new = Locked_new,
};

/* Ready the type and add Locked to the module; 0 or -1. */
int locked_add_to_module(PyObject *m) {
    if (PyType_Ready(&LockedType) < 0)
        return -1;
    return PyModule_AddObjectRef(m, "Locked", (PyObject *)&LockedType);
}
