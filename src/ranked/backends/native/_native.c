/* _native.c - ranked.backends.native._native: the memory backend's native
 * procedures (rate-limit decisions, the board's one-call submit, the queue
 * lane), each in its own file and added to this module by PyInit__native.
 * They work on the engine's sorted sets through its C API (zset_api.h).
 */
#include "native.h"

const zset_capi_t *zset_api = NULL;

/* Procedure families added to the module, NULL-ended. */
static const native_extension native_extensions[] = {
    rl_fast_add_to_module,
    board_fast_add_to_module,
    board_read_add_to_module,
    board_method_add_to_module,
    queue_lane_add_to_module,
    ready_add_to_module,
    locked_add_to_module,
    guard_check_add_to_module,
    NULL,
};

static struct PyModuleDef native_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "ranked.backends.native._native",
    .m_doc = "The memory backend's native procedures, on the engine's C API.",
    .m_size = -1,
};

/* Module init: import the engine's C API (a version it does not know is an
 * ImportError), then add every native_extensions[] family. NULL with an
 * exception on failure. */
PyMODINIT_FUNC PyInit__native(void) {
    if (!zset_api) {
        /* PyCapsule_Import walks attributes: the engine module must be loaded. */
        PyObject *engine = PyImport_ImportModule("ranked.engine._zset");
        if (!engine)
            return NULL;
        Py_DECREF(engine);
        const zset_capi_t *api = PyCapsule_Import(ZSET_CAPI_NAME, 0);
        if (!api)
            return NULL;
        if (api->version != ZSET_CAPI_VERSION) {
            PyErr_Format(PyExc_ImportError, "ranked.engine._zset C API version %d, expected %d",
                         api->version, ZSET_CAPI_VERSION);
            return NULL;
        }
        zset_api = api;
    }
    PyObject *m = PyModule_Create(&native_module);
    if (!m)
        return NULL;
    for (const native_extension *add = native_extensions; *add; add++) {
        if ((*add)(m) < 0) {
            Py_DECREF(m);
            return NULL;
        }
    }
    return m;
}
