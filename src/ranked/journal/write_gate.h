/* write_gate.h - the write gate of one SQLite journal file (write_gate.c).
 *
 * Two writers of one process write the file: the store's committer (Python)
 * and the native lane's thread (_lane.c). SQLite lets one write transaction
 * run at a time and makes the other wait by sleeping and retrying, which a
 * writer that starts its next transaction microseconds after each commit
 * can win every time. The gate makes them take turns instead: each takes it
 * before BEGIN IMMEDIATE and gives it back after COMMIT or ROLLBACK, and
 * when both wait, the one that did not have it last goes first. It also
 * holds the store's failure, shared by both writers: once acknowledged
 * events were lost (batch mode), neither takes another append.
 */
#ifndef RANKED_WRITE_GATE_H
#define RANKED_WRITE_GATE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <pthread.h>

#define GATE_LANE 1
#define GATE_STORE 2

typedef struct {
    PyObject_HEAD
    pthread_mutex_t mu;
    pthread_cond_t changed;
    int owner;      /* 0: free, else GATE_LANE or GATE_STORE */
    int waiting[3]; /* indexed by GATE_LANE / GATE_STORE */
    int last;       /* the last owner */
    char *failed;   /* the store's failure (malloc'd unless failed_static), or NULL */
    int failed_static;
} WriteGateObject;

extern PyTypeObject WriteGateType;

/* Take the gate for `who`, waiting at most timeout_ms; 0, or ETIMEDOUT (the
 * gate not taken). No GIL needed. */
int gate_take(WriteGateObject *g, int who, long long timeout_ms);

/* Give the gate back if `who` holds it. No GIL needed. */
void gate_give(WriteGateObject *g, int who);

/* Record the store's failure (the first one is kept). No GIL needed. */
void gate_fail(WriteGateObject *g, const char *why);

/* A malloc'd copy of the store's failure, or NULL. No GIL needed. */
char *gate_failure(WriteGateObject *g);

/* Add WriteGate to module m; 0, or -1 with an exception. */
int write_gate_add_to_module(PyObject *m);

#endif
