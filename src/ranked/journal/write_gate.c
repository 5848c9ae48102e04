/* write_gate.c - ranked.journal._lane.WriteGate: the two writers of one
 * SQLite journal file take turns (see write_gate.h). */
#include "write_gate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The absolute CLOCK_MONOTONIC instant `ms` from now. */
static struct timespec after_ms(long long ms) {
    struct timespec at;
    clock_gettime(CLOCK_MONOTONIC, &at);
    long long ns = (long long)at.tv_nsec + (ms % 1000) * 1000000LL;
    at.tv_sec += (time_t)(ms / 1000 + ns / 1000000000LL);
    at.tv_nsec = (long)(ns % 1000000000LL);
    return at;
}

/* Take the gate for `who` (see write_gate.h): wait while another holds it,
 * or while the other writer waits too and `who` had it last. */
int gate_take(WriteGateObject *g, int who, long long timeout_ms) {
    int other = who == GATE_LANE ? GATE_STORE : GATE_LANE;
    struct timespec until = after_ms(timeout_ms);
    pthread_mutex_lock(&g->mu);
    g->waiting[who] = 1;
    while (g->owner != 0 || (g->waiting[other] && g->last == who)) {
        if (pthread_cond_timedwait(&g->changed, &g->mu, &until) == ETIMEDOUT) {
            g->waiting[who] = 0;
            pthread_cond_broadcast(&g->changed);
            pthread_mutex_unlock(&g->mu);
            return ETIMEDOUT;
        }
    }
    g->owner = who;
    g->last = who;
    g->waiting[who] = 0;
    pthread_mutex_unlock(&g->mu);
    return 0;
}

/* Give the gate back if `who` holds it, and wake the other writer. */
void gate_give(WriteGateObject *g, int who) {
    pthread_mutex_lock(&g->mu);
    if (g->owner == who) {
        g->owner = 0;
        pthread_cond_broadcast(&g->changed);
    }
    pthread_mutex_unlock(&g->mu);
}

/* Record the store's failure: the first one is kept (out of memory: a
 * fixed text, so that the failure is never lost). */
void gate_fail(WriteGateObject *g, const char *why) {
    static char out_of_memory[] = "the journal failed (and ran out of memory saying why)";
    pthread_mutex_lock(&g->mu);
    if (!g->failed) {
        size_t n = strlen(why) + 1;
        g->failed = malloc(n);
        if (g->failed) {
            memcpy(g->failed, why, n);
        } else {
            g->failed = out_of_memory;
            g->failed_static = 1;
        }
    }
    pthread_mutex_unlock(&g->mu);
}

/* A malloc'd copy of the store's failure, or NULL (none, or no memory). */
char *gate_failure(WriteGateObject *g) {
    char *found = NULL;
    pthread_mutex_lock(&g->mu);
    if (g->failed) {
        size_t n = strlen(g->failed) + 1;
        found = malloc(n);
        if (found)
            memcpy(found, g->failed, n);
    }
    pthread_mutex_unlock(&g->mu);
    return found;
}

/* take(timeout_ms) -> bool: take the gate for the store's committer (GIL
 * released while waiting); False when it was not given within timeout_ms. */
static PyObject *WriteGate_take(WriteGateObject *g, PyObject *arg) {
    long long timeout_ms = PyLong_AsLongLong(arg);
    if (timeout_ms == -1 && PyErr_Occurred())
        return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = gate_take(g, GATE_STORE, timeout_ms < 0 ? 0 : timeout_ms);
    Py_END_ALLOW_THREADS
    return PyBool_FromLong(rc == 0);
}

/* give(): give the gate back (the store's committer's turn ends). */
static PyObject *WriteGate_give(WriteGateObject *g, PyObject *unused) {
    gate_give(g, GATE_STORE);
    Py_RETURN_NONE;
}

/* fail(why): record the store's failure (the first one is kept). */
static PyObject *WriteGate_fail(WriteGateObject *g, PyObject *why) {
    const char *text = PyUnicode_AsUTF8(why);
    if (!text)
        return NULL;
    gate_fail(g, text);
    Py_RETURN_NONE;
}

/* failure() -> str | None: the store's failure. */
static PyObject *WriteGate_failure(WriteGateObject *g, PyObject *unused) {
    char *text = gate_failure(g);
    if (!text)
        Py_RETURN_NONE;
    PyObject *found = PyUnicode_FromString(text);
    free(text);
    return found;
}

/* WriteGate(): a free gate with no failure. */
static PyObject *WriteGate_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    if (PyTuple_GET_SIZE(args) || (kwds && PyDict_GET_SIZE(kwds))) {
        PyErr_SetString(PyExc_TypeError, "WriteGate() takes no arguments");
        return NULL;
    }
    WriteGateObject *g = (WriteGateObject *)type->tp_alloc(type, 0);
    if (!g)
        return NULL;
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    int rc = pthread_mutex_init(&g->mu, NULL);
    if (rc == 0)
        rc = pthread_cond_init(&g->changed, &attr);
    pthread_condattr_destroy(&attr);
    if (rc != 0) {
        Py_TYPE(g)->tp_free((PyObject *)g);
        errno = rc;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    return (PyObject *)g;
}

/* Free the gate (nobody holds a reference, so nobody waits on it). */
static void WriteGate_dealloc(WriteGateObject *g) {
    if (!g->failed_static)
        free(g->failed);
    pthread_mutex_destroy(&g->mu);
    pthread_cond_destroy(&g->changed);
    Py_TYPE(g)->tp_free((PyObject *)g);
}

static PyMethodDef WriteGate_methods[] = {
    {"take", (PyCFunction)WriteGate_take, METH_O, "take(timeout_ms) -> bool"},
    {"give", (PyCFunction)WriteGate_give, METH_NOARGS, "give()"},
    {"fail", (PyCFunction)WriteGate_fail, METH_O, "fail(why)"},
    {"failure", (PyCFunction)WriteGate_failure, METH_NOARGS, "failure() -> str | None"},
    {NULL, NULL, 0, NULL},
};

PyTypeObject WriteGateType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ranked.journal._lane.WriteGate",
    .tp_basicsize = sizeof(WriteGateObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The write gate of one SQLite journal file (see ranked.journal.lane).",
    .tp_new = WriteGate_new,
    .tp_dealloc = (destructor)WriteGate_dealloc,
    .tp_methods = WriteGate_methods,
};

/* Add WriteGate to module m; 0, or -1 with an exception. */
int write_gate_add_to_module(PyObject *m) {
    if (PyType_Ready(&WriteGateType) < 0)
        return -1;
    return PyModule_AddObjectRef(m, "WriteGate", (PyObject *)&WriteGateType);
}
