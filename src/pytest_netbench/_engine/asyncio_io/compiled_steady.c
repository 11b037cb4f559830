/* The keep-alive steady state compiled: a read that holds only whole 200 responses which
 * keep the connection open is answered here without a Python frame (issue 35). See
 * compiled_steady.pyi and fused_http.FusedHttpConnection.
 *
 * A SteadyReader stands in a connection's ``data_received``: uvloop and asyncio call it
 * with each read. Disarmed, or given any read it does not take whole, it hands the read to
 * the connection's Python ``data_received`` (``fallback``) untouched, so every rule of the
 * Python path still applies there. It takes a read only if the read is, from its first
 * byte to its last, one or more responses of a strict subset of HTTP/1.1 that llhttp parses
 * the same way: "HTTP/1.1 200 " and a printable reason, header lines of token names and
 * printable values, one Content-Length of digits or one Transfer-Encoding of "chunked"
 * (chunks of a bare hex size, no trailer), no Upgrade or Proxy-Connection, a Connection
 * header only if it is "keep-alive", and the whole body.
 * tests/unit/test_compiled_steady.py holds that to httptools byte for byte.
 *
 * For each response it takes it runs the steady state of
 * FusedHttpConnection.on_message_complete: the latency recorded from the request's start
 * (counted in the recorder's microsecond slots as it is recorded, where the Python path
 * appends it for the fold to count), the same request written again at once (or, for
 * requests rendered from feeders, the next ready one, claimed as RunAccounting.claim
 * does), its start kept; in open loop, that of FusedOpenConnection._steady_response. The
 * responses and their bytes are counted here and moved into the run by ``take_counts``
 * (the connection's ``settle_counts``), as the Python path's streak is.
 */
#ifndef __linux__
/* CLOCK_MONOTONIC is time.monotonic_ns's clock on Linux only (macOS: mach_absolute_time). */
#error "compiled_steady is built for Linux only"
#endif
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <structmember.h>
#include <time.h>

static PyObject *str_spare; /* RunAccounting.spare */

typedef struct {
    PyObject_HEAD
    PyObject *fallback;   /* the connection's Python data_received */
    PyObject *popleft;    /* pending.popleft: the start of the oldest request */
    PyObject *append;     /* pending.append (closed loop) */
    PyObject *pending;    /* the deque itself, for its length and first item */
    PyObject *slots;      /* the recorder's latency slots (count_as_recorded) */
    PyObject *record;     /* the recorder's latencies.append, for a latency past them */
    PyObject *request;    /* the request's bytes; NULL for requests rendered from feeders */
    PyObject *run;        /* rendered requests: the run, whose ``spare`` ones are claimed */
    PyObject *next_ready; /* rendered requests: run.ready.popleft, the next one's bytes */
    PyObject *intended;   /* open loop: the due times of the requests out (else NULL) */
    PyObject *intended_popleft;
    PyObject *uncorrected; /* open loop: the recorder's uncorrected.append */
    PyObject *idle;       /* open loop: the run's idle list */
    PyObject *backlog;    /* open loop: the run's requests waiting for a connection */
    PyObject *connection; /* open loop: the connection, put back on the idle list */
    PyObject *write;      /* the transport's write while armed, else NULL */
    long long measure;    /* the window's start: a request sent before it is not measured */
    long long responses;  /* steady 200s answered here, not yet taken */
    long long bytes_read; /* their bytes */
    long long answered_at; /* the clock reading of the last read answered here */
    vectorcallfunc vectorcall;
} SteadyReader;

/* ---- the scanner: a strict subset of HTTP/1.1 responses --------------------------- */

static const char TOKEN[256] = {
    /* RFC 9110 tchar: ALPHA DIGIT and !#$%&'*+-.^_`|~ */
    ['!'] = 1, ['#'] = 1, ['$'] = 1, ['%'] = 1, ['&'] = 1, ['\''] = 1, ['*'] = 1,
    ['+'] = 1, ['-'] = 1, ['.'] = 1, ['^'] = 1, ['_'] = 1, ['`'] = 1, ['|'] = 1, ['~'] = 1,
    ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1,
    ['8'] = 1, ['9'] = 1,
    ['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1, ['G'] = 1, ['H'] = 1,
    ['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1, ['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1,
    ['Q'] = 1, ['R'] = 1, ['S'] = 1, ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1,
    ['Y'] = 1, ['Z'] = 1,
    ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1, ['g'] = 1, ['h'] = 1,
    ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1,
    ['q'] = 1, ['r'] = 1, ['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1,
    ['y'] = 1, ['z'] = 1,
};

/* A byte of a reason phrase or a header value taken here: HTAB, SP, VCHAR. */
static inline int
printable(unsigned char c)
{
    return (c >= 0x20 && c < 0x7f) || c == '\t';
}

static int
name_is(const char *name, size_t length, const char *lower)
{
    size_t i;
    if (length != strlen(lower))
        return 0;
    for (i = 0; i < length; i++) {
        char c = name[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c + ('a' - 'A'));
        if (c != lower[i])
            return 0;
    }
    return 1;
}

/* Whether llhttp reads this header's value to frame the message or keep the connection. */
static int
read_for_framing(const char *name, size_t length)
{
    return name_is(name, length, "content-length") || name_is(name, length, "connection")
        || name_is(name, length, "transfer-encoding");
}

/* Where a chunked body that begins at ``p`` ends, if it ends by ``end``: chunks of a
 * size in hex digits and nothing else on its line, and the last chunk with no trailer
 * ("0\r\n\r\n"); NULL if it is anything else, or does not end by ``end``. */
static const char *
scan_chunks(const char *p, const char *end)
{
    for (;;) {
        long long size = 0;
        const char *digits = p;
        while (p < end) {
            int digit;
            char c = *p;
            if (c >= '0' && c <= '9')
                digit = c - '0';
            else if (c >= 'a' && c <= 'f')
                digit = c - 'a' + 10;
            else if (c >= 'A' && c <= 'F')
                digit = c - 'A' + 10;
            else
                break;
            if (p - digits >= 12)
                return NULL; /* past any chunk a read holds: llhttp's overflow aside */
            size = size * 16 + digit;
            p++;
        }
        if (p == digits || end - p < 2 || p[0] != '\r' || p[1] != '\n')
            return NULL;
        p += 2;
        if (size == 0)
            break;
        if (end - p < size + 2 || p[size] != '\r' || p[size + 1] != '\n')
            return NULL;
        p += size + 2;
    }
    if (end - p < 2 || p[0] != '\r' || p[1] != '\n')
        return NULL;
    return p + 2;
}

/* Where the response that begins at ``p`` ends, if it is one taken here and ends by
 * ``end``; NULL if it is anything else, or does not end by ``end``. */
static const char *
scan_response(const char *p, const char *end)
{
    long long length = -1;
    int chunked = 0;
    if (end - p < 13 || memcmp(p, "HTTP/1.1 200 ", 13) != 0)
        return NULL;
    p += 13;
    while (p < end && printable((unsigned char)*p))
        p++;
    if (end - p < 2 || p[0] != '\r' || p[1] != '\n')
        return NULL;
    p += 2;
    for (;;) {
        const char *name = p, *value, *value_end;
        if (end - p < 2)
            return NULL;
        if (p[0] == '\r') {
            if (p[1] != '\n')
                return NULL;
            p += 2;
            break;
        }
        while (p < end && TOKEN[(unsigned char)*p])
            p++;
        if (p == name || p == end || *p != ':')
            return NULL;
        size_t name_length = (size_t)(p - name);
        p++;
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        value = p;
        while (p < end && printable((unsigned char)*p))
            p++;
        if (end - p < 2 || p[0] != '\r' || p[1] != '\n')
            return NULL;
        value_end = p;
        while (value_end > value && (value_end[-1] == ' ' || value_end[-1] == '\t'))
            value_end--;
        /* A tab in a value llhttp reads for framing ends its token in some versions (a
         * "chunked<HTAB>" body is read to the close) and is refused in others: not taken. */
        if (memchr(value, '\t', (size_t)(p - value)) != NULL && read_for_framing(name, name_length))
            return NULL;
        p += 2;
        switch (name_length) {
        case 14:
            if (name_is(name, name_length, "content-length")) {
                const char *digit;
                if (length >= 0 || value_end == value || value_end - value > 15)
                    return NULL;
                length = 0;
                for (digit = value; digit < value_end; digit++) {
                    if (*digit < '0' || *digit > '9')
                        return NULL;
                    length = length * 10 + (*digit - '0');
                }
            }
            break;
        case 10:
            if (name_is(name, name_length, "connection")
                && !name_is(value, (size_t)(value_end - value), "keep-alive"))
                return NULL;
            break;
        case 17:
            if (name_is(name, name_length, "transfer-encoding")) {
                if (chunked || !name_is(value, (size_t)(value_end - value), "chunked"))
                    return NULL;
                chunked = 1;
            }
            break;
        case 7:
            if (name_is(name, name_length, "upgrade"))
                return NULL;
            break;
        case 16:
            if (name_is(name, name_length, "proxy-connection"))
                return NULL;
            break;
        default:
            break;
        }
    }
    if (chunked)
        return length < 0 ? scan_chunks(p, end) : NULL;
    if (length < 0 || end - p < length)
        return NULL;
    return p + length;
}

/* How many responses taken here make up the whole of ``data``: 0 if it is anything
 * else. */
static Py_ssize_t
count_responses(const char *data, Py_ssize_t size)
{
    const char *p = data, *end = data + size;
    Py_ssize_t count = 0;
    while (p < end) {
        p = scan_response(p, end);
        if (p == NULL)
            return 0;
        count++;
    }
    return count;
}

/* ---- the reader ------------------------------------------------------------------ */

static inline long long
monotonic_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now); /* time.monotonic_ns's clock on Linux */
    return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

/* ``*out`` from ``value``, a new reference it drops (NULL: the error of the call that
 * made it); -1 on an error. */
static int
take_long(PyObject *value, long long *out)
{
    if (value == NULL)
        return -1;
    *out = PyLong_AsLongLong(value);
    Py_DECREF(value);
    return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

/* 1: the window allows the steady state, 0: it does not, -1: an error. A broken
 * connection (FusedHttpConnection.on_protocol_error) and a stopping run (the run settles
 * each connection's counts as it stops: FusedHttpConnection.settle_counts) have disarmed
 * the reader already. */
static int
steady_allowed(SteadyReader *self, Py_ssize_t count)
{
    PyObject *value;
    long long first;

    Py_ssize_t outstanding = PyObject_Length(self->pending);
    if (outstanding < 0)
        return -1;
    if (outstanding < count)
        return 0; /* more answers than requests: the Python path's protocol error */
    if (self->backlog != NULL) {
        Py_ssize_t waiting = PyObject_Length(self->backlog);
        if (waiting != 0) /* a waiting request takes this connection: the run's _free */
            return waiting < 0 ? -1 : 0;
    }
    /* Open loop's window counts from each request's due time (FusedOpenConnection._due). */
    value = PySequence_GetItem(self->intended != NULL ? self->intended : self->pending, 0);
    if (take_long(value, &first) < 0)
        return -1;
    return first >= self->measure;
}

/* ``callable(time)`` for a time in ns, its result dropped; -1 on an error. */
static int
call_with_time(PyObject *callable, long long time)
{
    PyObject *result, *value = PyLong_FromLongLong(time);
    if (value == NULL)
        return -1;
    result = PyObject_CallOneArg(callable, value);
    Py_DECREF(value);
    if (result == NULL)
        return -1;
    Py_DECREF(result);
    return 0;
}

/* The oldest time a deque holds (its bound ``popleft``), taken out into ``*out``. */
static int
pop_time(PyObject *popleft, long long *out)
{
    return take_long(PyObject_CallNoArgs(popleft), out);
}

/* Requests rendered from feeders: ``count`` of the run's spare ones claimed (an inlined
 * copy of RunAccounting.claim, as on_message_complete's); 0 if fewer are spare. */
static int
claim(SteadyReader *self, Py_ssize_t count)
{
    PyObject *value;
    long long spare;
    int done;
    if (take_long(PyObject_GetAttr(self->run, str_spare), &spare) < 0)
        return -1;
    if (spare < count)
        return 0;
    value = PyLong_FromLongLong(spare - count);
    if (value == NULL)
        return -1;
    done = PyObject_SetAttr(self->run, str_spare, value);
    Py_DECREF(value);
    return done < 0 ? -1 : 1;
}

/* The recorder's count_as_recorded: a latency of ``us`` whole microseconds adds one to its
 * slot, one past the slots is appended in nanoseconds as on the Python path. */
static int
record(SteadyReader *self, long long latency)
{
    long long us = latency / 1000;
    PyObject *old, *new;
    long count;
    if (latency >= 0 && us < PyList_GET_SIZE(self->slots)) {
        old = PyList_GET_ITEM(self->slots, us);
        if (!PyLong_CheckExact(old)) { /* its conversion could run Python code */
            PyErr_SetString(PyExc_TypeError, "a latency slot holds something else than an int");
            return -1;
        }
        count = PyLong_AsLong(old);
        if (count == -1 && PyErr_Occurred())
            return -1;
        new = PyLong_FromLong(count + 1);
        if (new == NULL)
            return -1;
        PyList_SET_ITEM(self->slots, us, new);
        Py_DECREF(old);
        return 0;
    }
    return call_with_time(self->record, latency);
}

static PyObject *
answer_each(SteadyReader *self, Py_ssize_t count, long long now, PyObject *write,
            PyObject *request)
{
    Py_ssize_t i;
    for (i = 0; i < count; i++) {
        PyObject *result;
        long long start;
        if (pop_time(self->popleft, &start) < 0 || record(self, now - start) < 0)
            return NULL;
        self->responses++;
        if (request != NULL) {
            result = PyObject_CallOneArg(write, request);
        } else { /* the next ready request: RunAccounting.next_request, one claimed */
            PyObject *rendered = PyObject_CallNoArgs(self->next_ready);
            if (rendered == NULL)
                return NULL;
            result = PyObject_CallOneArg(write, rendered);
            Py_DECREF(rendered);
        }
        if (result == NULL)
            return NULL;
        Py_DECREF(result);
        if (call_with_time(self->append, now) < 0)
            return NULL;
    }
    Py_RETURN_NONE;
}

/* Open loop: what FusedOpenConnection._steady_response does for each response (an inlined
 * copy of RunAccounting.record for open loop and of OpenRun._free): the latency from its
 * due time (or its send, if that was earlier) and from its send, and the connection put
 * back on the idle list for the run's timer to write the next due request. */
static PyObject *
answer_open(SteadyReader *self, Py_ssize_t count, long long now)
{
    Py_ssize_t i;
    for (i = 0; i < count; i++) {
        long long start, due;
        if (pop_time(self->popleft, &start) < 0 || pop_time(self->intended_popleft, &due) < 0)
            return NULL;
        if (record(self, now - (due < start ? due : start)) < 0)
            return NULL;
        if (call_with_time(self->uncorrected, now - start) < 0)
            return NULL;
        self->responses++;
        if (PyList_Append(self->idle, self->connection) < 0)
            return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *
answer(SteadyReader *self, Py_ssize_t count)
{
    long long now = monotonic_ns();
    self->answered_at = now;
    if (self->intended != NULL)
        return answer_open(self, count, now);
    /* Held for the read: nothing the calls below reach disarms the reader today, but a
     * write that did must not free what is being called. */
    PyObject *write = Py_NewRef(self->write), *request = Py_XNewRef(self->request);
    PyObject *done = answer_each(self, count, now, write, request);
    Py_DECREF(write);
    Py_XDECREF(request);
    return done;
}

static PyObject *
reader_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    SteadyReader *self = (SteadyReader *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *data;
    Py_ssize_t count;
    int allowed;

    if (nargs != 1 || kwnames != NULL) {
        PyErr_SetString(PyExc_TypeError, "a SteadyReader takes one read");
        return NULL;
    }
    data = args[0];
    if (self->fallback == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "this SteadyReader was cleared");
        return NULL;
    }
    if (self->write == NULL || !PyBytes_CheckExact(data))
        return PyObject_CallOneArg(self->fallback, data);
    count = count_responses(PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data));
    if (count == 0)
        return PyObject_CallOneArg(self->fallback, data);
    allowed = steady_allowed(self, count);
    if (allowed < 0)
        return NULL;
    if (!allowed)
        return PyObject_CallOneArg(self->fallback, data);
    if (self->run != NULL) {
        allowed = claim(self, count);
        if (allowed < 0)
            return NULL;
        if (!allowed) /* none spare: the Python path renders the next batch */
            return PyObject_CallOneArg(self->fallback, data);
    }
    self->bytes_read += PyBytes_GET_SIZE(data);
    return answer(self, count);
}

static int
reader_init(SteadyReader *self, PyObject *args, PyObject *kwds)
{
    static char *keywords[] = {"fallback",   "pending",  "slots",       "record",
                               "request",    "measure",  "run",         "next_ready",
                               "intended",   "uncorrected", "idle",     "backlog",
                               "connection", NULL};
    PyObject *fallback, *pending, *slots, *record, *request, *popleft, *append;
    PyObject *run = Py_None, *next_ready = Py_None, *intended = Py_None;
    PyObject *uncorrected = Py_None, *idle = Py_None, *backlog = Py_None;
    PyObject *connection = Py_None, *intended_popleft = NULL;
    long long measure;
    int rendered, open_loop;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOO!OOL|$OOOOOOO", keywords, &fallback,
                                     &pending, &PyList_Type, &slots, &record, &request,
                                     &measure, &run, &next_ready, &intended, &uncorrected,
                                     &idle, &backlog, &connection))
        return -1;
    rendered = run != Py_None && PyCallable_Check(next_ready);
    open_loop = intended != Py_None && PyCallable_Check(uncorrected) && PyList_Check(idle)
                && backlog != Py_None && connection != Py_None;
    if (request == Py_None ? rendered == open_loop
                           : (!PyBytes_Check(request) || run != Py_None || next_ready != Py_None
                              || intended != Py_None)) {
        PyErr_SetString(PyExc_TypeError,
                        "a SteadyReader takes the request's bytes, or None with the run and "
                        "next_ready of requests rendered from feeders, or None with the "
                        "intended, uncorrected, idle, backlog and connection of open loop");
        return -1;
    }
    if (self->fallback != NULL) {
        PyErr_SetString(PyExc_TypeError, "a SteadyReader is initialised once");
        return -1;
    }
    popleft = PyObject_GetAttrString(pending, "popleft");
    if (popleft == NULL)
        return -1;
    append = NULL; /* open loop writes from the run's timer: nothing is appended here */
    if (!open_loop && (append = PyObject_GetAttrString(pending, "append")) == NULL) {
        Py_DECREF(popleft);
        return -1;
    }
    Py_XSETREF(self->popleft, popleft);
    Py_XSETREF(self->append, append);
    Py_XSETREF(self->slots, Py_NewRef(slots));
    Py_XSETREF(self->fallback, Py_NewRef(fallback));
    Py_XSETREF(self->pending, Py_NewRef(pending));
    Py_XSETREF(self->record, Py_NewRef(record));
    Py_XSETREF(self->request, request == Py_None ? NULL : Py_NewRef(request));
    Py_XSETREF(self->run, run == Py_None ? NULL : Py_NewRef(run));
    Py_XSETREF(self->next_ready, next_ready == Py_None ? NULL : Py_NewRef(next_ready));
    if (open_loop) {
        intended_popleft = PyObject_GetAttrString(intended, "popleft");
        if (intended_popleft == NULL)
            return -1;
        Py_XSETREF(self->intended, Py_NewRef(intended));
        Py_XSETREF(self->intended_popleft, intended_popleft);
        Py_XSETREF(self->uncorrected, Py_NewRef(uncorrected));
        Py_XSETREF(self->idle, Py_NewRef(idle));
        Py_XSETREF(self->backlog, Py_NewRef(backlog));
        Py_XSETREF(self->connection, Py_NewRef(connection));
    }
    Py_CLEAR(self->write);
    self->measure = measure;
    self->responses = self->bytes_read = 0;
    self->vectorcall = reader_vectorcall;
    return 0;
}

/* Every object a reader holds, listed once for traverse and clear (a member left out of
 * either would leak a cycle or be visited after it was freed). */
#define READER_OBJECTS(X)                                                                   \
    X(slots) X(fallback) X(popleft) X(append) X(pending) X(record) X(request) X(run)         \
    X(next_ready) X(intended) X(intended_popleft) X(uncorrected) X(idle) X(backlog)          \
    X(connection) X(write)

static int
reader_traverse(SteadyReader *self, visitproc visit, void *arg)
{
#define VISIT_MEMBER(name) Py_VISIT(self->name);
    READER_OBJECTS(VISIT_MEMBER)
#undef VISIT_MEMBER
    return 0;
}

static int
reader_clear(SteadyReader *self)
{
#define CLEAR_MEMBER(name) Py_CLEAR(self->name);
    READER_OBJECTS(CLEAR_MEMBER)
#undef CLEAR_MEMBER
    return 0;
}

static void
reader_dealloc(SteadyReader *self)
{
    PyObject_GC_UnTrack(self);
    reader_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
reader_arm(SteadyReader *self, PyObject *write)
{
    if (!PyCallable_Check(write)) {
        PyErr_SetString(PyExc_TypeError, "arm takes the transport's write");
        return NULL;
    }
    Py_XSETREF(self->write, Py_NewRef(write));
    Py_RETURN_NONE;
}

static PyObject *
reader_disarm(SteadyReader *self, PyObject *Py_UNUSED(ignored))
{
    Py_CLEAR(self->write);
    Py_RETURN_NONE;
}

static PyObject *
reader_take_counts(SteadyReader *self, PyObject *Py_UNUSED(ignored))
{
    PyObject *counts = Py_BuildValue("(LL)", self->responses, self->bytes_read);
    if (counts != NULL)
        self->responses = self->bytes_read = 0;
    return counts;
}

static PyObject *
reader_armed(SteadyReader *self, void *Py_UNUSED(closure))
{
    return PyBool_FromLong(self->write != NULL);
}

static PyObject *
count_steady(PyObject *Py_UNUSED(module), PyObject *data)
{
    Py_buffer view;
    Py_ssize_t count;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    count = count_responses((const char *)view.buf, view.len);
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(count);
}

static PyMethodDef reader_methods[] = {
    {"arm", (PyCFunction)reader_arm, METH_O,
     "Take steady reads from now on, answering each by ``write``."},
    {"disarm", (PyCFunction)reader_disarm, METH_NOARGS,
     "Hand every read to the fallback from now on (until armed again)."},
    {"take_counts", (PyCFunction)reader_take_counts, METH_NOARGS,
     "The responses answered here and their bytes since the last call, as a pair."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef reader_members[] = {
    {"measure", T_LONGLONG, offsetof(SteadyReader, measure), 0,
     "The window's start (ns): a read answering a request sent before it goes to the fallback."},
    {"answered_at", T_LONGLONG, offsetof(SteadyReader, answered_at), READONLY,
     "The clock reading (ns) of the last read answered here: its responses' end."},
    {NULL, 0, 0, 0, NULL},
};

static PyObject *
reader_responses(SteadyReader *self, void *Py_UNUSED(closure))
{
    return PyLong_FromLongLong(self->responses);
}

static PyGetSetDef reader_getset[] = {
    {"armed", (getter)reader_armed, NULL, "Whether steady reads are taken here.", NULL},
    {"responses", (getter)reader_responses, NULL,
     "Steady 200s answered here and not yet taken by take_counts.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject SteadyReaderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pytest_netbench._engine.asyncio_io.compiled_steady.SteadyReader",
    .tp_basicsize = sizeof(SteadyReader),
    .tp_dealloc = (destructor)reader_dealloc,
    .tp_vectorcall_offset = offsetof(SteadyReader, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "A connection's data_received for the compiled keep-alive steady state.",
    .tp_traverse = (traverseproc)reader_traverse,
    .tp_clear = (inquiry)reader_clear,
    .tp_methods = reader_methods,
    .tp_members = reader_members,
    .tp_getset = reader_getset,
    .tp_init = (initproc)reader_init,
    .tp_new = PyType_GenericNew,
};

static PyMethodDef module_methods[] = {
    {"count_steady", count_steady, METH_O,
     "How many responses the reader takes make up the whole of a read (0: it takes none)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "pytest_netbench._engine.asyncio_io.compiled_steady",
    .m_doc = "The keep-alive steady state compiled (see compiled_steady.pyi).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit_compiled_steady(void)
{
    PyObject *m;
    str_spare = PyUnicode_InternFromString("spare");
    if (str_spare == NULL)
        return NULL;
    if (PyType_Ready(&SteadyReaderType) < 0)
        return NULL;
    m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddObjectRef(m, "SteadyReader", (PyObject *)&SteadyReaderType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
