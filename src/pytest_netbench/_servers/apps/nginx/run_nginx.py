"""Run Debian's nginx as a pytest-netbench reference server (HTTP hello only).

usage: python run_nginx.py --host HOST --port PORT [--nginx /usr/sbin/nginx]
                          [--proxy-to BACKEND_HOST:PORT] [--http2 h2c|h2]

With --proxy-to it is a reverse proxy to that backend instead (proxy_pass, HTTP/1.1 with
a pool of 64 kept-alive upstream connections); absolute-form requests (a forward
proxy's) go to the same backend.

nginx cannot report a port it got from the kernel, so this script binds the
socket itself (port 0 allowed), hands it to nginx through the NGINX environment
variable (nginx's own mechanism for inheriting listening sockets on binary
upgrade), and execs nginx: the launcher's pid becomes nginx's master process.
A detached helper waits until nginx answers GET / and then prints the ready
line, so "ready" means nginx itself serves.  The config lives in a memfd, so no
file is left behind; temp paths go to a per-user cache directory.
"""

import argparse
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time

CONFIG = """\
{user}daemon off;
master_process on;
worker_processes 1;
pid {run_dir}/nginx-{pid}.pid;
error_log stderr warn;
events {{ worker_connections 16384; }}
http {{
    access_log off;
    client_body_temp_path {run_dir}/body;
    proxy_temp_path {run_dir}/proxy;
    fastcgi_temp_path {run_dir}/fastcgi;
    uwsgi_temp_path {run_dir}/uwsgi;
    scgi_temp_path {run_dir}/scgi;
    keepalive_requests 1000000;
{server_block}}}
"""
HELLO_SERVER = """\
    server {{
        listen {listen}{http2} backlog=4096;
{tls}        default_type text/plain;
        location = / {{ return 200 "Hello World!"; }}
{trailers}{status_locations}
        location ~ "^/bytes/([0-9]+)$" {{ alias {filler_dir}/$1; }}
        location / {{ return 404 "Not Found\\n"; }}
    }}
"""
PROXY_SERVER = """\
    upstream backend {{ server {backend}; keepalive 64; }}
    server {{
        listen {listen} backlog=4096;
        location / {{
            proxy_pass http://backend;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
        }}
    }}
"""
# nginx's `return` takes only a literal code, so each /status/N gets its own location.
STATUSES = (200, 201, 204, 301, 302, 304, 400, 401, 403, 404, 429, 500, 502, 503, 504)
# /bytes/N is served from pre-made files, so only these sizes exist (others are 404):
# 0, powers of two up to 4 MiB and powers of ten up to 10**6 (about 9.5 MB on disk).
FILLER_SIZES = sorted({0} | {2**k for k in range(23)} | {10**k for k in range(7)})


def status_locations():
    lines = []
    for status in STATUSES:
        if status in (204, 304):
            action = "return %d;" % status
        else:
            action = 'return %d "Status %d";' % (status, status)
        lines.append("        location = /status/%d { %s }" % (status, action))
    return "\n".join(lines)


def cache_dir():
    """The same cache root as the catalog's builds (see build.cache_root)."""
    root = os.environ.get("PYTEST_NETBENCH_CACHE_DIR")
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "pytest-netbench")
    return os.path.join(os.path.expanduser(root), "nginx")


def make_fillers(filler_dir):
    os.makedirs(filler_dir, exist_ok=True)
    for size in FILLER_SIZES:
        path = os.path.join(filler_dir, str(size))
        if os.path.exists(path) and os.path.getsize(path) == size:
            continue
        tmp = "%s.%d.tmp" % (path, os.getpid())
        with open(tmp, "wb") as out:
            out.write(b"x" * size)
        os.replace(tmp, path)


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def answers(host, port, http2):
    """True once nginx serves: a 200 to GET / over HTTP/1.1, or, over HTTP/2, a SETTINGS
    frame answering the client's preface (over TLS, with ALPN h2 chosen)."""
    with socket.create_connection((host, port), timeout=1.0) as probe:
        if not http2:
            probe.sendall(b"GET / HTTP/1.1\r\nHost: netbench\r\nConnection: close\r\n\r\n")
            return probe.recv(64).startswith(b"HTTP/1.1 200")
        if http2 == "h2":
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
            context.set_alpn_protocols(["h2"])
            probe = context.wrap_socket(probe, server_hostname=host)
            if probe.selected_alpn_protocol() != "h2":
                return False
        probe.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00")
        head = probe.recv(9)
        return len(head) == 9 and head[3] == 0x4


def wait_and_announce(master_pid, host, port, http2="", scratch="", timeout=60.0):
    """In the helper process: poll nginx and print the ready line once it answers."""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline and alive(master_pid):
            try:
                if answers(host, port, http2):
                    sys.stdout.write("NETBENCH_LISTENING port=%d\n" % port)
                    sys.stdout.flush()
                    return 0
            except (OSError, ssl.SSLError):
                pass
            time.sleep(0.01)
        return 1  # nginx died (its own error is in the log) or never answered
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)


def self_signed(host, folder):
    key, cert = os.path.join(folder, "key.pem"), os.path.join(folder, "cert.pem")
    san = "IP:" + host if host.replace(".", "").isdigit() or ":" in host else "DNS:" + host
    command = ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt"]
    command += ["ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", cert]
    command += ["-days", "1", "-subj", "/CN=netbench " + host, "-addext", "subjectAltName=" + san]
    subprocess.run(command, check=True, capture_output=True)
    return key, cert


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--nginx", default="/usr/sbin/nginx")
    parser.add_argument("--proxy-to", default="", help="HOST:PORT: be a proxy to it")
    parser.add_argument("--http2", choices=("h2c", "h2"), default="", help="serve HTTP/2")
    args = parser.parse_args()

    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((args.host, args.port))
    except OSError as exc:
        sys.stderr.write("cannot listen on %s:%d: %s\n" % (args.host, args.port, exc))
        return 2
    listener.listen(4096)
    port = listener.getsockname()[1]
    listen = ("[%s]:%d" if family == socket.AF_INET6 else "%s:%d") % (args.host, port)

    run_dir = cache_dir()
    filler_dir = os.path.join(run_dir, "bytes")
    os.makedirs(run_dir, exist_ok=True)
    make_fillers(filler_dir)
    scratch, tls = "", ""
    if args.http2 == "h2":
        scratch = tempfile.mkdtemp(prefix="netbench-nginx-tls-", dir=run_dir)
        key, cert = self_signed(args.host, scratch)
        tls = "        ssl_certificate %s;\n        ssl_certificate_key %s;\n" % (cert, key)
    if args.proxy_to:
        server_block = PROXY_SERVER.format(backend=args.proxy_to, listen=listen)
    else:
        server_block = HELLO_SERVER.format(
            listen=listen,
            http2={"": "", "h2c": " http2", "h2": " ssl http2"}[args.http2],
            tls=tls,
            # HTTP/2's hello apps answer /trailers with "ok" and a trailer "x-done: yes".
            trailers='        location = /trailers { add_trailer x-done yes; return 200 "ok"; }\n'
            if args.http2
            else "",
            filler_dir=filler_dir,
            status_locations=status_locations(),
        )
    config = CONFIG.format(
        # Run as root, nginx would switch its worker to "nobody", who cannot read ~/.cache.
        user="user root;\n" if os.geteuid() == 0 else "",
        run_dir=run_dir,
        pid=os.getpid(),
        server_block=server_block,
    )
    # flags=0: no close-on-exec, so nginx can open it as /proc/self/fd/N after the exec.
    config_fd = os.memfd_create("netbench-nginx.conf", 0)
    os.write(config_fd, config.encode())

    # Double fork: the helper must not be nginx's child (nginx reaps children it knows).
    master_pid = os.getpid()
    child = os.fork()
    if child == 0:
        if os.fork() != 0:
            os._exit(0)
        listener.close()
        os.close(config_fd)
        os._exit(wait_and_announce(master_pid, args.host, port, args.http2, scratch))
    os.waitpid(child, 0)

    listener.set_inheritable(True)
    env = dict(os.environ, NGINX="%d;" % listener.fileno())
    config_path = "/proc/self/fd/%d" % config_fd
    argv = [args.nginx, "-e", "stderr", "-p", run_dir, "-c", config_path]
    try:
        os.execve(args.nginx, argv, env)
    except OSError as exc:
        sys.stderr.write("cannot run %s: %s\n" % (args.nginx, exc))
        return 2


if __name__ == "__main__":
    sys.exit(main())
