/* _lane.c - ranked.journal._lane.Lane: the SQLite journal's native lane.
 *
 * The hot path of a durable asyncio submission, kept out of Python: the event
 * loop hands the lane a plain board's one-member submission (Lane.submit, one
 * C call that checks the arguments, copies the event and returns an asyncio
 * future); a committer thread of the lane's own, holding no GIL, writes the
 * queued events into the journal file in one transaction per round on its
 * own SQLite connection, commits (an fsync under synchronous=FULL) and wakes
 * the loop through an eventfd; on the loop, Lane.settle applies each
 * committed event to the board's index, in commit order, through the
 * board's sequenced one-call writer (write-ahead: after the commit), and
 * answers each future. An event the writer does not apply (its answer None:
 * an earlier event missing from the index, the lock held, a refused value)
 * goes to the board's fallback, the general path, with its numbers.
 *
 * A blocking board's thread calls Lane.submit_wait instead: it waits (GIL
 * released) until its entry is written, then, holding the GIL, applies every
 * written blocking entry not applied yet, in commit order (the writer, or
 * the fallback called at once), keeping each one's answer and waking its
 * waiter: whichever waiter gets the GIL first applies for all of them, and
 * the committer thread goes on writing meanwhile.
 *
 * The store owns the schema: every statement comes from the Python store
 * (ranked/journal/sqlite.py); the lane only binds and steps them. Durability
 * modes as the store's: "always" and "none" acknowledge after the commit
 * (synchronous FULL / OFF on the lane's connection), "batch" right after the
 * insert, the transaction committed at least every max_delay_ms. The lane
 * numbers events as the store's writer does (max(seq) + 1, each board's
 * max(board_seq) + 1, read once per transaction under BEGIN IMMEDIATE), so
 * it and the store's own committer may both write the file: one at a time,
 * taking turns at the store's write gate (write_gate.h), which also holds
 * the store's failure, shared by both.
 *
 * Threads: the committer thread never touches a Python object; it reads and
 * writes only the C copies in the entries and the lane's queues, under the
 * lane's mutex. Python objects are used only by calls made with the GIL on
 * the caller's thread (submit, submit_wait, settle, flush, close, dealloc). Every Python object an entry refers to is
 * held by a strong reference of the entry. The Python wrapper closes every
 * lane at exit, before the interpreter stops taking threads.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "write_gate.h"

#define MODE_ALWAYS 0
#define MODE_BATCH 1
#define MODE_NONE 2
#define BOARD_CACHE 16
#define ERROR_LEN 400
#define GATE_TIMEOUT_MS 120000 /* the longest batch transaction, and then some */

static const char *op_text[4] = {"best", "set", "incr", "decr"};
static PyObject *op_names[4];
static PyObject *str_set_result, *str_set_exception;

/* One queued submission. The C fields are what the committer writes; the
 * Python fields (strong references) are what settle needs. */
typedef struct entry {
    struct entry *next;
    PyObject *ctx;    /* the board's (board, operator, writer, fallback, on_applied) */
    PyObject *future; /* the caller's asyncio future */
    PyObject *member, *score, *op, *actor, *reason; /* as given (op, actor, reason may be None) */
    const char *board;
    Py_ssize_t board_len;
    const char *member_bytes;
    Py_ssize_t member_len;
    const char *operation;
    double value;
    int is_int;
    long long at_us;
    const char *actor_text, *reason_text; /* NULL: SQL NULL */
    Py_ssize_t actor_len, reason_len;
    long long seq, board_seq;
    int failed;  /* the write failed: not in the journal */
    char *error; /* why (malloc'd; NULL when even that failed) */
    int blocking; /* submit_wait's: settled by the committer, waited for */
    int written;  /* blocking: in the journal (or failed), to be applied (under the mutex) */
    int settled;  /* blocking: the answer below is there (under the mutex) */
    pthread_cond_t wake; /* blocking: its waiter waits on it (no herd of waiters) */
    PyObject *result;                     /* blocking: the answer, or NULL */
    PyObject *exc_type, *exc_value, *exc_tb; /* blocking: the error, or NULLs */
    char data[];  /* the copies the pointers above point into */
} entry;

typedef struct {
    PyObject_HEAD
    pthread_mutex_t mu;
    pthread_cond_t wake;   /* the committer waits on it for entries, a flush or close */
    pthread_cond_t flushed; /* flush() waits on it */
    entry *queued_head, *queued_tail;   /* for the committer */
    entry *done_head, *done_tail;       /* written, for settle (asyncio) */
    entry *written_head, *written_tail; /* written, for their waiters (blocking) */
    int efd;
    pthread_t thread;
    int started, closing, flush_asked;
    int stopped; /* the committer has returned */
    int forked;  /* a forked child's copy: no thread, nothing to close */
    long long flushes_done;
    WriteGateObject *gate; /* shared with the store's committer */
    sqlite3 *db;
    sqlite3_stmt *insert, *last_seq, *last_board_seq, *last_run, *add_run[2];
    int mode;
    long long delay_ns;
    long long mark, every, committed_seq;
    long long events, commits; /* written and committed by the lane (read with the mutex) */
    PyObject *create_future; /* the bound loop's create_future, or NULL */
    PyObject *error_type;    /* the store's JournalError */
} LaneObject;

/* -- small helpers --------------------------------------------------------- */

/* The monotonic clock in nanoseconds. */
static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* A malloc'd copy of `text` (NULL when out of memory). */
static char *copy_text(const char *text) {
    size_t n = strlen(text) + 1;
    char *found = malloc(n);
    if (found)
        memcpy(found, text, n);
    return found;
}

/* Drop an entry's Python references and its memory (the GIL held). */
static void free_entry(entry *e) {
    Py_XDECREF(e->ctx);
    Py_XDECREF(e->future);
    Py_XDECREF(e->member);
    Py_XDECREF(e->score);
    Py_XDECREF(e->op);
    Py_XDECREF(e->actor);
    Py_XDECREF(e->reason);
    Py_XDECREF(e->result);
    Py_XDECREF(e->exc_type);
    Py_XDECREF(e->exc_value);
    Py_XDECREF(e->exc_tb);
    if (e->blocking)
        pthread_cond_destroy(&e->wake);
    free(e->error);
    free(e);
}

/* Link first..last at the end of the queue head/tail (its mutex held). */
static void link_at_end(entry **head, entry **tail, entry *first, entry *last) {
    if (*tail)
        (*tail)->next = first;
    else
        *head = first;
    *tail = last;
}

/* Wake the loop: add 1 to the eventfd (no GIL needed). */
static void signal_loop(LaneObject *l) {
    uint64_t one = 1;
    ssize_t n = write(l->efd, &one, sizeof one);
    (void)n; /* a full counter still wakes the reader */
}

/* -- the committer thread (no GIL, no Python object) ------------------------ */

/* Step a statement that returns nothing; SQLITE_OK or the error code. */
static int step_done(sqlite3_stmt *st) {
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_OK : rc;
}

/* Step a statement that returns one integer into *out (0 for NULL). */
static int step_int(sqlite3_stmt *st, long long *out) {
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *out = sqlite3_column_int64(st, 0);
        rc = SQLITE_OK;
    } else if (rc == SQLITE_DONE) {
        *out = 0;
        rc = SQLITE_OK;
    }
    sqlite3_reset(st);
    return rc;
}

/* Run one statement without arguments; SQLITE_OK or the error code. */
static int exec_sql(LaneObject *l, const char *sql) {
    return sqlite3_exec(l->db, sql, NULL, NULL, NULL);
}

typedef struct {
    char *name; /* a copy: in batch mode a transaction outlives the entries of a round */
    Py_ssize_t len;
    long long last;
} board_number;

/* Forget every cached board number (a new transaction). */
static void forget_numbers(board_number *cache, int *cached) {
    for (int i = 0; i < *cached; i++)
        free(cache[i].name);
    *cached = 0;
}

/* The next board_seq of e's board in the open transaction (cached per
 * transaction) into *number; SQLITE_OK or the error code. */
static int next_board_seq(LaneObject *l, board_number *cache, int *cached, entry *e,
                          long long *number) {
    for (int i = 0; i < *cached; i++)
        if (cache[i].len == e->board_len && memcmp(cache[i].name, e->board, e->board_len) == 0) {
            *number = ++cache[i].last;
            return SQLITE_OK;
        }
    long long last = 0;
    sqlite3_bind_text(l->last_board_seq, 1, e->board, (int)e->board_len, SQLITE_STATIC);
    int rc = step_int(l->last_board_seq, &last);
    sqlite3_clear_bindings(l->last_board_seq);
    if (rc != SQLITE_OK)
        return rc;
    char *name = *cached < BOARD_CACHE ? malloc((size_t)e->board_len + 1) : NULL;
    if (name) {
        memcpy(name, e->board, (size_t)e->board_len);
        cache[*cached].name = name;
        cache[*cached].len = e->board_len;
        cache[*cached].last = last + 1;
        (*cached)++;
    }
    /* an uncached board is read again for each event (the transaction sees its own
     * inserts): still right, only slower */
    *number = last + 1;
    return SQLITE_OK;
}

/* Insert e with the given numbers; SQLITE_OK or the error code. */
static int insert_entry(LaneObject *l, entry *e) {
    sqlite3_stmt *st = l->insert;
    sqlite3_bind_int64(st, 1, e->seq);
    sqlite3_bind_int64(st, 2, e->board_seq);
    sqlite3_bind_text(st, 3, e->board, (int)e->board_len, SQLITE_STATIC);
    sqlite3_bind_blob(st, 4, e->member_bytes, (int)e->member_len, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, e->operation, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 6, e->value);
    sqlite3_bind_blob(st, 7, e->is_int ? "i" : "", e->is_int ? 1 : 0, SQLITE_STATIC);
    sqlite3_bind_int64(st, 8, e->at_us);
    sqlite3_bind_null(st, 9);
    if (e->actor_text)
        sqlite3_bind_text(st, 10, e->actor_text, (int)e->actor_len, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 10);
    if (e->reason_text)
        sqlite3_bind_text(st, 11, e->reason_text, (int)e->reason_len, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 11);
    int rc = step_done(st);
    sqlite3_clear_bindings(st);
    return rc;
}

/* Take the write gate, open a write transaction and read the last seq into
 * *seq; SQLITE_OK or the error code (SQLITE_BUSY when the gate was not given
 * in time; the gate given back and no transaction left open on an error). */
static int begin(LaneObject *l, long long *seq) {
    if (gate_take(l->gate, GATE_LANE, GATE_TIMEOUT_MS) != 0)
        return SQLITE_BUSY;
    int rc = exec_sql(l, "BEGIN IMMEDIATE");
    if (rc == SQLITE_OK) {
        rc = step_int(l->last_seq, seq);
        if (rc != SQLITE_OK)
            exec_sql(l, "ROLLBACK");
    }
    if (rc != SQLITE_OK)
        gate_give(l->gate, GATE_LANE);
    return rc;
}

/* End the open transaction with `sql` (COMMIT or ROLLBACK) and give the
 * gate back once it is over; SQLITE_OK or the error code (a failed COMMIT is
 * rolled back: the transaction is always over). */
static int end(LaneObject *l, const char *sql) {
    int rc = exec_sql(l, sql);
    if (rc != SQLITE_OK && sqlite3_get_autocommit(l->db) == 0)
        exec_sql(l, "ROLLBACK");
    gate_give(l->gate, GATE_LANE);
    return rc;
}

/* Write the events committed since the last run of the member index as one
 * more run, in a transaction of its own, once there are `every` of them
 * (the store's upkeep, with the mark read again inside the transaction: the
 * store's own committer may have written a run). Errors are left for the
 * next call. */
static void upkeep(LaneObject *l) {
    if (l->committed_seq - l->mark < l->every)
        return;
    long long mark = 0, last = 0;
    if (begin(l, &last) != SQLITE_OK)
        return;
    int rc = step_int(l->last_run, &mark);
    if (rc == SQLITE_OK && last - mark >= l->every) {
        for (int i = 0; i < 2 && rc == SQLITE_OK; i++) {
            sqlite3_bind_int64(l->add_run[i], 1, mark);
            sqlite3_bind_int64(l->add_run[i], 2, last);
            rc = step_done(l->add_run[i]);
            sqlite3_clear_bindings(l->add_run[i]);
        }
        if (rc == SQLITE_OK)
            mark = last;
    }
    if (end(l, rc == SQLITE_OK ? "COMMIT" : "ROLLBACK") == SQLITE_OK && rc == SQLITE_OK) {
        l->mark = mark;
        l->committed_seq = last;
    }
}

/* Acknowledged events of batch mode were rolled back: record the store's
 * failure at the write gate, so that neither writer takes another append. */
static void lost(LaneObject *l, const char *why) {
    char text[ERROR_LEN + 200];
    snprintf(text, sizeof text,
             "a commit failed after appends were acknowledged (batch mode): %s; they are"
             " lost, and the journal takes no more appends (reopen it)",
             why);
    gate_fail(l->gate, text);
}

/* Give every entry of `list` the error `why` (a copy each). */
static void fail_all(entry *list, const char *why) {
    for (entry *e = list; e; e = e->next)
        if (!e->failed) {
            e->failed = 1;
            e->error = copy_text(why);
        }
}

/* Hand a written round back (the mutex not held): its blocking entries go to
 * the written queue and their waiters are woken, the others go to the done
 * queue and the loop is woken. Order is kept within each. */
static void hand_back(LaneObject *l, entry *list) {
    entry *loop_head = NULL, **loop_tail = &loop_head, *last = NULL;
    entry *blocking = NULL, **blocking_tail = &blocking;
    for (entry *e = list, *next; e; e = next) {
        next = e->next;
        e->next = NULL;
        if (e->blocking) {
            *blocking_tail = e;
            blocking_tail = &e->next;
        } else {
            *loop_tail = e;
            loop_tail = &e->next;
            last = e;
        }
    }
    if (blocking) {
        pthread_mutex_lock(&l->mu);
        entry *tail = blocking;
        for (entry *e = blocking; e; e = e->next) {
            e->written = 1;
            pthread_cond_signal(&e->wake);
            tail = e;
        }
        link_at_end(&l->written_head, &l->written_tail, blocking, tail);
        pthread_mutex_unlock(&l->mu);
    }
    if (!loop_head)
        return;
    pthread_mutex_lock(&l->mu);
    link_at_end(&l->done_head, &l->done_tail, loop_head, last);
    pthread_mutex_unlock(&l->mu);
    signal_loop(l);
}

/* The committer: write each round of queued entries as the mode says, hand
 * them back, keep the member index; until close. Its thread is named
 * "ranked-lane" (what ps, top and benchmarks/service.py show). */
static void *committer(void *arg) {
    LaneObject *l = arg;
    pthread_setname_np(pthread_self(), "ranked-lane"); /* for top, ps and benchmarks */
    int in_txn = 0, acked_open = 0;
    long long seq = 0, deadline = 0;
    board_number cache[BOARD_CACHE];
    int cached = 0;
    char why[ERROR_LEN];
    for (;;) {
        pthread_mutex_lock(&l->mu);
        while (!l->queued_head && !l->closing && !l->flush_asked) {
            if (!in_txn) {
                pthread_cond_wait(&l->wake, &l->mu);
                continue;
            }
            long long left = deadline - now_ns();
            if (left <= 0)
                break;
            struct timespec until;
            clock_gettime(CLOCK_MONOTONIC, &until);
            long long at = (long long)until.tv_sec * 1000000000LL + until.tv_nsec + left;
            until.tv_sec = at / 1000000000LL;
            until.tv_nsec = at % 1000000000LL;
            pthread_cond_timedwait(&l->wake, &l->mu, &until);
        }
        entry *round = l->queued_head;
        l->queued_head = l->queued_tail = NULL;
        int closing = l->closing, flushing = l->flush_asked;
        l->flush_asked = 0;
        pthread_mutex_unlock(&l->mu);

        int rc = SQLITE_OK;
        long long count = 0;
        if (round) {
            if (!in_txn) {
                rc = begin(l, &seq);
                if (rc == SQLITE_OK) {
                    in_txn = 1;
                    forget_numbers(cache, &cached);
                    deadline = now_ns() + l->delay_ns;
                }
            }
            for (entry *e = round; e && rc == SQLITE_OK; e = e->next) {
                long long number = 0;
                rc = next_board_seq(l, cache, &cached, e, &number);
                if (rc != SQLITE_OK)
                    break;
                e->seq = ++seq;
                e->board_seq = number;
                rc = insert_entry(l, e);
                count++;
            }
            if (rc == SQLITE_OK && l->mode != MODE_BATCH) {
                rc = end(l, "COMMIT");
                in_txn = 0;
                if (rc == SQLITE_OK)
                    l->committed_seq = seq;
            }
            if (rc != SQLITE_OK) {
                snprintf(why, sizeof why, "journal write failed: %s",
                         rc == SQLITE_BUSY && !in_txn ? "the write gate was not given in time"
                                                      : sqlite3_errmsg(l->db));
                if (in_txn)
                    end(l, "ROLLBACK");
                in_txn = 0;
                fail_all(round, why);
                if (acked_open) /* the open transaction's acknowledged events are gone */
                    lost(l, why);
                acked_open = 0;
                count = 0;
            } else if (l->mode == MODE_BATCH) {
                acked_open = 1;
            }
            pthread_mutex_lock(&l->mu);
            l->events += count;
            if (!in_txn && count)
                l->commits++;
            pthread_mutex_unlock(&l->mu);
            hand_back(l, round);
        }
        if (in_txn && (closing || flushing || now_ns() >= deadline)) {
            rc = end(l, "COMMIT");
            if (rc != SQLITE_OK) { /* acknowledged events are gone: take no more */
                snprintf(why, sizeof why, "%s", sqlite3_errmsg(l->db));
                lost(l, why);
            } else {
                l->committed_seq = seq;
                pthread_mutex_lock(&l->mu);
                l->commits++;
                pthread_mutex_unlock(&l->mu);
            }
            in_txn = 0;
            acked_open = 0;
        }
        if (!in_txn)
            upkeep(l);
        if (flushing && !in_txn) {
            pthread_mutex_lock(&l->mu);
            l->flushes_done++;
            pthread_cond_broadcast(&l->flushed);
            pthread_mutex_unlock(&l->mu);
        }
        if (closing && !in_txn) {
            pthread_mutex_lock(&l->mu);
            int more = l->queued_head != NULL;
            if (!more) {
                l->stopped = 1;
                l->flushes_done++;
                pthread_cond_broadcast(&l->flushed);
            }
            pthread_mutex_unlock(&l->mu);
            if (!more) {
                forget_numbers(cache, &cached);
                return NULL;
            }
        }
    }
}

/* -- Python methods --------------------------------------------------------- */

/* A UTF-8 view of an exact str (cached in the object), or of bytes; NULL with
 * no exception left set for anything else or a str with lone surrogates. */
static const char *text_of(PyObject *o, Py_ssize_t *len, int bytes_ok) {
    if (PyUnicode_CheckExact(o)) {
        const char *found = PyUnicode_AsUTF8AndSize(o, len);
        if (!found)
            PyErr_Clear();
        return found;
    }
    if (bytes_ok && PyBytes_CheckExact(o)) {
        *len = PyBytes_GET_SIZE(o);
        return PyBytes_AS_STRING(o);
    }
    return NULL;
}

/* An optional note (actor, reason): None, or a non-empty exact str. 0 with
 * *text NULL for None, 0 with its UTF-8 view, or 1 when the lane must pass. */
static int note_of(PyObject *o, const char **text, Py_ssize_t *len) {
    *text = NULL;
    *len = 0;
    if (o == Py_None)
        return 0;
    if (!PyUnicode_CheckExact(o) || PyUnicode_GET_LENGTH(o) == 0)
        return 1;
    *text = text_of(o, len, 0);
    return *text == NULL;
}

/* Build the entry of a call (ctx, member, score, operator, actor, reason,
 * at_us) into *out: 0, or 1 when the lane does not take the call (nothing
 * made, no exception: the general path must judge it), or -1 with an
 * exception (the store's error when the lane failed after acknowledging, in
 * batch mode). The lane does not take: a member that is not an exact str or
 * bytes, a score that is not an exact finite float or an exact int below
 * 2**53 in magnitude, an unknown operator, a note that is not None or a
 * non-empty str, a closing lane. O(event size). */
static int make_entry(LaneObject *l, PyObject *const *args, Py_ssize_t nargs, entry **out) {
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "(ctx, member, score, operator, actor, reason, at_us)");
        return -1;
    }
    PyObject *ctx = args[0], *member = args[1], *score = args[2], *op = args[3];
    char *failed = gate_failure(l->gate);
    if (failed) {
        PyErr_SetString(l->error_type, failed);
        free(failed);
        return -1;
    }
    if (pthread_equal(pthread_self(), l->thread))
        return 1; /* a call from the lane's own thread (a fallback's): it cannot wait there */
    if (!PyTuple_CheckExact(ctx) || PyTuple_GET_SIZE(ctx) != 5)
        return 1;
    Py_ssize_t board_len, member_len, actor_len, reason_len;
    const char *board = text_of(PyTuple_GET_ITEM(ctx, 0), &board_len, 0);
    const char *who = text_of(member, &member_len, 1);
    if (!board || !who)
        return 1;
    double value;
    int is_int = 0;
    if (PyFloat_CheckExact(score)) {
        value = PyFloat_AS_DOUBLE(score);
    } else if (PyLong_CheckExact(score)) {
        value = PyLong_AsDouble(score);
        if (value == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            return 1;
        }
        if (!(value > -0x1p53 && value < 0x1p53))
            return 1; /* the general path decides whether a float64 holds it */
        is_int = 1;
    } else {
        return 1;
    }
    if (!isfinite(value))
        return 1;
    PyObject *op_name = op == Py_None ? PyTuple_GET_ITEM(ctx, 1) : op;
    const char *operation = NULL;
    for (int i = 0; i < 4 && !operation; i++)
        if (op_name == op_names[i] ||
            (PyUnicode_CheckExact(op_name) && PyUnicode_Compare(op_name, op_names[i]) == 0))
            operation = op_text[i];
    if (PyErr_Occurred())
        return -1;
    if (!operation)
        return 1;
    const char *actor, *reason;
    if (note_of(args[4], &actor, &actor_len) || note_of(args[5], &reason, &reason_len))
        return 1;
    long long at_us = PyLong_CheckExact(args[6]) ? PyLong_AsLongLong(args[6]) : -1;
    if (at_us < 0) {
        PyErr_Clear();
        return 1;
    }
    size_t size = sizeof(entry) + (size_t)board_len + (size_t)member_len + (size_t)actor_len +
                  (size_t)reason_len + 4;
    entry *e = calloc(1, size);
    if (!e) {
        PyErr_NoMemory();
        return -1;
    }
    char *at = e->data;
    memcpy(at, board, (size_t)board_len);
    e->board = at;
    e->board_len = board_len;
    at += board_len + 1;
    memcpy(at, who, (size_t)member_len);
    e->member_bytes = at;
    e->member_len = member_len;
    at += member_len + 1;
    if (actor) {
        memcpy(at, actor, (size_t)actor_len);
        e->actor_text = at;
        e->actor_len = actor_len;
        at += actor_len + 1;
    }
    if (reason) {
        memcpy(at, reason, (size_t)reason_len);
        e->reason_text = at;
        e->reason_len = reason_len;
    }
    e->operation = operation;
    e->value = value;
    e->is_int = is_int;
    e->at_us = at_us;
    e->ctx = Py_NewRef(ctx);
    e->member = Py_NewRef(member);
    e->score = Py_NewRef(score);
    e->op = Py_NewRef(op_name); /* the operation the journal records, resolved */
    e->actor = Py_NewRef(args[4]);
    e->reason = Py_NewRef(args[5]);
    *out = e;
    return 0;
}

/* Queue e for the committer (the mutex not held): 1, or 0 when the lane is
 * closing (checked under the mutex, so that nothing is queued after the
 * committer's last look at the queue; e is left to the caller). */
static int enqueue(LaneObject *l, entry *e) {
    pthread_mutex_lock(&l->mu);
    int open = !l->closing;
    if (open) {
        link_at_end(&l->queued_head, &l->queued_tail, e, e);
        pthread_cond_signal(&l->wake);
    }
    pthread_mutex_unlock(&l->mu);
    return open;
}

/* submit(ctx, member, score, operator, actor, reason, at_us) -> future | None:
 * queue the event of a one-member submission of ctx's board and return the
 * future settle answers (on the bound loop); None when the lane does not take
 * it (make_entry) or has no loop bound. */
static PyObject *Lane_submit(LaneObject *l, PyObject *const *args, Py_ssize_t nargs) {
    if (!l->create_future)
        Py_RETURN_NONE;
    entry *e;
    int made = make_entry(l, args, nargs, &e);
    if (made < 0)
        return NULL;
    if (made > 0)
        Py_RETURN_NONE;
    PyObject *future = PyObject_CallNoArgs(l->create_future);
    if (!future) {
        free_entry(e);
        return NULL;
    }
    e->future = Py_NewRef(future);
    if (!enqueue(l, e)) {
        free_entry(e);
        Py_DECREF(future);
        Py_RETURN_NONE;
    }
    return future;
}

static void drain_blocking(LaneObject *l, entry *mine);

/* submit_wait(ctx, member, score, operator, actor, reason, at_us) -> answer |
 * None: the blocking form. Queue the event, wait (GIL released) until the
 * committer has written it, then apply what is written (drain_blocking):
 * the writer's answer, or the fallback's (called at once); its error is
 * raised here. None when the lane does not take it (make_entry). */
static PyObject *Lane_submit_wait(LaneObject *l, PyObject *const *args, Py_ssize_t nargs) {
    entry *e;
    int made = make_entry(l, args, nargs, &e);
    if (made < 0)
        return NULL;
    if (made > 0)
        Py_RETURN_NONE;
    int rc = pthread_cond_init(&e->wake, NULL);
    if (rc != 0) {
        free_entry(e);
        errno = rc;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    e->blocking = 1;
    if (!enqueue(l, e)) {
        free_entry(e);
        Py_RETURN_NONE;
    }
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&l->mu);
    while (!e->written)
        pthread_cond_wait(&e->wake, &l->mu);
    pthread_mutex_unlock(&l->mu);
    Py_END_ALLOW_THREADS
    drain_blocking(l, e);
    PyObject *result = e->result;
    e->result = NULL;
    if (!result) {
        if (e->exc_type)
            PyErr_Restore(e->exc_type, e->exc_value, e->exc_tb);
        else
            PyErr_SetString(PyExc_SystemError, "the journal lane lost an answer");
        e->exc_type = e->exc_value = e->exc_tb = NULL;
    }
    free_entry(e);
    return result;
}

/* Answer a future with `value` (method set_result or set_exception); a future
 * already done (its caller cancelled) keeps its state. */
static void answer(PyObject *future, PyObject *method, PyObject *value) {
    PyObject *done = PyObject_CallMethodOneArg(future, method, value);
    if (done) {
        Py_DECREF(done);
        return;
    }
    PyObject *type, *error, *tb;
    PyErr_Fetch(&type, &error, &tb); /* an InvalidStateError: its caller cancelled */
    PyObject *finished = PyObject_CallMethod(future, "done", NULL);
    int cancelled = finished == Py_True;
    Py_XDECREF(finished);
    if (cancelled) {
        Py_XDECREF(type);
        Py_XDECREF(error);
        Py_XDECREF(tb);
        PyErr_Clear();
    } else {
        PyErr_Restore(type, error, tb);
        PyErr_WriteUnraisable(future);
    }
}

/* Counts of the writer's applies per run of entries of one board. */
typedef struct {
    PyObject *ctx; /* the run's board (strong), or NULL */
    long long written;
} run_count;

static void applied(PyObject *ctx, long long count);

/* Start counting e's board: report the previous run's count when e's board
 * differs from it. */
static void run_of(run_count *run, entry *e) {
    if (run->ctx == e->ctx)
        return;
    applied(run->ctx, run->written);
    Py_XSETREF(run->ctx, Py_NewRef(e->ctx));
    run->written = 0;
}

/* Report the last run's count and let go of its board. */
static void end_runs(run_count *run) {
    applied(run->ctx, run->written);
    Py_CLEAR(run->ctx);
}

/* Call ctx's on_applied(count); an error it raises is reported, not raised. */
static void applied(PyObject *ctx, long long count) {
    if (!ctx || !count)
        return;
    PyObject *n = PyLong_FromLongLong(count);
    PyObject *done = n ? PyObject_CallOneArg(PyTuple_GET_ITEM(ctx, 4), n) : NULL;
    Py_XDECREF(n);
    if (done)
        Py_DECREF(done);
    else
        PyErr_WriteUnraisable(ctx);
}

/* The exception being raised, normalized with its traceback (a new
 * reference; the error indicator cleared). */
static PyObject *take_exception(void) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value && tb)
        PyException_SetTraceback(value, tb);
    Py_XDECREF(type);
    Py_XDECREF(tb);
    return value;
}

/* Settle one written entry (the GIL held): apply it through the board's
 * writer, or hand it to the board's fallback (the general path) with its
 * numbers, and answer it: a future gets the writer's answer or error (the
 * fallback answers it itself, later, in order); a blocking entry keeps the
 * writer's or the fallback's answer or error. 1 when the writer applied it,
 * else 0. */
static int settle_one(LaneObject *l, entry *e) {
    PyObject *result = NULL; /* new reference: the answer */
    int written = 0, answered = 0;
    if (e->failed) {
        PyErr_SetString(l->error_type, e->error ? e->error : "journal write failed");
    } else {
        PyObject *after = PyLong_FromLongLong(e->board_seq - 1);
        PyObject *last = PyLong_FromLongLong(e->board_seq);
        PyObject *seq = PyLong_FromLongLong(e->seq);
        PyObject *at = PyLong_FromLongLong(e->at_us);
        if (after && last && seq && at) {
            PyObject *call[5] = {after, last, e->member, e->score, e->op};
            result = PyObject_Vectorcall(PyTuple_GET_ITEM(e->ctx, 2), call, 5, NULL);
            if (result && result != Py_None) {
                written = 1;
            } else if (result) { /* the general path, in order, with the event's numbers */
                Py_CLEAR(result);
                PyObject *waiter = e->blocking ? Py_None : e->future;
                PyObject *fall[9] = {seq,   last,      e->member, e->score, e->op,
                                     at,    e->actor,  e->reason, waiter};
                result = PyObject_Vectorcall(PyTuple_GET_ITEM(e->ctx, 3), fall, 9, NULL);
                if (result && !e->blocking) { /* queued: it answers the future */
                    Py_CLEAR(result);
                    answered = 1;
                }
            }
        }
        Py_XDECREF(after);
        Py_XDECREF(last);
        Py_XDECREF(seq);
        Py_XDECREF(at);
    }
    if (e->blocking) {
        if (result)
            e->result = result;
        else
            PyErr_Fetch(&e->exc_type, &e->exc_value, &e->exc_tb);
        return written;
    }
    if (result) {
        answer(e->future, str_set_result, result);
        Py_DECREF(result);
    } else if (!answered) {
        PyObject *error = take_exception();
        if (error) {
            answer(e->future, str_set_exception, error);
            Py_DECREF(error);
        }
    }
    return written;
}

/* Apply, with the GIL, the written blocking entries not applied yet, in
 * commit order, until `mine` is settled: each gets its answer and its waiter
 * is woken (who frees it: nothing here touches an entry once it is marked
 * settled). When the queue is empty but `mine` is not settled, another
 * waiter is applying it (its Python code let the GIL go): wait for that. */
static void drain_blocking(LaneObject *l, entry *mine) {
    run_count run = {NULL, 0};
    for (;;) {
        pthread_mutex_lock(&l->mu);
        int done = mine->settled;
        entry *list = done ? NULL : l->written_head;
        if (list)
            l->written_head = l->written_tail = NULL;
        pthread_mutex_unlock(&l->mu);
        if (done)
            break;
        if (!list) {
            Py_BEGIN_ALLOW_THREADS
            pthread_mutex_lock(&l->mu);
            while (!mine->settled)
                pthread_cond_wait(&mine->wake, &l->mu);
            pthread_mutex_unlock(&l->mu);
            Py_END_ALLOW_THREADS
            break;
        }
        for (entry *e = list, *next; e; e = next) {
            next = e->next;
            run_of(&run, e);
            run.written += settle_one(l, e);
            pthread_mutex_lock(&l->mu);
            e->settled = 1;
            pthread_cond_signal(&e->wake);
            pthread_mutex_unlock(&l->mu);
        }
    }
    end_runs(&run);
}

/* settle(): on the bound loop, when the eventfd is readable (and once after
 * close): settle every written entry in commit order (settle_one), then call
 * each board's on_applied with how many its writer applied. Never raises. */
static PyObject *Lane_settle(LaneObject *l, PyObject *unused) {
    uint64_t count;
    if (l->efd >= 0) {
        ssize_t n = read(l->efd, &count, sizeof count);
        (void)n; /* EAGAIN: nothing was signalled; the queue decides */
    }
    pthread_mutex_lock(&l->mu);
    entry *list = l->done_head;
    l->done_head = l->done_tail = NULL;
    pthread_mutex_unlock(&l->mu);
    run_count run = {NULL, 0};
    while (list) {
        entry *e = list;
        list = e->next;
        run_of(&run, e);
        run.written += settle_one(l, e);
        free_entry(e);
    }
    end_runs(&run);
    Py_RETURN_NONE;
}

/* bind(create_future | None): the loop the futures belong to (its
 * create_future), or None to unbind. */
static PyObject *Lane_bind(LaneObject *l, PyObject *create_future) {
    Py_XSETREF(l->create_future, create_future == Py_None ? NULL : Py_NewRef(create_future));
    Py_RETURN_NONE;
}

/* fileno(): the eventfd settle reads (readable when written entries wait). */
static PyObject *Lane_fileno(LaneObject *l, PyObject *unused) { return PyLong_FromLong(l->efd); }

/* counts(): (events written, commits) by the lane. */
static PyObject *Lane_counts(LaneObject *l, PyObject *unused) {
    pthread_mutex_lock(&l->mu);
    long long events = l->events, commits = l->commits;
    pthread_mutex_unlock(&l->mu);
    return Py_BuildValue("(LL)", events, commits);
}

/* Wait (GIL released) until the committer has committed what was queued
 * before, or has stopped. */
static void wait_committed(LaneObject *l, int closing) {
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&l->mu);
    long long seen = l->flushes_done;
    if (closing)
        l->closing = 1;
    else
        l->flush_asked = 1;
    pthread_cond_signal(&l->wake);
    while (l->flushes_done == seen && !l->stopped)
        pthread_cond_wait(&l->flushed, &l->mu);
    pthread_mutex_unlock(&l->mu);
    Py_END_ALLOW_THREADS
}

/* Raise the store's error when called on the lane's own thread (a fallback
 * or on_applied that flushes or closes would wait for itself); 0, or -1. */
static int not_on_lane_thread(LaneObject *l, const char *what) {
    if (l->started && pthread_equal(pthread_self(), l->thread)) {
        PyErr_Format(l->error_type, "the journal's lane cannot %s from its own thread", what);
        return -1;
    }
    return 0;
}

/* flush(): commit everything queued so far (batch mode's open transaction). */
static PyObject *Lane_flush(LaneObject *l, PyObject *unused) {
    if (not_on_lane_thread(l, "flush") < 0)
        return NULL;
    if (l->started && !l->forked)
        wait_committed(l, 0);
    Py_RETURN_NONE;
}

/* Stop the committer (after it has written and committed what is queued),
 * then close the connection. Idempotent; the GIL released while waiting. A
 * forked child's copy has no thread and shares the parent's connection: it
 * touches neither. */
static void stop(LaneObject *l) {
    if (l->forked)
        return;
    if (l->started) {
        wait_committed(l, 1);
        Py_BEGIN_ALLOW_THREADS
        pthread_join(l->thread, NULL);
        Py_END_ALLOW_THREADS
        l->started = 0;
    }
    sqlite3_stmt **statements[] = {&l->insert,   &l->last_seq,   &l->last_board_seq,
                                   &l->last_run, &l->add_run[0], &l->add_run[1]};
    for (size_t i = 0; i < sizeof statements / sizeof *statements; i++) {
        sqlite3_finalize(*statements[i]);
        *statements[i] = NULL;
    }
    if (l->db) {
        sqlite3_close(l->db);
        l->db = NULL;
    }
    pthread_mutex_lock(&l->mu);
    l->closing = 1;
    pthread_mutex_unlock(&l->mu);
}

/* close(): write and commit what is queued, stop the thread, close the
 * connection; written entries wait for settle. Idempotent. */
static PyObject *Lane_close(LaneObject *l, PyObject *unused) {
    if (not_on_lane_thread(l, "close") < 0)
        return NULL;
    stop(l);
    Py_RETURN_NONE;
}

/* forget_after_fork(): in a forked child: this copy has no committer thread
 * (only the forking thread survives a fork) and must not touch the parent's
 * connection nor the mutexes the parent's threads may have held; it takes
 * nothing more and closes nothing. */
static PyObject *Lane_forget_after_fork(LaneObject *l, PyObject *unused) {
    l->forked = 1;
    l->closing = 1;
    l->started = 0;
    Py_RETURN_NONE;
}

/* Lane(path, synchronous, batch, max_delay_ms, insert, last_seq,
 * last_board_seq, last_run, add_run, every, error_type): a lane writing the
 * journal file at path (its schema made by the store) with the store's
 * statements (add_run: the two statements of one run of the member index,
 * numbered parameters ?1 after, ?2 last). Starts its committer thread. */
static PyObject *Lane_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    const char *path, *synchronous, *sql[4], *run_sql[2];
    int batch;
    long long delay_ms, every;
    PyObject *error_type, *gate;
    static char *names[] = {"path",     "synchronous",    "batch",    "max_delay_ms",
                            "insert",   "last_seq",       "last_board_seq", "last_run",
                            "add_run",  "every",          "error_type", "gate", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "sspLssss(ss)LOO!", names, &path, &synchronous,
                                     &batch, &delay_ms, &sql[0], &sql[1], &sql[2], &sql[3],
                                     &run_sql[0], &run_sql[1], &every, &error_type,
                                     &WriteGateType, &gate))
        return NULL;
    if (!PyType_Check(error_type) ||
        !PyType_IsSubtype((PyTypeObject *)error_type, (PyTypeObject *)PyExc_Exception)) {
        PyErr_SetString(PyExc_TypeError, "error_type must be an exception type");
        return NULL;
    }
    if (strcmp(synchronous, "FULL") != 0 && strcmp(synchronous, "OFF") != 0) {
        PyErr_SetString(PyExc_ValueError, "synchronous must be 'FULL' or 'OFF'");
        return NULL;
    }
    if (delay_ms < 1 || every < 1) {
        PyErr_SetString(PyExc_ValueError, "max_delay_ms and every must be >= 1");
        return NULL;
    }
    LaneObject *l = (LaneObject *)type->tp_alloc(type, 0);
    if (!l)
        return NULL;
    l->efd = -1;
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->wake, &attr);
    pthread_cond_init(&l->flushed, NULL);
    pthread_condattr_destroy(&attr);
    l->mode = batch ? MODE_BATCH : (strcmp(synchronous, "OFF") == 0 ? MODE_NONE : MODE_ALWAYS);
    l->delay_ns = delay_ms * 1000000LL;
    l->every = every;
    l->error_type = Py_NewRef(error_type);
    l->gate = (WriteGateObject *)Py_NewRef(gate);
    l->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (l->efd < 0) {
        PyErr_SetFromErrno(PyExc_OSError);
        Py_DECREF(l);
        return NULL;
    }
    int rc = sqlite3_open_v2(path, &l->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX, NULL);
    char pragma[64];
    snprintf(pragma, sizeof pragma, "PRAGMA synchronous=%s", synchronous);
    if (rc == SQLITE_OK)
        rc = sqlite3_busy_timeout(l->db, 60000);
    if (rc == SQLITE_OK)
        rc = exec_sql(l, pragma);
    sqlite3_stmt **targets[6] = {&l->insert,   &l->last_seq,   &l->last_board_seq,
                                 &l->last_run, &l->add_run[0], &l->add_run[1]};
    const char *texts[6] = {sql[0], sql[1], sql[2], sql[3], run_sql[0], run_sql[1]};
    for (int i = 0; i < 6 && rc == SQLITE_OK; i++)
        rc = sqlite3_prepare_v3(l->db, texts[i], -1, SQLITE_PREPARE_PERSISTENT, targets[i], NULL);
    if (rc == SQLITE_OK)
        rc = step_int(l->last_run, &l->mark);
    if (rc == SQLITE_OK)
        rc = step_int(l->last_seq, &l->committed_seq);
    if (rc != SQLITE_OK) {
        PyErr_Format(error_type, "journal %s cannot be opened by its lane: %s", path,
                     l->db ? sqlite3_errmsg(l->db) : sqlite3_errstr(rc));
        Py_DECREF(l);
        return NULL;
    }
    if (pthread_create(&l->thread, NULL, committer, l) != 0) {
        PyErr_SetString(PyExc_RuntimeError, "cannot start the journal lane's thread");
        Py_DECREF(l);
        return NULL;
    }
    l->started = 1;
    return (PyObject *)l;
}

/* Drop the lane: stop its thread, close its connection and eventfd, and
 * drop every entry not settled (their futures are never answered: only a
 * lane nobody holds is freed, so nobody waits on them through it). */
static void Lane_dealloc(LaneObject *l) {
    PyObject_GC_UnTrack(l);
    stop(l);
    entry *lists[3] = {l->queued_head, l->done_head, l->written_head};
    l->queued_head = l->queued_tail = l->done_head = l->done_tail = NULL;
    l->written_head = l->written_tail = NULL;
    for (int i = 0; i < 3; i++)
        while (lists[i]) {
            entry *e = lists[i];
            lists[i] = e->next;
            free_entry(e);
        }
    if (l->efd >= 0)
        close(l->efd);
    Py_CLEAR(l->create_future);
    Py_CLEAR(l->error_type);
    Py_CLEAR(l->gate);
    if (!l->forked) { /* a forked child's copy may hold a mutex the parent's thread held */
        pthread_mutex_destroy(&l->mu);
        pthread_cond_destroy(&l->wake);
        pthread_cond_destroy(&l->flushed);
    }
    Py_TYPE(l)->tp_free((PyObject *)l);
}

/* The references the collector may follow: the loop's create_future and the
 * error type (entries are owned by the queues and cleared by settle). */
static int Lane_traverse(LaneObject *l, visitproc visit, void *arg) {
    Py_VISIT(l->create_future);
    Py_VISIT(l->error_type);
    Py_VISIT(l->gate);
    return 0;
}

/* Break cycles through the bound loop. */
static int Lane_clear(LaneObject *l) {
    Py_CLEAR(l->create_future);
    return 0;
}

static PyMethodDef Lane_methods[] = {
    {"submit", (PyCFunction)(void (*)(void))Lane_submit, METH_FASTCALL,
     "submit(ctx, member, score, operator, actor, reason, at_us) -> future | None"},
    {"submit_wait", (PyCFunction)(void (*)(void))Lane_submit_wait, METH_FASTCALL,
     "submit_wait(ctx, member, score, operator, actor, reason, at_us) -> answer | None"},
    {"settle", (PyCFunction)Lane_settle, METH_NOARGS, "settle(): answer the written entries"},
    {"bind", (PyCFunction)Lane_bind, METH_O, "bind(create_future | None)"},
    {"fileno", (PyCFunction)Lane_fileno, METH_NOARGS, "fileno(): the eventfd settle reads"},
    {"counts", (PyCFunction)Lane_counts, METH_NOARGS, "counts(): (events, commits)"},
    {"flush", (PyCFunction)Lane_flush, METH_NOARGS, "flush(): commit what is queued"},
    {"close", (PyCFunction)Lane_close, METH_NOARGS, "close(): commit, stop, close"},
    {"forget_after_fork", (PyCFunction)Lane_forget_after_fork, METH_NOARGS,
     "forget_after_fork(): in a forked child, drop the parent's thread and connection"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject LaneType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ranked.journal._lane.Lane",
    .tp_basicsize = sizeof(LaneObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "The SQLite journal's native lane (see ranked.journal.lane).",
    .tp_new = Lane_new,
    .tp_dealloc = (destructor)Lane_dealloc,
    .tp_traverse = (traverseproc)Lane_traverse,
    .tp_clear = (inquiry)Lane_clear,
    .tp_methods = Lane_methods,
};

/* sqlite_address(): the address of sqlite3_libversion in the library this
 * module uses (to check that Python's sqlite3 uses the same one). */
static PyObject *sqlite_address(PyObject *module, PyObject *unused) {
    return PyLong_FromVoidPtr((void *)&sqlite3_libversion);
}

static PyMethodDef module_functions[] = {
    {"sqlite_address", sqlite_address, METH_NOARGS,
     "sqlite_address(): where this module's SQLite library is"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef lane_module = {
    PyModuleDef_HEAD_INIT, "ranked.journal._lane", "The SQLite journal's native lane.", -1,
    module_functions, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__lane(void) {
    for (int i = 0; i < 4; i++)
        if (!(op_names[i] = PyUnicode_InternFromString(op_text[i])))
            return NULL;
    if (!(str_set_result = PyUnicode_InternFromString("set_result")) ||
        !(str_set_exception = PyUnicode_InternFromString("set_exception")))
        return NULL;
    if (PyType_Ready(&LaneType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&lane_module);
    if (!m)
        return NULL;
    if (PyModule_AddObjectRef(m, "Lane", (PyObject *)&LaneType) < 0 ||
        write_gate_add_to_module(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
