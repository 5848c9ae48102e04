/* guard_tables.c - the write guard's state on memory:// in native tables:
 * GuardRecord, GuardTables and guard_state(keyspace). See guard_tables.h.
 *
 * Every function here runs under the backend's lock (the check step holds
 * it) and calls no Python code but the dict operations on bytes and ints
 * (whose hashing and comparison run no Python code either).
 */
#include "guard_tables.h"

static PyObject *s_registry; /* the keyspace __dict__'s entry for every board's tables */
static PyObject *s_values;

/* ==== GuardRecord ============================================================ */

/* Drops the limiter key, frees. */
static void GuardRecord_dealloc(GuardRecord *self) {
    Py_CLEAR(self->limit_key);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject GuardRecordType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ranked.backends.native._native.GuardRecord",
    .tp_doc = "A member's state in the write guard's native tables (see guard_state).",
    .tp_basicsize = sizeof(GuardRecord),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)GuardRecord_dealloc,
};

/* ==== LimitRecord ============================================================ */

static PyTypeObject LimitRecordType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ranked.backends.native._native.LimitRecord",
    .tp_doc = "An IP's limit state in the write guard's native tables (see guard_state).",
    .tp_basicsize = sizeof(LimitRecord),
    .tp_flags = Py_TPFLAGS_DEFAULT,
};

/* ==== GuardTables ============================================================ */

/* Drops every entry of the ring (the keys it holds) and the ring itself. */
static void drop_ring(GuardTables *self) {
    for (Py_ssize_t i = 0; i < self->count; i++)
        Py_DECREF(self->ring[(self->head + i) % self->cap].key);
    PyMem_Free(self->ring);
    self->ring = NULL;
    self->head = self->count = self->cap = 0;
}

/* Drops everything held, frees. */
static void GuardTables_dealloc(GuardTables *self) {
    drop_ring(self);
    Py_CLEAR(self->values);
    Py_CLEAR(self->members);
    Py_CLEAR(self->nonces);
    Py_CLEAR(self->limits);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject GuardTablesType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ranked.backends.native._native.GuardTables",
    .tp_doc = "One board's write-guard state on a keyspace (see guard_state).",
    .tp_basicsize = sizeof(GuardTables),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)GuardTables_dealloc,
};

/* Empty tables for the keyspace whose _values is `values`: a new reference,
 * or NULL with an exception set. */
static GuardTables *new_tables(PyObject *values) {
    GuardTables *t = PyObject_New(GuardTables, &GuardTablesType);
    if (!t)
        return NULL;
    t->values = Py_NewRef(values);
    t->members = PyDict_New();
    t->nonces = PyDict_New();
    t->limits = PyDict_New();
    t->sweep = 0;
    t->ring = NULL;
    t->head = t->count = t->cap = 0;
    if (!t->members || !t->nonces || !t->limits) {
        Py_DECREF(t);
        return NULL;
    }
    return t;
}

GuardTables *guard_tables_of(PyObject *ks_dict, PyObject *values, PyObject *owner) {
    PyObject *registry = PyDict_GetItemWithError(ks_dict, s_registry);
    if (!registry) {
        if (PyErr_Occurred())
            return NULL;
        PyObject *made = PyDict_New();
        if (!made || PyDict_SetItem(ks_dict, s_registry, made) < 0) {
            Py_XDECREF(made);
            return NULL;
        }
        registry = made;
        Py_DECREF(made); /* held by the keyspace's __dict__ */
    }
    if (!PyDict_CheckExact(registry)) {
        PyErr_SetString(PyExc_SystemError, "the keyspace's guard tables changed type");
        return NULL;
    }
    PyObject *found = PyDict_GetItemWithError(registry, owner);
    if (!found && PyErr_Occurred())
        return NULL;
    if (found && Py_IS_TYPE(found, &GuardTablesType) && ((GuardTables *)found)->values == values)
        return (GuardTables *)found;
    GuardTables *t = new_tables(values); /* none yet, or the keyspace was flushed */
    if (!t)
        return NULL;
    int stored = PyDict_SetItem(registry, owner, (PyObject *)t);
    Py_DECREF(t);
    return stored < 0 ? NULL : t;
}

GuardRecord *guard_record(GuardTables *tables, PyObject *key, int create) {
    PyObject *found = PyDict_GetItemWithError(tables->members, key);
    if (found || PyErr_Occurred() || !create)
        return (GuardRecord *)found;
    GuardRecord *r = PyObject_New(GuardRecord, &GuardRecordType);
    if (!r)
        return NULL;
    r->has_stats = r->has_last = r->has_base = 0;
    r->last = r->base = r->mean = r->m2 = 0.0;
    r->bt = r->n = 0;
    r->limit_key = NULL;
    memset(&r->limit, 0, sizeof r->limit);
    r->limit_deadline = 0;
    int stored = PyDict_SetItem(tables->members, key, (PyObject *)r);
    Py_DECREF(r);
    return stored < 0 ? NULL : r;
}

/* Drops at most two limit records past their deadline at now_ms, looking at
 * no more than four, from where the last sweep stopped (a position in the
 * dict's entries, started again from the first past the end); 0, or -1. */
static int sweep_limits(GuardTables *t, int64_t now_ms) {
    PyObject *expired[2];
    int found = 0;
    PyObject *key, *value;
    for (int looked = 0; looked < 4 && found < 2; looked++) {
        if (!PyDict_Next(t->limits, &t->sweep, &key, &value)) {
            t->sweep = 0;
            break;
        }
        if (((LimitRecord *)value)->deadline < now_ms)
            expired[found++] = Py_NewRef(key);
    }
    int rc = 0;
    for (int i = 0; i < found; i++) {
        if (rc == 0 && PyDict_DelItem(t->limits, expired[i]) < 0)
            rc = -1;
        Py_DECREF(expired[i]);
    }
    return rc;
}

LimitRecord *guard_limit(GuardTables *tables, PyObject *key, int create, int64_t now_ms) {
    PyObject *found = PyDict_GetItemWithError(tables->limits, key);
    if (found || PyErr_Occurred() || !create)
        return (LimitRecord *)found;
    if (sweep_limits(tables, now_ms) < 0)
        return NULL;
    LimitRecord *r = PyObject_New(LimitRecord, &LimitRecordType);
    if (!r)
        return NULL;
    memset(&r->state, 0, sizeof r->state);
    r->deadline = 0;
    int stored = PyDict_SetItem(tables->limits, key, (PyObject *)r);
    Py_DECREF(r);
    return stored < 0 ? NULL : r;
}

int guard_nonce_live(GuardTables *tables, PyObject *key, int64_t now_ms) {
    PyObject *found = PyDict_GetItemWithError(tables->nonces, key);
    if (!found)
        return PyErr_Occurred() ? -1 : 0;
    long long deadline = PyLong_AsLongLong(found);
    if (deadline == -1 && PyErr_Occurred())
        return -1;
    return now_ms <= deadline;
}

/* Drops the oldest nonce when it has expired at now_ms (its entry in the
 * dict too, unless the nonce was added again since): 1 when one was popped,
 * 0 when none, -1 with an exception set. */
static int pop_expired(GuardTables *t, int64_t now_ms) {
    if (!t->count || t->ring[t->head].deadline >= now_ms)
        return 0;
    nonce_entry e = t->ring[t->head];
    t->head = (t->head + 1) % t->cap;
    t->count--;
    int rc = 0;
    PyObject *current = PyDict_GetItemWithError(t->nonces, e.key);
    if (current) {
        long long held = PyLong_AsLongLong(current);
        if (held == -1 && PyErr_Occurred())
            rc = -1;
        else if (held == e.deadline && PyDict_DelItem(t->nonces, e.key) < 0)
            rc = -1;
    } else if (PyErr_Occurred()) {
        rc = -1;
    }
    Py_DECREF(e.key);
    return rc < 0 ? -1 : 1;
}

/* Room for one more entry in the ring: 0, or -1 with MemoryError. */
static int ring_room(GuardTables *t) {
    if (t->count < t->cap)
        return 0;
    Py_ssize_t cap = t->cap ? 2 * t->cap : 64;
    nonce_entry *ring = PyMem_New(nonce_entry, cap);
    if (!ring) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < t->count; i++)
        ring[i] = t->ring[(t->head + i) % t->cap];
    PyMem_Free(t->ring);
    t->ring = ring;
    t->head = 0;
    t->cap = cap;
    return 0;
}

int guard_nonce_add(GuardTables *tables, PyObject *key, int64_t deadline, int64_t now_ms) {
    for (int i = 0; i < 2; i++) {
        int popped = pop_expired(tables, now_ms);
        if (popped <= 0) {
            if (popped < 0)
                return -1;
            break;
        }
    }
    PyObject *value = PyLong_FromLongLong(deadline);
    if (!value || ring_room(tables) < 0 || PyDict_SetItem(tables->nonces, key, value) < 0) {
        Py_XDECREF(value);
        return -1;
    }
    Py_DECREF(value);
    tables->ring[(tables->head + tables->count) % tables->cap] =
        (nonce_entry){Py_NewRef(key), deadline};
    tables->count++;
    return 0;
}

/* ==== guard_state(keyspace): what the tables hold, for tests and debugging == */

/* None, or the double as a float: a new reference. */
static PyObject *maybe_float(int has, double v) {
    return has ? PyFloat_FromDouble(v) : Py_NewRef(Py_None);
}

/* One record as a tuple (see guard_state's doc); a new reference or NULL. */
static PyObject *record_view(GuardRecord *r) {
    PyObject *limit = r->limit_key && r->limit.present
                          ? Py_BuildValue("(diLL)", r->limit.value, r->limit.value_is_int,
                                          (long long)r->limit.aux, (long long)r->limit_deadline)
                          : Py_NewRef(Py_None);
    if (!limit)
        return NULL;
    return Py_BuildValue("(iNNLLddON)", r->has_stats, maybe_float(r->has_last, r->last),
                         maybe_float(r->has_base, r->base), (long long)r->bt, (long long)r->n,
                         r->mean, r->m2, r->limit_key ? r->limit_key : Py_None, limit);
}

/* guard_state(keyspace): {held key: ({state key: record}, {nonce key:
 * deadline ms}, {IP limiter key: limit or None})} for every board's tables on
 * `keyspace` that it has not flushed since; a record is (has_stats, last,
 * base, bt, n, mean, m2, limiter key or None, limit or None), a limit
 * (value, value_is_int, aux, deadline ms). Expired entries are included (a
 * reader compares deadlines). */
static PyObject *guard_state(PyObject *module, PyObject *keyspace) {
    PyObject *ks_dict = PyObject_GenericGetDict(keyspace, NULL);
    if (!ks_dict)
        return NULL;
    PyObject *out = PyDict_New(), *registry = PyDict_GetItemWithError(ks_dict, s_registry);
    PyObject *values = registry ? PyDict_GetItemWithError(ks_dict, s_values) : NULL;
    if (!out || (!values && PyErr_Occurred()))
        goto error;
    PyObject *owner, *found;
    Py_ssize_t pos = 0;
    while (values && PyDict_Next(registry, &pos, &owner, &found)) {
        GuardTables *t = (GuardTables *)found;
        if (!Py_IS_TYPE(found, &GuardTablesType) || t->values != values)
            continue;
        PyObject *members = PyDict_New(), *key, *record;
        Py_ssize_t at = 0;
        while (members && PyDict_Next(t->members, &at, &key, &record)) {
            PyObject *view = record_view((GuardRecord *)record);
            if (!view || PyDict_SetItem(members, key, view) < 0)
                Py_CLEAR(members);
            Py_XDECREF(view);
        }
        PyObject *nonces = members ? PyDict_Copy(t->nonces) : NULL;
        PyObject *limits = nonces ? PyDict_New() : NULL, *limit;
        at = 0;
        while (limits && PyDict_Next(t->limits, &at, &key, &limit)) {
            LimitRecord *r = (LimitRecord *)limit;
            PyObject *view = r->state.present
                                 ? Py_BuildValue("(diLL)", r->state.value, r->state.value_is_int,
                                                 (long long)r->state.aux, (long long)r->deadline)
                                 : Py_NewRef(Py_None);
            if (!view || PyDict_SetItem(limits, key, view) < 0)
                Py_CLEAR(limits);
            Py_XDECREF(view);
        }
        PyObject *pair = limits ? PyTuple_Pack(3, members, nonces, limits) : NULL;
        Py_XDECREF(members);
        Py_XDECREF(nonces);
        Py_XDECREF(limits);
        if (!pair || PyDict_SetItem(out, owner, pair) < 0) {
            Py_XDECREF(pair);
            goto error;
        }
        Py_DECREF(pair);
    }
    Py_DECREF(ks_dict);
    return out;
error:
    Py_XDECREF(out);
    Py_DECREF(ks_dict);
    return NULL;
}

static PyMethodDef guard_tables_methods[] = {
    {"guard_state", (PyCFunction)guard_state, METH_O,
     "guard_state(keyspace): the write guard's native tables on a keyspace, as plain values."},
    {NULL, NULL, 0, NULL},
};

int guard_tables_add_to_module(PyObject *m) {
    if (!(s_registry = PyUnicode_InternFromString("_ranked_guard_tables")) ||
        !(s_values = PyUnicode_InternFromString("_values")) ||
        PyType_Ready(&GuardRecordType) < 0 || PyType_Ready(&LimitRecordType) < 0 ||
        PyType_Ready(&GuardTablesType) < 0)
        return -1;
    return PyModule_AddFunctions(m, guard_tables_methods);
}
