/* _front.c - the write guard's in-process stage for the common submission, in
 * one C call: ranked.guard._front.Front.
 *
 * A Front is made once per guarded board (ranked/guard/_async/guard.py,
 * _Steps) from what the board's check needs: its key heads, the static part
 * of the check's arguments, the bounds, the skew and the signature's Verifier
 * (_signature.c). Called as
 *     front(member, score, client_time, nonce, signature, ip, key_scope, now,
 *           window_key)
 * it does what AsyncGuard.submit does before its backend step for a
 * submission from a client (not a trusted writer) with no operator and no
 * replay payload: the arguments' checks, the trusted-only, bounds, HMAC and
 * skew layers, then the step's keys and arguments (_Steps.keys_of, args_of).
 * It returns (member bytes, score as float, keys, args) when every one of
 * those passes, and None for anything else: an argument of another type or
 * out of its range, a refusal, a trusted writer. The caller then runs the
 * Python path, which decides, raises or refuses exactly as it always does;
 * so this file never refuses anything itself, it only skips work for the
 * submission that passes. tests/guard/test_front.py drives both with the
 * same random arguments and compares what each hands the step.
 *
 * No Python code runs here but the Verifier (C, or its hashlib twin) and the
 * __float__ of a `now` that is not a float; a member holding lone surrogates
 * is not encoded here: the call returns None and the Python path encodes it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stddef.h>
#include <string.h>

enum { CLIENT_ARGS = 9, LIMIT_ARGS = 6 };

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    int trusted_only, has_min, has_max;
    double min_score, max_score, skew;
    Py_ssize_t player_keys, ip_keys; /* the limiters' key counts (0: no limiter) */
    PyObject *verifier;              /* None: unsigned board */
    PyObject *board;                 /* the board's name (str), signed over */
    PyObject *player_head, *nonce_head, *held, *banned; /* bytes */
    PyObject *rp_head, *rp_suffixes, *ri_head, *ri_suffixes; /* bytes / tuple, or None */
    PyObject *client;                /* tuple: the 9 static arguments of a client */
    PyObject *limits;                /* tuple: the 6 limiter parameters */
    PyObject *operator_name;         /* bytes: the board's operator */
    PyObject *ttl;                   /* int: the nonce's TTL in ms */
    PyObject *zero;                  /* int 0 */
} FrontObject;

/* The nonce's alphabet (signing.check_nonce): [A-Za-z0-9_.:~+/=-]{8,128}. */
static int nonce_ok(PyObject *nonce) {
    if (!PyUnicode_CheckExact(nonce) || !PyUnicode_IS_ASCII(nonce))
        return 0;
    Py_ssize_t n = PyUnicode_GET_LENGTH(nonce);
    if (n < 8 || n > 128)
        return 0;
    const unsigned char *c = PyUnicode_1BYTE_DATA(nonce);
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char ch = c[i];
        if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
              strchr("_.:~+/=-", ch) != NULL) ||
            ch == 0)
            return 0;
    }
    return 1;
}

/* head + middle + tail as one new bytes object (tail may be NULL); NULL with
 * MemoryError. */
static PyObject *joined(PyObject *head, const char *middle, Py_ssize_t len, PyObject *tail) {
    Py_ssize_t a = PyBytes_GET_SIZE(head), c = tail ? PyBytes_GET_SIZE(tail) : 0;
    PyObject *out = PyBytes_FromStringAndSize(NULL, a + len + c);
    if (!out)
        return NULL;
    char *p = PyBytes_AS_STRING(out);
    memcpy(p, PyBytes_AS_STRING(head), (size_t)a);
    memcpy(p + a, middle, (size_t)len);
    if (tail)
        memcpy(p + a + len, PyBytes_AS_STRING(tail), (size_t)c);
    return out;
}

/* Append the limiter's keys (head + identity + each suffix) to `keys`; 0, or
 * -1 with an exception. */
static int add_limiter(PyObject *keys, PyObject *head, PyObject *suffixes, const char *id,
                       Py_ssize_t len) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(suffixes); i++) {
        PyObject *key = joined(head, id, len, PyTuple_GET_ITEM(suffixes, i));
        if (!key || PyList_Append(keys, key) < 0) {
            Py_XDECREF(key);
            return -1;
        }
        Py_DECREF(key);
    }
    return 0;
}

/* Whether `score` is an exact int or float whose float() is finite: 1 with
 * that value in *out, else 0 (no exception left set). */
static int finite_score(PyObject *score, double *out) {
    if (PyFloat_CheckExact(score))
        *out = PyFloat_AS_DOUBLE(score);
    else if (PyLong_CheckExact(score)) {
        *out = PyLong_AsDouble(score);
        if (*out == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            return 0;
        }
    } else
        return 0;
    return isfinite(*out) ? 1 : 0;
}

/* Whether the cheap layers pass: trusted-only (a client never does), bounds,
 * then the signature and the skew on a signed board. 1 pass, 0 refuse or not
 * ours to decide, -1 with an exception (from the verifier). A client time
 * past +-2**53 ms is not ours: only below it is (double)ms / 1000 the double
 * Python's int / 1000 gives, which the skew compares. */
static int cheap_layers(FrontObject *self, PyObject *const *argv, double value, double now) {
    if (self->trusted_only || (self->has_min && value < self->min_score) ||
        (self->has_max && value > self->max_score))
        return 0;
    if (self->verifier == Py_None)
        return 1;
    PyObject *client_time = argv[2], *nonce = argv[3], *signature = argv[4];
    if (client_time == Py_None || nonce == Py_None || signature == Py_None)
        return 0;
    int overflow;
    long long ms = PyLong_AsLongLongAndOverflow(client_time, &overflow);
    if ((ms == -1 && PyErr_Occurred()) || overflow || ms > (1LL << 53) || ms < -(1LL << 53)) {
        PyErr_Clear();
        return 0; /* int / 1000 of a larger int is Python's to round */
    }
    PyObject *now_obj = PyFloat_FromDouble(now);
    if (!now_obj)
        return -1;
    PyObject *call[7] = {now_obj, self->board, argv[0], argv[1], client_time, nonce, signature};
    PyObject *ok = PyObject_Vectorcall(self->verifier, call, 7, NULL);
    Py_DECREF(now_obj);
    if (!ok)
        return -1;
    int valid = ok == Py_True;
    Py_DECREF(ok);
    return valid && !(fabs(now - (double)ms / 1000.0) > self->skew);
}

/* front(member, score, client_time, nonce, signature, ip, key_scope, now,
 * window_key) -> (member bytes, score float, keys, args) | None: see the
 * file's comment. Borrowed arguments; a new reference, or NULL with an
 * exception: TypeError for another number of arguments or keywords, the
 * error of a `now` that is not a number, memory, or the verifier's. */
static PyObject *Front_call(PyObject *callable, PyObject *const *argv, size_t nargsf,
                            PyObject *kwnames) {
    FrontObject *self = (FrontObject *)callable;
    if (PyVectorcall_NARGS(nargsf) != 9 || (kwnames && PyTuple_GET_SIZE(kwnames))) {
        PyErr_SetString(PyExc_TypeError, "front() takes member, score, client_time, nonce, "
                                         "signature, ip, key_scope, now, window_key");
        return NULL;
    }
    PyObject *member = argv[0], *client_time = argv[2], *nonce = argv[3], *ip = argv[5];
    PyObject *scope = argv[6], *window = argv[8];
    double value, now = PyFloat_AsDouble(argv[7]);
    if (now == -1.0 && PyErr_Occurred())
        return NULL;
    /* the arguments: anything the Python path would refuse, or treats differently,
     * goes back to it (None) */
    const char *who;
    Py_ssize_t who_len;
    if (PyUnicode_CheckExact(member)) {
        who = PyUnicode_AsUTF8AndSize(member, &who_len);
        if (!who) { /* lone surrogates: the Python path encodes them */
            PyErr_Clear();
            Py_RETURN_NONE;
        }
    } else if (PyBytes_CheckExact(member)) {
        who = PyBytes_AS_STRING(member);
        who_len = PyBytes_GET_SIZE(member);
    } else
        Py_RETURN_NONE;
    if (who_len == 0 || !finite_score(argv[1], &value) || !PyBytes_CheckExact(window) ||
        (client_time != Py_None && !PyLong_CheckExact(client_time)) ||
        (nonce != Py_None && !nonce_ok(nonce)) ||
        (ip != Py_None &&
         (!PyUnicode_CheckExact(ip) || PyUnicode_GET_LENGTH(ip) < 1 ||
          PyUnicode_GET_LENGTH(ip) > 64)))
        Py_RETURN_NONE;
    if (scope != Py_None) { /* a trusted writer's path is the Python one */
        if (!PyUnicode_CheckExact(scope))
            Py_RETURN_NONE;
        if (PyUnicode_CompareWithASCIIString(scope, "write") == 0 ||
            PyUnicode_CompareWithASCIIString(scope, "admin") == 0)
            Py_RETURN_NONE;
    }
    const char *ip_text = NULL;
    Py_ssize_t ip_len = 0;
    if (ip != Py_None && self->ip_keys > 0) {
        ip_text = PyUnicode_AsUTF8AndSize(ip, &ip_len);
        if (!ip_text) {
            PyErr_Clear();
            Py_RETURN_NONE;
        }
    }
    int passed = cheap_layers(self, argv, value, now);
    if (passed <= 0)
        return passed < 0 ? NULL : Py_NewRef(Py_None);
    /* the step's keys (_Steps.keys_of) and arguments (_Steps.args_of) */
    int use_nonce = nonce != Py_None && self->verifier != Py_None;
    PyObject *who_obj = NULL, *value_obj = NULL, *keys = NULL, *args = NULL, *found = NULL;
    PyObject *player = NULL, *nonce_key = NULL, *ni = NULL;
    if (!(who_obj = PyBytes_CheckExact(member) ? Py_NewRef(member)
                                                : PyBytes_FromStringAndSize(who, who_len)) ||
        !(value_obj = PyFloat_FromDouble(value)) ||
        !(player = joined(self->player_head, who, who_len, NULL)))
        goto out;
    if (use_nonce) {
        Py_ssize_t n;
        const char *text = PyUnicode_AsUTF8AndSize(nonce, &n);
        if (!text || !(nonce_key = joined(self->nonce_head, text, n, NULL)))
            goto out;
    } else
        nonce_key = Py_NewRef(player);
    if (!(keys = PyList_New(5)))
        goto out;
    PyList_SET_ITEM(keys, 0, Py_NewRef(player));
    PyList_SET_ITEM(keys, 1, Py_NewRef(nonce_key));
    PyList_SET_ITEM(keys, 2, Py_NewRef(window));
    PyList_SET_ITEM(keys, 3, Py_NewRef(self->held));
    PyList_SET_ITEM(keys, 4, Py_NewRef(self->banned));
    if (self->player_keys > 0 && add_limiter(keys, self->rp_head, self->rp_suffixes, who, who_len))
        goto out;
    if (ip_text && add_limiter(keys, self->ri_head, self->ri_suffixes, ip_text, ip_len))
        goto out;
    if (!(ni = PyLong_FromSsize_t(ip_text ? self->ip_keys : 0)))
        goto out;
    Py_ssize_t at = 0;
    if (!(args = PyList_New(3 + CLIENT_ARGS + 2 + LIMIT_ARGS + 1)))
        goto out;
    PyList_SET_ITEM(args, at++, Py_NewRef(who_obj));
    PyList_SET_ITEM(args, at++, Py_NewRef(value_obj));
    PyList_SET_ITEM(args, at++, Py_NewRef(use_nonce ? self->ttl : self->zero));
    for (Py_ssize_t i = 0; i < CLIENT_ARGS; i++)
        PyList_SET_ITEM(args, at++, Py_NewRef(PyTuple_GET_ITEM(self->client, i)));
    PyObject *np = PyLong_FromSsize_t(self->player_keys);
    if (!np)
        goto out;
    PyList_SET_ITEM(args, at++, np);
    PyList_SET_ITEM(args, at++, Py_NewRef(ni));
    for (Py_ssize_t i = 0; i < LIMIT_ARGS; i++)
        PyList_SET_ITEM(args, at++, Py_NewRef(PyTuple_GET_ITEM(self->limits, i)));
    PyList_SET_ITEM(args, at++, Py_NewRef(self->operator_name));
    found = PyTuple_Pack(4, who_obj, value_obj, keys, args);
out:
    Py_XDECREF(who_obj);
    Py_XDECREF(value_obj);
    Py_XDECREF(player);
    Py_XDECREF(nonce_key);
    Py_XDECREF(ni);
    Py_XDECREF(keys);
    Py_XDECREF(args); /* a partly filled list holds NULL slots: list_dealloc skips them */
    return found;
}

#define OBJECT_FIELDS(X)                                                                       \
    X(verifier) X(board) X(player_head) X(nonce_head) X(held) X(banned) X(rp_head)            \
    X(rp_suffixes) X(ri_head) X(ri_suffixes) X(client) X(limits) X(operator_name) X(ttl)     \
    X(zero)

/* Front(verifier, trusted_only, min_score, max_score, skew, board,
 * player_head, nonce_head, held, banned, rp, ri, client, limits, operator,
 * ttl): rp / ri a (head, suffixes) pair or None; min / max a float or None.
 * A new reference, or NULL with TypeError / ValueError. */
static PyObject *Front_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *verifier, *min, *max, *board, *player_head, *nonce_head, *held, *banned, *rp, *ri;
    PyObject *client, *limits, *operator_name, *ttl;
    int trusted_only;
    double skew;
    if (kwargs && PyDict_GET_SIZE(kwargs)) {
        PyErr_SetString(PyExc_TypeError, "Front() takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "OpOOdUSSSSOOO!O!SO!:Front", &verifier, &trusted_only, &min, &max,
                          &skew, &board, &player_head, &nonce_head, &held, &banned, &rp, &ri,
                          &PyTuple_Type, &client, &PyTuple_Type, &limits, &operator_name,
                          &PyLong_Type, &ttl))
        return NULL;
    if (PyTuple_GET_SIZE(client) != CLIENT_ARGS || PyTuple_GET_SIZE(limits) != LIMIT_ARGS) {
        PyErr_SetString(PyExc_ValueError, "Front(): 9 client arguments and 6 limiter ones");
        return NULL;
    }
    if (verifier != Py_None && !PyCallable_Check(verifier)) {
        PyErr_SetString(PyExc_TypeError, "Front(): the verifier must be callable or None");
        return NULL;
    }
    PyObject *parts[2][2] = {{NULL, NULL}, {NULL, NULL}};
    PyObject *given[2] = {rp, ri};
    for (int i = 0; i < 2; i++) {
        if (given[i] == Py_None)
            continue;
        if (!PyTuple_Check(given[i]) || PyTuple_GET_SIZE(given[i]) != 2 ||
            !PyBytes_Check(PyTuple_GET_ITEM(given[i], 0)) ||
            !PyTuple_Check(PyTuple_GET_ITEM(given[i], 1)) ||
            PyTuple_GET_SIZE(PyTuple_GET_ITEM(given[i], 1)) == 0) {
            PyErr_SetString(PyExc_TypeError, "Front(): a limiter is (head, suffixes) or None");
            return NULL;
        }
        PyObject *suffixes = PyTuple_GET_ITEM(given[i], 1);
        for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(suffixes); j++)
            if (!PyBytes_Check(PyTuple_GET_ITEM(suffixes, j))) {
                PyErr_SetString(PyExc_TypeError, "Front(): a limiter's suffixes are bytes");
                return NULL;
            }
        parts[i][0] = PyTuple_GET_ITEM(given[i], 0);
        parts[i][1] = suffixes;
    }
    FrontObject *self = (FrontObject *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    self->trusted_only = trusted_only;
    self->skew = skew;
    PyObject *bounds[2] = {min, max};
    for (int i = 0; i < 2; i++) {
        if (bounds[i] == Py_None)
            continue;
        double v = PyFloat_AsDouble(bounds[i]);
        if (v == -1.0 && PyErr_Occurred()) {
            Py_DECREF(self);
            return NULL;
        }
        *(i ? &self->max_score : &self->min_score) = v;
        *(i ? &self->has_max : &self->has_min) = 1;
    }
    self->verifier = Py_NewRef(verifier);
    self->board = Py_NewRef(board);
    self->player_head = Py_NewRef(player_head);
    self->nonce_head = Py_NewRef(nonce_head);
    self->held = Py_NewRef(held);
    self->banned = Py_NewRef(banned);
    self->rp_head = Py_XNewRef(parts[0][0]);
    self->rp_suffixes = Py_XNewRef(parts[0][1]);
    self->ri_head = Py_XNewRef(parts[1][0]);
    self->ri_suffixes = Py_XNewRef(parts[1][1]);
    self->player_keys = parts[0][1] ? PyTuple_GET_SIZE(parts[0][1]) : 0;
    self->ip_keys = parts[1][1] ? PyTuple_GET_SIZE(parts[1][1]) : 0;
    self->client = Py_NewRef(client);
    self->limits = Py_NewRef(limits);
    self->operator_name = Py_NewRef(operator_name);
    self->ttl = Py_NewRef(ttl);
    if (!(self->zero = PyLong_FromLong(0))) {
        Py_DECREF(self);
        return NULL;
    }
    self->vectorcall = Front_call;
    return (PyObject *)self;
}

/* GC: visit every object held. */
static int Front_traverse(FrontObject *self, visitproc visit, void *arg) {
#define VISIT(f) Py_VISIT(self->f);
    OBJECT_FIELDS(VISIT)
#undef VISIT
    return 0;
}

/* GC: drop every object held. */
static int Front_clear(FrontObject *self) {
#define CLEAR(f) Py_CLEAR(self->f);
    OBJECT_FIELDS(CLEAR)
#undef CLEAR
    return 0;
}

/* Untrack, drop the objects held, free. */
static void Front_dealloc(FrontObject *self) {
    PyObject_GC_UnTrack(self);
    Front_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject FrontType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ranked.guard._front.Front",
    .tp_doc = PyDoc_STR("The write guard's in-process stage for a client's common submission "
                        "(see ranked/guard/_front.c)."),
    .tp_basicsize = sizeof(FrontObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_HAVE_GC,
    .tp_new = Front_new,
    .tp_dealloc = (destructor)Front_dealloc,
    .tp_traverse = (traverseproc)Front_traverse,
    .tp_clear = (inquiry)Front_clear,
    .tp_vectorcall_offset = offsetof(FrontObject, vectorcall),
    .tp_call = PyVectorcall_Call,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "ranked.guard._front",
    .m_doc = "The write guard's in-process stage in C (see ranked/guard/_front.c).",
    .m_size = -1,
};

/* Module init: the Front type. A new reference, or NULL with an exception. */
PyMODINIT_FUNC PyInit__front(void) {
    if (PyType_Ready(&FrontType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m && PyModule_AddObjectRef(m, "Front", (PyObject *)&FrontType) < 0)
        Py_CLEAR(m);
    return m;
}
