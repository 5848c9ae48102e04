/* _signature.c - the write guard's signature check in one C call:
 * ranked.guard._signature.Verifier.
 *
 * A Verifier is made once per set of secrets (ranked/guard/signing.py). For
 * each secret it keeps the SHA-256 states after the HMAC's inner and outer
 * key blocks (RFC 2104), so a check hashes only the message: about three
 * compressions for a message of ~100 bytes. Called as
 * verifier(now, board, member, score, client_time, nonce, signature), it
 * builds the message signing.py's message() builds (its module docstring is
 * the format), computes the HMAC-SHA256 under every secret valid at `now`
 * and compares its lowercase hex digest with `signature` in constant time.
 * signing.py's sign() (hashlib's HMAC over message()) is the reference:
 * tests/guard/test_signature.py checks one against the other.
 *
 * SHA-256 is written here from its definition (FIPS 180-4). Python code runs
 * during a check only through its arguments: the __float__ of a `now` or a
 * score that is not a float or an int, the str() of a client time past a
 * long long, the encoding of a member that holds lone surrogates.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* -- SHA-256 (FIPS 180-4) ------------------------------------------------------- */

static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};

static const uint32_t H256[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

/* x rotated right by n bits (0 < n < 32). */
static inline uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

/* The message schedule of `block`: its 64 words (FIPS 180-4, 6.2.2 step 1). */
static void sha256_schedule(uint32_t w[64], const uint8_t block[64]) {
    for (int t = 0; t < 16; t++)
        w[t] = (uint32_t)block[4 * t] << 24 | (uint32_t)block[4 * t + 1] << 16 |
               (uint32_t)block[4 * t + 2] << 8 | (uint32_t)block[4 * t + 3];
    for (int t = 16; t < 64; t++) {
        uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
        uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>

/* Whether the processor has the SHA extensions, SSE4.1 and SSSE3 (cpuid leaf 7
 * EBX bit 29, leaf 1 ECX bits 19 and 9): 1 or 0. */
static int has_sha_extensions(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 19)) || !(c & (1u << 9)))
        return 0;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 29));
}

/* One compression of the 64-byte `block` into `state` with the processor's
 * SHA-256 instructions: the message schedule four words at a time
 * (SHA256MSG1 / SHA256MSG2), the rounds two at a time (SHA256RNDS2 on the
 * state held as the pairs ABEF and CDGH, each round's W + K in the low
 * lanes). The same result as sha256_block_c. */
__attribute__((target("sha,sse4.1,ssse3"))) static void sha256_block_x86(uint32_t state[8],
                                                                         const uint8_t block[64]) {
    const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
    __m128i dcba = _mm_loadu_si128((const __m128i *)&state[0]); /* lanes A B C D */
    __m128i hgfe = _mm_loadu_si128((const __m128i *)&state[4]); /* lanes E F G H */
    __m128i badc = _mm_shuffle_epi32(dcba, 0xB1);               /* lanes B A D C */
    hgfe = _mm_shuffle_epi32(hgfe, 0x1B);                       /* lanes H G F E */
    __m128i abef = _mm_alignr_epi8(badc, hgfe, 8);              /* lanes F E B A */
    __m128i cdgh = _mm_blend_epi16(hgfe, badc, 0xF0);           /* lanes H G D C */
    const __m128i abef_in = abef, cdgh_in = cdgh;
    __m128i w[4]; /* the schedule's last sixteen words, four by four, in a ring */
    for (int g = 0; g < 4; g++)
        w[g] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(block + 16 * g)), swap);
    for (int g = 0; g < 16; g++) { /* rounds 4g .. 4g+3 */
        if (g >= 4) {              /* W[4g..]: from W[4g-16..], W[4g-12..], W[4g-8..], W[4g-4..] */
            __m128i sum = _mm_sha256msg1_epu32(w[g & 3], w[(g + 1) & 3]);
            sum = _mm_add_epi32(sum, _mm_alignr_epi8(w[(g + 3) & 3], w[(g + 2) & 3], 4));
            w[g & 3] = _mm_sha256msg2_epu32(sum, w[(g + 3) & 3]);
        }
        __m128i wk = _mm_add_epi32(w[g & 3], _mm_loadu_si128((const __m128i *)&K256[4 * g]));
        cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk); /* rounds 4g, 4g+1: the new ABEF */
        wk = _mm_shuffle_epi32(wk, 0x0E);
        abef = _mm_sha256rnds2_epu32(abef, cdgh, wk); /* rounds 4g+2, 4g+3 */
    }
    abef = _mm_add_epi32(abef, abef_in);
    cdgh = _mm_add_epi32(cdgh, cdgh_in);
    __m128i feba = _mm_shuffle_epi32(abef, 0x1B);             /* lanes A B E F */
    __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);             /* lanes G H C D */
    dcba = _mm_blend_epi16(feba, dchg, 0xF0);                 /* lanes A B C D */
    hgfe = _mm_alignr_epi8(dchg, feba, 8);                    /* lanes E F G H */
    _mm_storeu_si128((__m128i *)&state[0], dcba);
    _mm_storeu_si128((__m128i *)&state[4], hgfe);
}
#endif

/* One compression in plain C: `state` absorbs the 64-byte `block` (FIPS
 * 180-4, 6.2.2: the schedule, then the 64 rounds). */
static void sha256_block_c(uint32_t state[8], const uint8_t block[64]) {
    uint32_t w[64];
    sha256_schedule(w, block);
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
    for (int t = 0; t < 64; t++) {
        uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) +
                      K256[t] + w[t];
        uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
    state[4] += e;
    state[5] += f;
    state[6] += g;
    state[7] += h;
}

/* The compression this processor runs: sha256_block_x86 where it has the SHA
 * extensions (chosen once, at module init), else sha256_block_c. */
static void (*sha256_block)(uint32_t state[8], const uint8_t block[64]) = sha256_block_c;

/* The digest of (`prior` bytes already absorbed into `start`, a multiple of 64)
 * followed by `data`: the remaining blocks, the padding and the length. */
static void sha256_finish(const uint32_t start[8], uint64_t prior, const uint8_t *data, size_t len,
                          uint8_t out[32]) {
    uint32_t state[8];
    memcpy(state, start, sizeof state);
    size_t done = 0;
    for (; len - done >= 64; done += 64)
        sha256_block(state, data + done);
    uint8_t tail[128] = {0};
    size_t rest = len - done;
    memcpy(tail, data + done, rest);
    tail[rest] = 0x80;
    size_t blocks = rest + 1 + 8 <= 64 ? 1 : 2;
    uint64_t bits = (prior + (uint64_t)len) * 8;
    for (int i = 0; i < 8; i++)
        tail[blocks * 64 - 1 - i] = (uint8_t)(bits >> (8 * i));
    for (size_t i = 0; i < blocks; i++)
        sha256_block(state, tail + 64 * i);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(state[i] >> 24);
        out[4 * i + 1] = (uint8_t)(state[i] >> 16);
        out[4 * i + 2] = (uint8_t)(state[i] >> 8);
        out[4 * i + 3] = (uint8_t)state[i];
    }
}

/* -- the Verifier ---------------------------------------------------------------- */

typedef struct {
    uint32_t inner[8], outer[8]; /* the states after the key XOR ipad / opad block */
    int bounded;                 /* 0: no end; 1: valid while now < until */
    double until;
} Keyed;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    Py_ssize_t count;     /* the keys built */
    Py_ssize_t allocated; /* the keys' room (wiped whole when freed) */
    Keyed *keys;
} VerifierObject;

/* Zero `len` bytes at `p` in a way the compiler keeps (key material). */
static void wipe(void *p, size_t len) {
    volatile uint8_t *b = p;
    for (size_t i = 0; i < len; i++)
        b[i] = 0;
}

/* The HMAC pads of `key` (RFC 2104: a key longer than a block is hashed
 * first); the key's copies on the stack are wiped before returning. */
static void keyed_init(Keyed *k, const uint8_t *key, size_t len) {
    uint8_t block[64] = {0};
    if (len > 64)
        sha256_finish(H256, 0, key, len, block);
    else
        memcpy(block, key, len);
    uint8_t pad[64];
    for (int i = 0; i < 64; i++)
        pad[i] = block[i] ^ 0x36;
    memcpy(k->inner, H256, sizeof k->inner);
    sha256_block(k->inner, pad);
    for (int i = 0; i < 64; i++)
        pad[i] = block[i] ^ 0x5c;
    memcpy(k->outer, H256, sizeof k->outer);
    sha256_block(k->outer, pad);
    wipe(block, sizeof block);
    wipe(pad, sizeof pad);
}

static PyObject *Verifier_call(PyObject *, PyObject *const *, size_t, PyObject *);

/* Verifier(keys): `keys` an iterable of (key bytes, until float or None). A
 * new reference, or NULL with TypeError (or the error of an `until`'s
 * __float__) for anything else. */
static PyObject *Verifier_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *given;
    if (kwargs && PyDict_GET_SIZE(kwargs)) {
        PyErr_SetString(PyExc_TypeError, "Verifier() takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "O:Verifier", &given))
        return NULL;
    /* a tuple copy: a key's `until` may run Python code (__float__), which must not
     * be able to shrink what is being read */
    PyObject *seq = PySequence_Tuple(given);
    if (!seq)
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(seq);
    VerifierObject *self = (VerifierObject *)type->tp_alloc(type, 0);
    if (!self)
        goto fail;
    self->keys = PyMem_Calloc(n ? (size_t)n : 1, sizeof(Keyed));
    if (!self->keys) {
        PyErr_NoMemory();
        goto fail;
    }
    self->allocated = n;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pair = PyTuple_GET_ITEM(seq, i);
        PyObject *key, *until;
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            PyErr_SetString(PyExc_TypeError, "Verifier(): each key is a (bytes, until) pair");
            goto fail;
        }
        key = PyTuple_GET_ITEM(pair, 0);
        until = PyTuple_GET_ITEM(pair, 1);
        if (!PyBytes_Check(key)) {
            PyErr_SetString(PyExc_TypeError, "Verifier(): a key must be bytes");
            goto fail;
        }
        Keyed *k = &self->keys[i];
        keyed_init(k, (const uint8_t *)PyBytes_AS_STRING(key), (size_t)PyBytes_GET_SIZE(key));
        if (until != Py_None) {
            k->until = PyFloat_AsDouble(until);
            if (k->until == -1.0 && PyErr_Occurred())
                goto fail;
            k->bounded = 1;
        }
        self->count = i + 1;
    }
    Py_DECREF(seq);
    self->vectorcall = Verifier_call;
    return (PyObject *)self;
fail:
    Py_DECREF(seq);
    Py_XDECREF(self);
    return NULL;
}

/* Free the keys (wiped first: they are the secrets' HMAC states). */
static void Verifier_dealloc(VerifierObject *self) {
    if (self->keys) {
        wipe(self->keys, (size_t)self->allocated * sizeof(Keyed));
        PyMem_Free(self->keys);
    }
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* A growing byte buffer on the stack, spilling to the heap past its size. */
typedef struct {
    uint8_t local[512];
    uint8_t *data;
    size_t len, cap;
} Buffer;

/* Append `n` bytes; 0, or -1 with MemoryError. */
static int buf_add(Buffer *b, const void *src, size_t n) {
    if (b->len + n > b->cap) {
        size_t cap = (b->len + n) * 2;
        uint8_t *grown = PyMem_Malloc(cap);
        if (!grown) {
            PyErr_NoMemory();
            return -1;
        }
        memcpy(grown, b->data, b->len);
        if (b->data != b->local)
            PyMem_Free(b->data);
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, src, n);
    b->len += n;
    return 0;
}

/* Append `v` in decimal, as "%lld" writes it (snprintf's locale-aware
 * machinery costs more than the hash of a short message); 0, or -1 with
 * MemoryError. */
static int buf_add_decimal(Buffer *b, long long v) {
    char text[24];
    char *end = text + sizeof text, *at = end;
    unsigned long long magnitude = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        *--at = (char)('0' + magnitude % 10);
        magnitude /= 10;
    } while (magnitude);
    if (v < 0)
        *--at = '-';
    return buf_add(b, at, (size_t)(end - at));
}

/* Append a str's UTF-8 (with surrogateescape when `escape`, as signing.py
 * encodes a member); 0, or -1 with an exception (TypeError for a non-str). */
static int buf_add_str(Buffer *b, PyObject *text, int escape) {
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "verify(): board, member and nonce must be str");
        return -1;
    }
    Py_ssize_t n;
    const char *utf8 = PyUnicode_AsUTF8AndSize(text, &n);
    if (utf8)
        return buf_add(b, utf8, (size_t)n);
    if (!escape || !PyErr_ExceptionMatches(PyExc_UnicodeEncodeError))
        return -1;
    PyErr_Clear();
    PyObject *encoded = PyUnicode_AsEncodedString(text, "utf-8", "surrogateescape");
    if (!encoded)
        return -1;
    int rc = buf_add(b, PyBytes_AS_STRING(encoded), (size_t)PyBytes_GET_SIZE(encoded));
    Py_DECREF(encoded);
    return rc;
}

/* Append the score as signing.score_text writes it; 0, or -1 with an exception. */
static int buf_add_score(Buffer *b, PyObject *score) {
    double v = PyFloat_AsDouble(score);
    if (v == -1.0 && PyErr_Occurred())
        return -1;
    if (isfinite(v) && v == floor(v) && fabs(v) < 9007199254740992.0)
        return buf_add_decimal(b, (long long)v);
    char *repr = PyOS_double_to_string(v, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
    if (!repr)
        return -1;
    int rc = buf_add(b, repr, strlen(repr));
    PyMem_Free(repr);
    return rc;
}

/* Append an int in decimal (as b"%d" does); 0, or -1 with an exception. */
static int buf_add_int(Buffer *b, PyObject *value) {
    if (!PyLong_Check(value)) {
        PyErr_SetString(PyExc_TypeError, "verify(): client_time must be an int");
        return -1;
    }
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (!overflow)
        return buf_add_decimal(b, v);
    PyObject *text = PyObject_Str(value);
    if (!text)
        return -1;
    int rc = buf_add_str(b, text, 0);
    Py_DECREF(text);
    return rc;
}

static const char HEX[] = "0123456789abcdef";

/* verifier(now, board, member, score, client_time, nonce, signature) -> bool:
 * the contract of signing.verify with this object's secrets. Borrowed
 * arguments; a new reference (True / False), or NULL with an exception for an
 * argument of the wrong type (after the signature's own check, as verify does). */
static PyObject *Verifier_call(PyObject *callable, PyObject *const *argv, size_t nargsf,
                               PyObject *kwnames) {
    VerifierObject *self = (VerifierObject *)callable;
    if (PyVectorcall_NARGS(nargsf) != 7 || (kwnames && PyTuple_GET_SIZE(kwnames))) {
        PyErr_SetString(PyExc_TypeError,
                        "verifier() takes now, board, member, score, client_time, nonce, "
                        "signature");
        return NULL;
    }
    PyObject *signature = argv[6];
    if (!PyUnicode_Check(signature) || PyUnicode_GET_LENGTH(signature) != 64 ||
        !PyUnicode_IS_ASCII(signature))
        Py_RETURN_FALSE; /* no signature of the digest's form */
    const uint8_t *given = PyUnicode_1BYTE_DATA(signature);
    double now = PyFloat_AsDouble(argv[0]);
    if (now == -1.0 && PyErr_Occurred())
        return NULL;
    Buffer b;
    b.data = b.local;
    b.len = 0;
    b.cap = sizeof b.local;
    PyObject *result = NULL;
    PyObject *member = argv[2];
    static const char head[] = "ranked-guard-v1\n";
    if (buf_add(&b, head, sizeof head - 1) || buf_add_str(&b, argv[1], 0) ||
        buf_add(&b, "\n", 1))
        goto out;
    if (PyBytes_Check(member)) {
        if (buf_add(&b, PyBytes_AS_STRING(member), (size_t)PyBytes_GET_SIZE(member)))
            goto out;
    } else if (buf_add_str(&b, member, 1))
        goto out;
    if (buf_add(&b, "\n", 1) || buf_add_score(&b, argv[3]) || buf_add(&b, "\n", 1) ||
        buf_add_int(&b, argv[4]) || buf_add(&b, "\n", 1) || buf_add_str(&b, argv[5], 0))
        goto out;
    unsigned found = 0;
    for (Py_ssize_t i = 0; i < self->count; i++) {
        const Keyed *k = &self->keys[i];
        if (k->bounded && !(now < k->until))
            continue;
        uint8_t inner[32], mac[32];
        sha256_finish(k->inner, 64, b.data, b.len, inner);
        sha256_finish(k->outer, 64, inner, sizeof inner, mac);
        unsigned differ = 0;
        for (int j = 0; j < 32; j++) {
            differ |= (unsigned)(given[2 * j] ^ (uint8_t)HEX[mac[j] >> 4]);
            differ |= (unsigned)(given[2 * j + 1] ^ (uint8_t)HEX[mac[j] & 15]);
        }
        found |= differ == 0;
    }
    result = Py_NewRef(found ? Py_True : Py_False);
out:
    if (b.data != b.local)
        PyMem_Free(b.data);
    return result;
}

static PyTypeObject VerifierType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ranked.guard._signature.Verifier",
    .tp_doc = PyDoc_STR("Verifier(keys): the HMAC-SHA256 check of a guard's signed "
                        "submissions under (key, until) pairs; see ranked.guard.signing."),
    .tp_basicsize = sizeof(VerifierObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = Verifier_new,
    .tp_dealloc = (destructor)Verifier_dealloc,
    .tp_vectorcall_offset = offsetof(VerifierObject, vectorcall),
    .tp_call = PyVectorcall_Call,
};

/* rounds(name=None): the SHA-256 compression in use (its schedule and
 * rounds), "x86" (the SHA extensions) or "c"; given a name, switches to it
 * first (for tests: both must agree with hashlib). ValueError for "x86" on a
 * processor without them. */
static PyObject *rounds(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs > 1 || (nargs == 1 && args[0] != Py_None && !PyUnicode_Check(args[0]))) {
        PyErr_SetString(PyExc_TypeError, "rounds(name=None)");
        return NULL;
    }
    if (nargs == 1 && args[0] != Py_None) {
        if (PyUnicode_CompareWithASCIIString(args[0], "c") == 0)
            sha256_block = sha256_block_c;
#if defined(__x86_64__) && defined(__GNUC__)
        else if (PyUnicode_CompareWithASCIIString(args[0], "x86") == 0 && has_sha_extensions())
            sha256_block = sha256_block_x86;
#endif
        else {
            PyErr_Format(PyExc_ValueError, "no SHA-256 rounds %R here", args[0]);
            return NULL;
        }
    }
    return PyUnicode_FromString(sha256_block == sha256_block_c ? "c" : "x86");
}

static PyMethodDef methods[] = {
    {"rounds", (PyCFunction)(void (*)(void))rounds, METH_FASTCALL,
     "rounds(name=None): the SHA-256 compression in use (\"x86\" or \"c\"), switching to `name`."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "ranked.guard._signature",
    .m_doc = "The write guard's signature check (see ranked.guard.signing).",
    .m_size = -1,
    .m_methods = methods,
};

/* Module init: the Verifier type. A new reference, or NULL with an exception. */
PyMODINIT_FUNC PyInit__signature(void) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (has_sha_extensions())
        sha256_block = sha256_block_x86;
#endif
    if (PyType_Ready(&VerifierType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m && PyModule_AddObjectRef(m, "Verifier", (PyObject *)&VerifierType) < 0)
        Py_CLEAR(m);
    return m;
}
