/* rl_cores.c - the five rate-limiter cores of RateDecider (rl_fast.c), twins
 * of ranked/ratelimit/_memory.py: the same steps, the same integer and IEEE
 * double operations in the same order, so decisions and stored state are
 * bit-identical. Each runs under the backend's lock; each returns SLOW before
 * writing anything when the Python core must decide.
 */
#include "rl_fast.h"

/* Fixed window: one counter per window (_memory.fixed_window); a rl_core. */
static PyObject *fixed_window(RateDeciderObject *self, const hit *h) {
    PyObject *cell;
    int rc = rl_get_cell(self, h, &cell);
    if (rc)
        return rc < 0 ? NULL : SLOW;
    int64_t start = h->now, count = 0, cell_start = 0;
    if (cell) {
        if (!small_int(slot_get(cell, self->slots[0]), &cell_start) ||
            !small_int(slot_get(cell, self->slots[1]), &count)) {
            Py_DECREF(cell);
            return SLOW;
        }
        if (h->now < cell_start + self->window)
            start = cell_start;
        else
            count = 0;
    }
    int64_t expires = start + self->window;
    if (count + h->cost > self->limit) {
        Py_XDECREF(cell);
        double retry = (double)(expires - h->now) / 1e6;
        return rl_decision(self, 0, PyLong_FromLongLong(self->limit - count), retry,
                        PyFloat_FromDouble(retry));
    }
    count += h->cost;
    if (h->consume && h->cost > 0) {
        if (!cell && !(cell = rl_store_cell(self, h)))
            return NULL;
        if (slot_set(cell, self->slots[1], PyLong_FromLongLong(count)) < 0 ||
            (start == h->now &&
             (slot_set(cell, self->slots[0], PyLong_FromLongLong(start)) < 0 ||
              rl_keep_deadline(self, h, h->now_ms + self->window_ms) < 0))) {
            Py_DECREF(cell);
            return NULL;
        }
    }
    Py_XDECREF(cell);
    double reset = count > 0 ? (double)(expires - h->now) / 1e6 : 0.0;
    return rl_decision(self, 1, PyLong_FromLongLong(self->limit - count), reset, none_ref());
}

/* The (instant, units) pair of a log entry, each within +-BOUND; 0 if not. */
static int log_entry(PyObject *entry, int64_t *instant, int64_t *units) {
    return entry && PyTuple_CheckExact(entry) && PyTuple_GET_SIZE(entry) == 2 &&
           small_int(PyTuple_GET_ITEM(entry, 0), instant) &&
           small_int(PyTuple_GET_ITEM(entry, 1), units);
}

/* What the Python core learns from a log's entries, oldest first, in one
 * pass that stops as soon as it knows: *stale = units of the oldest entries
 * at or before `cutoff`; then, when total - stale + cost exceeds the limit,
 * *retry_at = the live instant whose expiry lets the hit in (INT64_MIN when
 * none does). 1 when every entry read is regular, 0: go slow, -1: error. */
static int scan_log(RateDeciderObject *self, PyObject *entries, int64_t cutoff, int64_t total,
                    int64_t cost, int64_t *stale, int64_t *retry_at) {
    PyObject *it = PyObject_GetIter(entries);
    if (!it)
        return -1;
    int ok = 1, in_stale = 1;
    int64_t need = 0;
    *stale = 0;
    *retry_at = INT64_MIN;
    PyObject *entry;
    while ((entry = PyIter_Next(it))) {
        int64_t instant, units;
        ok = log_entry(entry, &instant, &units);
        Py_DECREF(entry);
        if (!ok)
            break;
        if (in_stale) {
            if (instant <= cutoff) {
                *stale += units;
                continue;
            }
            in_stale = 0;
            need = total - *stale + cost - self->limit;
            if (need <= 0)
                break; /* allowed: nothing more to learn */
        }
        if (instant > cutoff) {
            need -= units;
            if (need <= 0) {
                *retry_at = instant;
                break;
            }
        }
    }
    Py_DECREF(it);
    if (PyErr_Occurred())
        return -1;
    return ok;
}

/* Sliding-window log: admitted (instant, cost) entries in time order
 * (_memory.sliding_log); a rl_core. */
static PyObject *sliding_log(RateDeciderObject *self, const hit *h) {
    PyObject *cell, *entries = NULL;
    int rc = rl_get_cell(self, h, &cell);
    if (rc)
        return rc < 0 ? NULL : SLOW;
    int64_t cutoff = h->now - self->window, total = 0, stale = 0, last = 0;
    int64_t retry_at = INT64_MIN;
    if (cell) {
        entries = slot_get(cell, self->slots[0]);
        PyObject *newest = NULL;
        int64_t units;
        if (!entries || Py_TYPE(entries) != (PyTypeObject *)self->deque_type ||
            !small_int(slot_get(cell, self->slots[1]), &total) || PyObject_Length(entries) <= 0 ||
            !(newest = PySequence_GetItem(entries, -1)) || !log_entry(newest, &last, &units)) {
            Py_XDECREF(newest);
            Py_DECREF(cell);
            return PyErr_Occurred() ? NULL : SLOW;
        }
        Py_DECREF(newest);
        rc = scan_log(self, entries, cutoff, total, h->cost, &stale, &retry_at);
        if (rc <= 0) {
            Py_DECREF(cell);
            return rc < 0 ? NULL : SLOW;
        }
        total -= stale;
    }
    int allowed = total + h->cost <= self->limit;
    if (allowed)
        total += h->cost;
    int writes = allowed && h->cost > 0;
    int has_newest = writes;
    int64_t newest = h->now;
    if (cell && (!has_newest || last > newest)) {
        newest = last;
        has_newest = 1;
    }
    int64_t reset = total > 0 && has_newest ? newest + self->window - h->now : 0;
    if (reset <= -EXACT || reset >= EXACT || (h->consume && writes && cell && h->now < last)) {
        /* a far instant, or a clock stepped back (an ordered insert): Python */
        Py_XDECREF(cell);
        return SLOW;
    }
    if (h->consume && (writes || stale > 0)) {
        while (stale > 0) { /* drop the stale entries (the oldest) */
            PyObject *first = PyObject_Length(entries) > 0 ? PySequence_GetItem(entries, 0) : NULL;
            int64_t instant = 0, units = 0;
            int regular = first && log_entry(first, &instant, &units);
            Py_XDECREF(first);
            if (PyErr_Occurred())
                goto error;
            if (!regular || instant > cutoff)
                break;
            PyObject *r = PyObject_CallOneArg(self->popleft, entries);
            if (!r)
                goto error;
            Py_DECREF(r);
        }
        if (writes) {
            if (!cell) {
                if (!(cell = rl_store_cell(self, h)))
                    return NULL;
                entries = PyObject_CallNoArgs(self->deque_type);
                if (slot_set(cell, self->slots[0], entries) < 0)
                    goto error;
            }
            PyObject *now = PyLong_FromLongLong(h->now);
            PyObject *cost = PyLong_FromLongLong(h->cost);
            PyObject *entry = now && cost ? PyTuple_Pack(2, now, cost) : NULL;
            Py_XDECREF(now);
            Py_XDECREF(cost);
            PyObject *r = entry ? PyObject_CallFunctionObjArgs(self->append, entries, entry, NULL)
                                : NULL;
            Py_XDECREF(entry);
            if (!r)
                goto error;
            Py_DECREF(r);
        }
        if (total > 0) {
            if (slot_set(cell, self->slots[1], PyLong_FromLongLong(total)) < 0 ||
                rl_keep_deadline(self, h, h->now_ms + ms_of(reset)) < 0)
                goto error;
        } else {
            PyObject *r = PyObject_CallOneArg(self->delete, h->key);
            if (!r)
                goto error;
            Py_DECREF(r);
        }
    }
    Py_XDECREF(cell);
    if (allowed)
        return rl_decision(self, 1, PyLong_FromLongLong(self->limit - total), (double)reset / 1e6,
                        none_ref());
    double retry = retry_at != INT64_MIN ? (double)(retry_at + self->window - h->now) / 1e6
                                         : (double)self->window / 1e6;
    return rl_decision(self, 0, PyLong_FromLongLong(self->limit - total), (double)reset / 1e6,
                    PyFloat_FromDouble(retry));
error:
    Py_XDECREF(cell);
    return NULL;
}

/* Sliding-window counter: the weighted estimate of two windows
 * (_memory.sliding_counter); a rl_core. */
static PyObject *sliding_counter(RateDeciderObject *self, const hit *h) {
    PyObject *cell;
    int rc = rl_get_cell(self, h, &cell);
    if (rc)
        return rc < 0 ? NULL : SLOW;
    const int64_t w = self->window, limit = self->limit, cost = h->cost;
    int64_t index = floordiv(h->now, w), offset = h->now - index * w;
    int64_t cur = 0, prev = 0, cell_index = 0, cell_cur, cell_prev;
    if (cell) {
        if (!small_int(slot_get(cell, self->slots[0]), &cell_index) ||
            !small_int(slot_get(cell, self->slots[1]), &cell_cur) ||
            !small_int(slot_get(cell, self->slots[2]), &cell_prev)) {
            Py_DECREF(cell);
            return SLOW;
        }
        if (cell_index >= index) {
            cur = cell_cur;
            prev = cell_prev;
        } else if (cell_index == index - 1) {
            prev = cell_cur;
        }
    }
    double estimate = (double)prev * 1.0 * (double)(w - offset) / (double)w + (double)cur;
    if (estimate + (double)cost > (double)limit) {
        Py_XDECREF(cell);
        int64_t reset = cur > 0 ? 2 * w - offset : (prev > 0 ? w - offset : 0);
        int64_t room = limit - cost - cur, at;
        double first;
        if (room >= 0) {
            if (prev == 0)
                return SLOW; /* the Python core divides by zero */
            first = ceil((double)w - (double)room * 1.0 * (double)w / (double)prev);
        } else {
            if (cur == 0)
                return SLOW;
            first = ceil((double)w - (double)(limit - cost) * 1.0 * (double)w / (double)cur);
        }
        if (!(first > -(double)BOUND && first < (double)BOUND))
            return SLOW;
        at = (room >= 0 ? 0 : w) + (int64_t)first;
        for (int steps = 0;; steps++) { /* float rounding may land a us early */
            double load = at < w ? (double)prev * 1.0 * (double)(w - at) / (double)w +
                                       (double)cur + (double)cost
                                 : (double)cur * 1.0 * (double)(w - (at - w)) / (double)w +
                                       (double)cost;
            if (!(load > (double)limit))
                break;
            if (steps == MAX_STEPS)
                return SLOW;
            at++;
        }
        double remaining = floor((double)limit - estimate);
        double retry = (double)(at - offset > 1 ? at - offset : 1) / 1e6;
        return rl_decision(self, 0, PyLong_FromDouble(remaining > 0 ? remaining : 0.0),
                        (double)reset / 1e6, PyFloat_FromDouble(retry));
    }
    cur += cost;
    int64_t reset = cur > 0 ? 2 * w - offset : (prev > 0 ? w - offset : 0);
    if (h->consume && cost > 0) {
        int fresh = !cell;
        if (fresh && !(cell = rl_store_cell(self, h)))
            return NULL;
        if ((fresh || cell_index != index) &&
            (slot_set(cell, self->slots[0], PyLong_FromLongLong(index)) < 0 ||
             slot_set(cell, self->slots[2], PyLong_FromLongLong(prev)) < 0 ||
             rl_keep_deadline(self, h, h->now_ms + ms_of(2 * w - offset)) < 0)) {
            Py_DECREF(cell);
            return NULL;
        }
        if (slot_set(cell, self->slots[1], PyLong_FromLongLong(cur)) < 0) {
            Py_DECREF(cell);
            return NULL;
        }
    }
    Py_XDECREF(cell);
    double remaining = floor((double)limit - (estimate + (double)cost));
    return rl_decision(self, 1, PyLong_FromDouble(remaining > 0 ? remaining : 0.0),
                    (double)reset / 1e6, none_ref());
}

/* A whole number of us as a double, when it is finite and below 2**53. */
static int exact_us(double v) { return v > -(double)EXACT && v < (double)EXACT; }

/* Token bucket: tokens refilled at the policy's rate (_memory.token_bucket),
 * on numbers; see rl_math in rl_fast.h. */
void rl_bucket_math(const RateDeciderObject *self, const rl_state *in, int64_t now,
                    int64_t cost_units, int consume, rl_outcome *out) {
    const double burst = (double)self->capacity, rate = self->rate, cost = (double)cost_units;
    double tokens = burst;
    int is_int = 1; /* the Python core's `tokens` is an int until a refill makes it a float */
    memset(out, 0, sizeof *out);
    if (in->present) {
        tokens = in->value;
        is_int = in->value_is_int;
        int64_t elapsed = now - in->aux;
        if (elapsed > 0) {
            double refilled = tokens + (double)elapsed * rate;
            if (burst < refilled) { /* min(refilled, burst) */
                tokens = burst;
                is_int = 1;
            } else {
                tokens = refilled;
                is_int = 0;
            }
        }
    }
    if (tokens < cost) {
        double reset = ceil((burst - tokens) / rate), retry = ceil((cost - tokens) / rate);
        out->slow = !exact_us(reset) || !exact_us(retry);
        out->remaining = floor(tokens);
        out->reset_us = reset;
        out->retry_us = retry;
        return;
    }
    tokens -= cost;
    double reset = ceil((burst - tokens) / rate);
    out->slow = !exact_us(reset);
    out->allowed = 1;
    out->remaining = floor(tokens);
    out->reset_us = reset;
    out->writes = consume && cost_units > 0;
    out->next.present = 1;
    out->next.value = tokens;
    out->next.value_is_int = is_int;
    out->next.aux = now;
    out->keep_ms = out->slow ? 0 : ms_of((int64_t)reset);
}

/* max(0, floor(v)) as the Python core computes it. */
static double floor_at_least_zero(double v) {
    double f = floor(v);
    return f > 0 ? f : 0.0;
}

/* GCRA: the theoretical arrival time (_memory.gcra), on numbers; see rl_math
 * in rl_fast.h. */
void rl_gcra_math(const RateDeciderObject *self, const rl_state *in, int64_t now_us,
                  int64_t cost, int consume, rl_outcome *out) {
    const double interval = self->interval, tolerance = self->tolerance, now = (double)now_us;
    double tat = now;
    int tat_is_now = 1;
    memset(out, 0, sizeof *out);
    if (in->present && in->value > now) { /* exact: both are doubles of small ints, or a float */
        tat = in->value;
        tat_is_now = 0;
    }
    double new_tat = tat + (double)cost * interval;
    double early = new_tat - tolerance - now;
    if (early > 0) {
        /* tat - now: an int when tat is an int (exact), else a float subtraction */
        double ttl = tat_is_now ? 0.0 : tat - now;
        double reset = ceil(ttl), retry = ceil(early);
        out->slow = !exact_us(reset) || !exact_us(retry);
        out->remaining = floor_at_least_zero((tolerance - ttl) / interval);
        out->reset_us = reset;
        out->retry_us = retry;
        return;
    }
    double ttl = new_tat - now;
    double reset = ceil(ttl), keep = ceil(ttl / 1000);
    out->slow = !exact_us(reset) || !exact_us(keep);
    out->allowed = 1;
    out->remaining = floor_at_least_zero((tolerance - ttl) / interval);
    out->reset_us = reset;
    out->writes = consume && cost > 0;
    out->next.present = 1;
    out->next.value = new_tat;
    out->next.value_is_int = 0;
    out->keep_ms = out->slow ? 0 : (int64_t)keep;
}

/* A decision from a cell's numbers (rl_math) on the keyspace: the cell read,
 * the math, the cell written (fields by `write`), the Decision made. */
static PyObject *decide_on_cell(RateDeciderObject *self, const hit *h, PyObject *cell,
                                const rl_state *in, rl_math math,
                                int (*write)(RateDeciderObject *, PyObject *, const rl_state *)) {
    rl_outcome out;
    math(self, in, h->now, h->cost, h->consume, &out);
    if (out.slow) {
        Py_XDECREF(cell);
        return SLOW;
    }
    if (!out.allowed) {
        Py_XDECREF(cell);
        return rl_decision(self, 0, PyLong_FromDouble(out.remaining), out.reset_us / 1e6,
                           PyFloat_FromDouble(out.retry_us / 1e6));
    }
    if (out.writes) {
        if (!cell && !(cell = rl_store_cell(self, h)))
            return NULL;
        if (write(self, cell, &out.next) < 0 ||
            rl_keep_deadline(self, h, h->now_ms + out.keep_ms) < 0) {
            Py_DECREF(cell);
            return NULL;
        }
    }
    Py_XDECREF(cell);
    return rl_decision(self, 1, PyLong_FromDouble(out.remaining), out.reset_us / 1e6,
                       none_ref());
}

/* The bucket's cell fields from its numbers (tokens, last). */
static int write_bucket(RateDeciderObject *self, PyObject *cell, const rl_state *next) {
    PyObject *value = next->value_is_int ? PyLong_FromLongLong((int64_t)next->value)
                                         : PyFloat_FromDouble(next->value);
    if (slot_set(cell, self->slots[0], value) < 0)
        return -1;
    return slot_set(cell, self->slots[1], PyLong_FromLongLong(next->aux));
}

/* GCRA's cell field from its number (tat, always a float). */
static int write_gcra(RateDeciderObject *self, PyObject *cell, const rl_state *next) {
    return slot_set(cell, self->slots[0], PyFloat_FromDouble(next->value));
}

int rl_cell_state(const RateDeciderObject *self, PyObject *cell, rl_state *in) {
    in->present = 1;
    return small_number(slot_get(cell, self->slots[0]), &in->value, &in->value_is_int) &&
           (self->algorithm != ALG_BUCKET || small_int(slot_get(cell, self->slots[1]), &in->aux));
}

/* An algorithm of fixed state on the keyspace: its cell read as numbers, then
 * decide_on_cell. */
static PyObject *fixed_state_core(RateDeciderObject *self, const hit *h, rl_math math,
                                  int (*write)(RateDeciderObject *, PyObject *, const rl_state *)) {
    PyObject *cell;
    int rc = rl_get_cell(self, h, &cell);
    if (rc)
        return rc < 0 ? NULL : SLOW;
    rl_state in = {0};
    if (cell && !rl_cell_state(self, cell, &in)) {
        Py_DECREF(cell);
        return SLOW;
    }
    return decide_on_cell(self, h, cell, &in, math, write);
}

/* Token bucket on the keyspace; a rl_core. */
static PyObject *token_bucket(RateDeciderObject *self, const hit *h) {
    return fixed_state_core(self, h, rl_bucket_math, write_bucket);
}

/* GCRA on the keyspace; a rl_core. */
static PyObject *gcra(RateDeciderObject *self, const hit *h) {
    return fixed_state_core(self, h, rl_gcra_math, write_gcra);
}

const rl_core rl_cores[5] = {fixed_window, sliding_log, sliding_counter, token_bucket, gcra};
