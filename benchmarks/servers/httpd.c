/*
 * A small single-threaded epoll HTTP/1.1 server for the netbench benchmarks.
 *
 * Modes (all answer "Hello, World!" with Content-Length, keep-alive unless the request
 * says "Connection: close"):
 *   hello  answer at once: the fast server the generators are compared against
 *   delay  answer every request exactly --delay-ms after it arrived (timerfd, 1 ns slack)
 *   stall  once a --period-ms, hold every response that arrives in the next --stall-ms and
 *          release them all when that window ends (the coordinated-omission scenario);
 *          periods start at multiples of --period-ms on CLOCK_MONOTONIC
 *
 * Usage: httpd [--host 127.0.0.1] [--port 0] [--mode hello|delay|stall]
 *              [--delay-ms 20] [--period-ms 1000] [--stall-ms 200]
 * Once listening it prints "NETBENCH_LISTENING port=<n>" on stdout (flushed).
 * Requests are framed by the blank line that ends their headers; bodies are not expected.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define MAX_FDS 65536
#define READ_CAP 16384
#define NS_PER_MS 1000000LL

static const char RESPONSE[] =
    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\n\r\nHello, World!";
#define RESPONSE_LEN (sizeof(RESPONSE) - 1)

enum mode { MODE_HELLO, MODE_DELAY, MODE_STALL };

struct conn {
    uint32_t generation; /* bumped on close, so a held response for a dead fd is dropped */
    int open;
    int close_after; /* the last request asked for Connection: close */
    size_t in_len;
    char in[READ_CAP];
    size_t out_len, out_off;
    char *out;
    size_t out_cap;
};

struct held { /* one response waiting for its release time */
    int64_t due_ns;
    int fd;
    uint32_t generation;
    int close_after;
};

static struct conn *conns[MAX_FDS];
static struct held *queue;
static size_t q_head, q_tail, q_cap; /* FIFO: release times never decrease */
static int epfd, timer_fd;
static enum mode mode = MODE_HELLO;
static int64_t delay_ns = 20 * NS_PER_MS, period_ns = 1000 * NS_PER_MS,
               stall_ns = 200 * NS_PER_MS;

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void die(const char *what) {
    perror(what);
    exit(2);
}

static void close_conn(int fd) {
    struct conn *c = conns[fd];
    if (c == NULL || !c->open)
        return;
    c->open = 0;
    c->generation++;
    c->in_len = c->out_len = c->out_off = 0;
    epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
    close(fd);
}

static void watch(int fd, uint32_t events, int op) {
    struct epoll_event ev = {.events = events, .data.fd = fd};
    if (epoll_ctl(epfd, op, fd, &ev) < 0 && op != EPOLL_CTL_MOD)
        die("epoll_ctl");
}

/* Write what is buffered; returns -1 when the connection had to be closed. */
static int flush_out(int fd) {
    struct conn *c = conns[fd];
    while (c->out_off < c->out_len) {
        ssize_t n = write(fd, c->out + c->out_off, c->out_len - c->out_off);
        if (n < 0) {
            if (errno == EAGAIN) {
                watch(fd, EPOLLIN | EPOLLOUT, EPOLL_CTL_MOD);
                return 0;
            }
            close_conn(fd);
            return -1;
        }
        c->out_off += (size_t)n;
    }
    c->out_len = c->out_off = 0;
    return 0;
}

static void append_response(struct conn *c) {
    if (c->out_len + RESPONSE_LEN > c->out_cap) {
        c->out_cap = (c->out_len + RESPONSE_LEN) * 2;
        c->out = realloc(c->out, c->out_cap);
        if (c->out == NULL)
            die("realloc");
    }
    memcpy(c->out + c->out_len, RESPONSE, RESPONSE_LEN);
    c->out_len += RESPONSE_LEN;
}

static void arm_timer(void) {
    struct itimerspec its = {0};
    if (q_head != q_tail) {
        int64_t due = queue[q_head].due_ns;
        its.it_value.tv_sec = due / 1000000000LL;
        its.it_value.tv_nsec = due % 1000000000LL;
        if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
            its.it_value.tv_nsec = 1;
    }
    if (timerfd_settime(timer_fd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
        die("timerfd_settime");
}

static void hold(int fd, int64_t due, int close_after) {
    if (q_tail == q_cap) { /* compact, then grow */
        memmove(queue, queue + q_head, (q_tail - q_head) * sizeof *queue);
        q_tail -= q_head;
        q_head = 0;
        if (q_tail == q_cap) {
            q_cap = q_cap ? q_cap * 2 : 4096;
            queue = realloc(queue, q_cap * sizeof *queue);
            if (queue == NULL)
                die("realloc");
        }
    }
    int was_empty = q_head == q_tail;
    queue[q_tail++] = (struct held){due, fd, conns[fd]->generation, close_after};
    if (was_empty)
        arm_timer();
}

/* When should a request that arrived at `now` be answered? 0 means at once. */
static int64_t release_time(int64_t now) {
    if (mode == MODE_DELAY)
        return now + delay_ns;
    if (mode == MODE_STALL) {
        /* phases count from CLOCK_MONOTONIC zero, so a client can line up with them */
        int64_t phase = now % period_ns;
        if (phase < stall_ns)
            return now - phase + stall_ns;
    }
    return 0;
}

static void release_due(void) {
    uint64_t expirations;
    if (read(timer_fd, &expirations, sizeof expirations) < 0 && errno != EAGAIN)
        die("read timerfd");
    int64_t now = now_ns();
    while (q_head != q_tail && queue[q_head].due_ns <= now) {
        struct held h = queue[q_head++];
        struct conn *c = conns[h.fd];
        if (c == NULL || !c->open || c->generation != h.generation)
            continue;
        append_response(c);
        if (flush_out(h.fd) == 0 && h.close_after && c->out_len == 0)
            close_conn(h.fd);
    }
    if (q_head == q_tail)
        q_head = q_tail = 0;
    arm_timer();
}

static int wants_close(const char *head, size_t len) {
    /* crude but enough for benchmark clients: look for the header value anywhere */
    for (size_t i = 0; i + 17 <= len; i++)
        if ((head[i] == 'C' || head[i] == 'c') && strncasecmp(head + i, "connection: close", 17) == 0)
            return 1;
    return 0;
}

static void on_readable(int fd) {
    struct conn *c = conns[fd];
    for (;;) {
        if (c->in_len == READ_CAP) { /* a header larger than we accept */
            close_conn(fd);
            return;
        }
        ssize_t n = read(fd, c->in + c->in_len, READ_CAP - c->in_len);
        if (n == 0) {
            close_conn(fd);
            return;
        }
        if (n < 0) {
            if (errno == EAGAIN)
                break;
            close_conn(fd);
            return;
        }
        c->in_len += (size_t)n;
        if (c->in_len < READ_CAP)
            break; /* a short read: the socket is drained for now */
    }
    size_t start = 0;
    int64_t now = 0;
    int close_now = 0;
    for (;;) {
        char *end = memmem(c->in + start, c->in_len - start, "\r\n\r\n", 4);
        if (end == NULL)
            break;
        size_t head_len = (size_t)(end - (c->in + start)) + 4;
        int close_after = wants_close(c->in + start, head_len);
        start += head_len;
        if (mode != MODE_HELLO && now == 0)
            now = now_ns();
        int64_t due = mode == MODE_HELLO ? 0 : release_time(now);
        if (due) {
            hold(fd, due, close_after);
        } else {
            append_response(c);
            if (close_after) {
                close_now = 1;
                break;
            }
        }
    }
    memmove(c->in, c->in + start, c->in_len - start);
    c->in_len -= start;
    if (c->out_len && flush_out(fd) < 0)
        return;
    if (close_now && c->out_len == 0)
        close_conn(fd);
}

static void on_writable(int fd) {
    struct conn *c = conns[fd];
    if (flush_out(fd) == 0 && c->open && c->out_len == 0)
        watch(fd, EPOLLIN, EPOLL_CTL_MOD);
}

static void accept_all(int listen_fd) {
    for (;;) {
        int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
                perror("accept4");
            return;
        }
        if (fd >= MAX_FDS) {
            close(fd);
            continue;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (conns[fd] == NULL && (conns[fd] = calloc(1, sizeof(struct conn))) == NULL)
            die("calloc");
        conns[fd]->open = 1;
        conns[fd]->in_len = conns[fd]->out_len = conns[fd]->out_off = 0;
        watch(fd, EPOLLIN, EPOLL_CTL_ADD);
    }
}

static int listen_on(const char *host, int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        die("socket");
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) {
        fprintf(stderr, "httpd: --host must be an IPv4 address, got %s\n", host);
        exit(2);
    }
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) < 0)
        die("bind");
    if (listen(fd, 65535) < 0)
        die("listen");
    socklen_t len = sizeof addr;
    getsockname(fd, (struct sockaddr *)&addr, &len);
    printf("NETBENCH_LISTENING port=%d\n", ntohs(addr.sin_port));
    fflush(stdout);
    return fd;
}

static void parse_args(int argc, char **argv, const char **host, int *port) {
    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (val == NULL) {
            fprintf(stderr, "httpd: %s needs a value\n", opt);
            exit(2);
        }
        i++;
        if (strcmp(opt, "--host") == 0)
            *host = val;
        else if (strcmp(opt, "--port") == 0)
            *port = atoi(val);
        else if (strcmp(opt, "--delay-ms") == 0)
            delay_ns = (int64_t)(atof(val) * NS_PER_MS);
        else if (strcmp(opt, "--period-ms") == 0)
            period_ns = (int64_t)(atof(val) * NS_PER_MS);
        else if (strcmp(opt, "--stall-ms") == 0)
            stall_ns = (int64_t)(atof(val) * NS_PER_MS);
        else if (strcmp(opt, "--mode") == 0) {
            if (strcmp(val, "hello") == 0)
                mode = MODE_HELLO;
            else if (strcmp(val, "delay") == 0)
                mode = MODE_DELAY;
            else if (strcmp(val, "stall") == 0)
                mode = MODE_STALL;
            else {
                fprintf(stderr, "httpd: --mode must be hello, delay or stall, got %s\n", val);
                exit(2);
            }
        } else {
            fprintf(stderr, "httpd: unknown option %s\n", opt);
            exit(2);
        }
    }
    if (period_ns <= 0 || stall_ns < 0 || stall_ns > period_ns || delay_ns < 0) {
        fprintf(stderr, "httpd: need 0 <= stall-ms <= period-ms, period-ms > 0, delay-ms >= 0\n");
        exit(2);
    }
}

int main(int argc, char **argv) {
    const char *host = "127.0.0.1";
    int port = 0;
    parse_args(argc, argv, &host, &port);
    signal(SIGPIPE, SIG_IGN);
    prctl(PR_SET_TIMERSLACK, 1UL); /* timers fire on time, not up to 50 us late */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) { /* idle-connection runs need 10k+ fds */
        rl.rlim_cur = rl.rlim_max < MAX_FDS ? rl.rlim_max : MAX_FDS;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    epfd = epoll_create1(EPOLL_CLOEXEC);
    timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (epfd < 0 || timer_fd < 0)
        die("epoll/timerfd");
    int listen_fd = listen_on(host, port);
    watch(listen_fd, EPOLLIN, EPOLL_CTL_ADD);
    watch(timer_fd, EPOLLIN, EPOLL_CTL_ADD);
    struct epoll_event events[512];
    for (;;) {
        int n = epoll_wait(epfd, events, 512, -1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            die("epoll_wait");
        }
        for (int i = 0; i < n; i++) {
            int fd = events[i].data.fd;
            if (fd == listen_fd)
                accept_all(listen_fd);
            else if (fd == timer_fd)
                release_due();
            else if (conns[fd] != NULL && conns[fd]->open) {
                if (events[i].events & (EPOLLERR | EPOLLHUP)) {
                    close_conn(fd);
                    continue;
                }
                if (events[i].events & EPOLLOUT)
                    on_writable(fd);
                if (conns[fd]->open && (events[i].events & EPOLLIN))
                    on_readable(fd);
            }
        }
    }
}
