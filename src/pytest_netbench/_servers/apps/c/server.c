/* pytest-netbench reference server in C: one thread, non-blocking sockets, epoll.
 *
 * usage: server hello|echo HOST PORT
 * HTTP hello: GET / -> "Hello World!", /bytes/N -> N bytes, /status/N -> status N.
 * Prints "NETBENCH_LISTENING port=<n>" once listening; exits 0 on SIGTERM/SIGINT.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define READ_CHUNK 65536
#define MAX_HEAD (64 * 1024)
#define MAX_BODY (64L * 1024 * 1024)
#define BACKLOG 4096

typedef struct {
    int fd;
    int closing;        /* close once the output is written */
    int want_out;       /* EPOLLOUT is armed (reading paused meanwhile) */
    long body_left;     /* request body bytes still to skip */
    char *in;
    size_t in_len, in_cap;
    char *out;
    size_t out_len, out_pos, out_cap;
} conn_t;

static volatile sig_atomic_t stopping = 0;
static int epfd;
static int echo_mode;
static char *filler; /* 'x' bytes for /bytes/N, grown to the largest N asked for */
static long filler_len;

static void on_signal(int sig) { (void)sig; stopping = 1; }

static void reserve(char **buf, size_t *cap, size_t need) {
    if (need <= *cap) return;
    size_t cap2 = *cap ? *cap : 4096;
    while (cap2 < need) cap2 *= 2;
    char *grown = realloc(*buf, cap2);
    if (!grown) { perror("realloc"); exit(1); }
    *buf = grown;
    *cap = cap2;
}

static void append(conn_t *c, const char *data, size_t len) {
    reserve(&c->out, &c->out_cap, c->out_len + len);
    memcpy(c->out + c->out_len, data, len);
    c->out_len += len;
}

static void conn_close(conn_t *c) {
    close(c->fd); /* closing the fd also removes it from the epoll set */
    free(c->in);
    free(c->out);
    free(c);
}

static void arm(conn_t *c, int want_out) {
    if (c->want_out == want_out) return;
    struct epoll_event ev = {.events = want_out ? EPOLLOUT : EPOLLIN, .data.ptr = c};
    epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
    c->want_out = want_out;
}

/* Write what is pending; returns 0 when the connection was closed. */
static int conn_flush(conn_t *c) {
    while (c->out_pos < c->out_len) {
        ssize_t n = write(c->fd, c->out + c->out_pos, c->out_len - c->out_pos);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) { arm(c, 1); return 1; }
            conn_close(c);
            return 0;
        }
        c->out_pos += (size_t)n;
    }
    c->out_len = c->out_pos = 0;
    if (c->closing) { conn_close(c); return 0; }
    arm(c, 0);
    return 1;
}

static const char *reason(int status) {
    switch (status) {
    case 200: return "OK";
    case 204: return "No Content";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Other";
    }
}

static int all_digits(const char *s, size_t len) {
    if (len == 0 || len > 9) return 0;
    for (size_t i = 0; i < len; i++)
        if (s[i] < '0' || s[i] > '9') return 0;
    return 1;
}

static void respond(conn_t *c, const char *path, size_t path_len, int keep_alive, int http10) {
    int status = 404;
    const char *body = "Not Found\n";
    long body_len = 10;
    size_t q = 0;
    while (q < path_len && path[q] != '?') q++;
    if (q == 1 && path[0] == '/') {
        status = 200; body = "Hello World!"; body_len = 12;
    } else if (q > 7 && strncmp(path, "/bytes/", 7) == 0) {
        long n = all_digits(path + 7, q - 7) ? atol(path + 7) : -1;
        if (n >= 0 && n <= MAX_BODY) {
            if (n > filler_len) {
                filler = realloc(filler, (size_t)n);
                memset(filler, 'x', (size_t)n);
                filler_len = n;
            }
            status = 200; body = filler; body_len = n;
        } else {
            status = 400; body = "bad size\n"; body_len = 9;
        }
    } else if (q > 8 && strncmp(path, "/status/", 8) == 0 && all_digits(path + 8, q - 8)) {
        status = atoi(path + 8);
        if (status < 200 || status > 599) status = 400;
        body = reason(status); body_len = (long)strlen(body);
    }
    int no_body = status == 204 || status == 304;
    char head[256];
    int n = snprintf(head, sizeof head, "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\n",
                     status, reason(status));
    if (!no_body) n += snprintf(head + n, sizeof head - n, "Content-Length: %ld\r\n", body_len);
    if (!keep_alive) n += snprintf(head + n, sizeof head - n, "Connection: close\r\n");
    else if (http10) n += snprintf(head + n, sizeof head - n, "Connection: keep-alive\r\n");
    n += snprintf(head + n, sizeof head - n, "\r\n");
    append(c, head, (size_t)n);
    if (!no_body) append(c, body, (size_t)body_len);
}

static int header_is(const char *line, size_t len, const char *name) {
    size_t nl = strlen(name);
    return len > nl && strncasecmp(line, name, nl) == 0 && line[nl] == ':';
}

static void trimmed(const char **s, size_t *len) {
    while (*len && (**s == ' ' || **s == '\t')) { (*s)++; (*len)--; }
    while (*len && ((*s)[*len - 1] == ' ' || (*s)[*len - 1] == '\t')) (*len)--;
}

/* Answer every complete request in c->in; returns 0 on a malformed one. */
static int handle_requests(conn_t *c) {
    size_t start = 0;
    while (!c->closing) {
        if (c->body_left) {
            size_t avail = c->in_len - start;
            size_t skip = avail < (size_t)c->body_left ? avail : (size_t)c->body_left;
            start += skip;
            c->body_left -= (long)skip;
            if (c->body_left) break;
        }
        char *head = c->in + start;
        char *end = memmem(head, c->in_len - start, "\r\n\r\n", 4);
        if (!end) break;
        char *line_end = memmem(head, (size_t)(end - head) + 2, "\r\n", 2);
        char *sp1 = memchr(head, ' ', (size_t)(line_end - head));
        char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(line_end - sp1 - 1)) : NULL;
        if (!sp2 || line_end - sp2 - 1 != 8 || strncmp(sp2 + 1, "HTTP/1.", 7) != 0) return 0;
        int http10 = sp2[8] == '0';
        int keep_alive = !http10;
        char *line = line_end + 2;
        while (line < end) {
            char *next = memmem(line, (size_t)(end - line) + 2, "\r\n", 2);
            size_t len = (size_t)(next - line);
            if (header_is(line, len, "connection")) {
                const char *v = line + 11; size_t vl = len - 11;
                trimmed(&v, &vl);
                if (vl == 5 && strncasecmp(v, "close", 5) == 0) keep_alive = 0;
                if (vl == 10 && strncasecmp(v, "keep-alive", 10) == 0) keep_alive = 1;
            } else if (header_is(line, len, "content-length")) {
                c->body_left = atol(line + 15);
                if (c->body_left < 0) return 0;
            } else if (header_is(line, len, "transfer-encoding")) {
                return 0;
            }
            line = next + 2;
        }
        respond(c, sp1 + 1, (size_t)(sp2 - sp1 - 1), keep_alive, http10);
        if (!keep_alive) c->closing = 1;
        start = (size_t)(end - c->in) + 4;
    }
    if (start > c->in_len) start = c->in_len;
    memmove(c->in, c->in + start, c->in_len - start);
    c->in_len -= start;
    return c->in_len <= MAX_HEAD;
}

static void on_readable(conn_t *c) {
    for (;;) {
        char **buf = echo_mode ? &c->out : &c->in;
        size_t *len = echo_mode ? &c->out_len : &c->in_len;
        size_t *cap = echo_mode ? &c->out_cap : &c->in_cap;
        reserve(buf, cap, *len + READ_CHUNK);
        ssize_t n = read(c->fd, *buf + *len, READ_CHUNK);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) break;
        if (n <= 0) { conn_close(c); return; }
        *len += (size_t)n;
        if (echo_mode) {
            if (!conn_flush(c)) return;
            if (c->want_out) return; /* peer reads slowly: stop reading until it catches up */
        } else if (!handle_requests(c)) {
            static const char bad[] =
                "HTTP/1.1 400 Bad Request\r\nContent-Length: 12\r\nConnection: close\r\n\r\nBad Request\n";
            append(c, bad, sizeof bad - 1);
            c->closing = 1;
            conn_flush(c);
            return;
        } else if (c->out_len) {
            if (!conn_flush(c) || c->want_out) return;
        }
        if ((size_t)n < READ_CHUNK) break;
    }
}

static int listen_on(const char *host, const char *port) {
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICHOST};
    struct addrinfo *ai;
    int rc = getaddrinfo(host, port, &hints, &ai);
    if (rc != 0) { fprintf(stderr, "bad address %s:%s: %s\n", host, port, gai_strerror(rc)); exit(2); }
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, BACKLOG) < 0) {
        fprintf(stderr, "cannot listen on %s:%s: %s\n", host, port, strerror(errno));
        exit(2);
    }
    freeaddrinfo(ai);
    return fd;
}

static int bound_port(int fd) {
    struct sockaddr_storage addr;
    socklen_t len = sizeof addr;
    getsockname(fd, (struct sockaddr *)&addr, &len);
    if (addr.ss_family == AF_INET6) return ntohs(((struct sockaddr_in6 *)&addr)->sin6_port);
    return ntohs(((struct sockaddr_in *)&addr)->sin_port);
}

int main(int argc, char **argv) {
    if (argc != 4 || (strcmp(argv[1], "hello") != 0 && strcmp(argv[1], "echo") != 0)) {
        fprintf(stderr, "usage: %s hello|echo HOST PORT\n", argv[0]);
        return 2;
    }
    echo_mode = strcmp(argv[1], "echo") == 0;
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa = {.sa_handler = on_signal}; /* no SA_RESTART: epoll_wait returns EINTR */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    int lfd = listen_on(argv[2], argv[3]);
    epfd = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    epoll_ctl(epfd, EPOLL_CTL_ADD, lfd, &ev);
    printf("NETBENCH_LISTENING port=%d\n", bound_port(lfd));
    fflush(stdout);

    struct epoll_event events[512];
    while (!stopping) {
        int n = epoll_wait(epfd, events, 512, -1);
        if (n < 0) {
            if (errno == EINTR) continue;
            perror("epoll_wait");
            return 1;
        }
        for (int i = 0; i < n; i++) {
            conn_t *c = events[i].data.ptr;
            if (c == NULL) {
                int fd;
                while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
                    conn_t *nc = calloc(1, sizeof *nc);
                    nc->fd = fd;
                    struct epoll_event cev = {.events = EPOLLIN, .data.ptr = nc};
                    epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &cev);
                }
            } else if (c->want_out) {
                if (events[i].events & (EPOLLERR | EPOLLHUP) && !(events[i].events & EPOLLOUT)) {
                    conn_close(c);
                } else if (conn_flush(c) && !c->want_out) {
                    on_readable(c); /* bytes may have arrived while reading was paused */
                }
            } else {
                on_readable(c);
            }
        }
    }
    return 0;
}
