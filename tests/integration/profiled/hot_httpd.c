/* A keep-alive HTTP/1.1 server whose requests spend their CPU in one named function
 * (profile tests): hot_httpd PORT_FILE; binds 127.0.0.1 port 0, prints "port N". */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

volatile unsigned long sink;

__attribute__((noinline)) unsigned long checksum_body(int rounds) {
    unsigned long sum = 0;
    for (int i = 0; i < rounds; i++) sum = sum * 31 + (unsigned long)i;
    return sum;
}

static void serve(int fd) {
    char buf[8192];
    size_t have = 0;
    const char reply[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    for (;;) {
        ssize_t n = read(fd, buf + have, sizeof buf - have - 1);
        if (n <= 0) return;
        have += (size_t)n;
        buf[have] = 0;
        char *end;
        while ((end = strstr(buf, "\r\n\r\n")) != NULL) {
            sink = checksum_body(200000);
            if (write(fd, reply, sizeof reply - 1) < 0) return;
            size_t used = (size_t)(end + 4 - buf);
            memmove(buf, buf + used, have - used);
            have -= used;
            buf[have] = 0;
        }
    }
}

int main(void) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(s, (struct sockaddr *)&a, sizeof a) || listen(s, 64)) return 1;
    socklen_t len = sizeof a;
    getsockname(s, (struct sockaddr *)&a, &len);
    printf("port %d\n", ntohs(a.sin_port));
    fflush(stdout);
    for (;;) {
        int c = accept(s, NULL, NULL);
        if (c < 0) continue;
        serve(c);
        close(c);
    }
}
