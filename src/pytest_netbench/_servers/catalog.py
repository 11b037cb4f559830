"""The catalog of reference servers: a name and an app give a :class:`ServerSpec`.

Every catalog server binds ``{host}:{port}`` (port 0 allowed), prints
``NETBENCH_LISTENING port=<n>`` once it listens, serves the HTTP *hello* app
(``/`` -> ``Hello World!``, ``/bytes/N``, ``/status/N``) and, where the
framework does raw TCP, an *echo* app; where it speaks WebSocket, a *ws* app (every
path echoes each message, text or binary, as it came); where it speaks HTTP/2, the hello
app over HTTP/2 as *h2c* (cleartext, prior knowledge) and *h2* (TLS, ALPN ``h2``, a
self-signed certificate made at start), and a *grpc* app (unary ``/netbench.Echo/Say``,
``Fail``, ``Sleep``). ``get`` raises :class:`ToolchainMissing`
with the reason when a server cannot run on this machine, so the plugin can
skip it; compiled servers are built on first use (see ``build.py``).
"""

from __future__ import annotations

import difflib
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pytest_netbench._errors import InterpreterNotFound, SpecError, ToolchainMissing
from pytest_netbench._servers import build, interpreter_names
from pytest_netbench._servers.interpreters import interpreter_info
from pytest_netbench._servers.spec import AppKind, ServerSpec

PORT_PATTERN = r"NETBENCH_LISTENING port=(\d+)"
APPS: tuple[AppKind, ...] = ("hello", "echo", "ws", "h2c", "h2", "grpc")
_H2: tuple[AppKind, ...] = ("h2c", "h2")
# What each app speaks, for the error naming an app a server lacks.
_APP_WORDS: dict[str, str] = {
    "hello": "HTTP/1.1",
    "echo": "raw TCP",
    "ws": "WebSocket",
    "h2c": "HTTP/2 over cleartext",
    "h2": "HTTP/2 over TLS",
    "grpc": "gRPC",
}
_HELLO_ECHO: tuple[AppKind, ...] = ("hello", "echo")
_APPS_DIR = Path(__file__).parent / "apps"
_MIN_PYTHON = (3, 9)  # the apps avoid newer syntax so Debian's PyPy (3.9) runs them

Kind = Literal["python", "compiled", "node", "nginx"]


@dataclass(frozen=True, slots=True)
class _Entry:
    name: str
    kind: Kind
    apps: tuple[AppKind, ...]
    description: str
    script: str = ""  # python: file in apps/python; node: file in apps/node
    modules: tuple[str, ...] = ()  # python: modules that must be importable
    recipe: build.BuildRecipe | None = None  # compiled: how to build it
    run_tools: tuple[str, ...] = ()  # compiled: what runs the artifact besides itself
    proxy: bool = False  # an HTTP proxy: needs a backend (host:port) to pass requests to
    ws_recipe: build.BuildRecipe | None = None  # compiled: the ws app, when built apart
    h2_recipe: build.BuildRecipe | None = None  # compiled: the h2c/h2 apps, built apart
    h2_script: str = ""  # node: the file in apps/node serving h2c/h2


def _python(
    name: str, script: str, description: str, *modules: str, echo: bool = True, ws: bool = False
) -> _Entry:
    apps: tuple[AppKind, ...] = ("hello", *(("echo",) if echo else ()), *(("ws",) if ws else ()))
    return _Entry(name, "python", apps, description, script=script, modules=modules)


def _compiled(name: str, recipe: build.BuildRecipe, description: str, *run: str) -> _Entry:
    return _Entry(name, "compiled", _HELLO_ECHO, description, recipe=recipe, run_tools=run)


_C = build.BuildRecipe(
    name="c",
    source_dir=_APPS_DIR / "c",
    tools=("gcc",),
    steps=(("gcc", "-O2", "-o", "{out}/server", "{src}/server.c"),),
    artifact="server",
    install_hint="Debian: apt-get install gcc",
)
_RUST = build.BuildRecipe(
    name="rust",
    source_dir=_APPS_DIR / "rust",
    tools=("rustc", "cc"),
    steps=(("rustc", "-O", "--edition", "2021", "-o", "{out}/server", "{src}/main.rs"),),
    artifact="server",
    install_hint="https://rustup.rs, or Debian: apt-get install rustc",
)
_GO_HINT = "https://go.dev/dl, or Debian: apt-get install golang-go"


def _go(name: str, *build_args: str, install_hint: str = _GO_HINT) -> build.BuildRecipe:
    """The build of the Go app in apps/NAME: ``go build ARGS`` with the installed Go
    (never a toolchain download) and no cgo."""
    return build.BuildRecipe(
        name=name,
        source_dir=_APPS_DIR / name,
        tools=("go",),
        steps=(("go", "build", *build_args),),
        artifact="server",
        install_hint=install_hint,
        env={"GOTOOLCHAIN": "local", "CGO_ENABLED": "0"},
    )


_GO = _go("go", "-o", "{out}/server", "{src}/main.go")
# The Go ws app is a module of its own (gorilla/websocket): its first build downloads it
# through the Go module proxy, checked against go.sum; the hello/echo build stays offline.
_GO_WS = _go("go_ws", "-C", "{src}", "-o", "{out}/server", ".")
# HTTP/2 (issue 22): h2c and TLS+ALPN h2 from net/http alone (Go 1.24+'s http.Protocols),
# built apart so that an older Go still builds the hello/echo app: the go entry's h2c and
# h2 apps.
GO_H2 = _go(
    "go_h2",
    "-o",
    "{out}/server",
    "{src}/main.go",
    install_hint="https://go.dev/dl (1.24 or later), or Debian: apt-get install golang-go",
)
# Node's ws app needs the ws package: its build installs that one version from the npm
# registry (ws has no dependencies) beside a copy of the script, which finds it there.
_WS_NPM = "ws@8.23.0"
_NODE_WS = build.BuildRecipe(
    name="node_ws",
    source_dir=_APPS_DIR / "node_ws",
    tools=("npm", "cp"),
    steps=(
        ("npm", "install", "--prefix", "{out}", "--no-audit", "--no-fund", "--no-save", _WS_NPM),
        ("cp", "{src}/ws_server.js", "{out}/ws_server.js"),
    ),
    artifact="ws_server.js",
    install_hint="Debian: apt-get install nodejs npm",
)
_JAVA = build.BuildRecipe(
    name="java",
    source_dir=_APPS_DIR / "java",
    tools=("javac",),
    steps=(("javac", "-d", "{out}", "{src}/NetbenchServer.java"),),
    artifact="NetbenchServer.class",
    install_hint="Debian: apt-get install openjdk-17-jdk-headless",
)

_ENTRIES: dict[str, _Entry] = {
    e.name: e
    for e in (
        _python("asyncio_streams", "asyncio_streams_server.py", "asyncio streams (stdlib)"),
        _python(
            "asyncio_uvloop", "asyncio_uvloop_server.py", "asyncio.Protocol on uvloop", "uvloop"
        ),
        _python(
            "socketserver", "socketserver_server.py", "http.server / socketserver, a thread each"
        ),
        _python("wsgiref", "wsgiref_server.py", "wsgiref.simple_server (HTTP/1.0)", echo=False),
        _python(
            "twisted", "twisted_server.py", "twisted.web hello, twisted.internet echo", "twisted"
        ),
        _python("twisted_web", "twisted_server.py", "twisted.web", "twisted", echo=False),
        _python(
            "tornado",
            "tornado_server.py",
            "tornado.web hello, TCPServer echo, WebSocketHandler echo",
            "tornado",
            ws=True,
        ),
        _python("gevent", "gevent_server.py", "gevent WSGIServer / StreamServer", "gevent"),
        _python("eventlet", "eventlet_server.py", "eventlet.wsgi, green-thread echo", "eventlet"),
        _python(
            "aiohttp",
            "aiohttp_server.py",
            "aiohttp.web hello, WebSocketResponse echo",
            "aiohttp",
            echo=False,
            ws=True,
        ),
        _python("trio", "trio_server.py", "trio streams", "trio"),
        _Entry(
            "go",
            "compiled",
            ("hello", "echo", "ws", *_H2),
            "Go net/http hello (HTTP/1.1; HTTP/2 h2c and TLS), net echo, gorilla/websocket echo",
            recipe=_GO,
            ws_recipe=_GO_WS,
            h2_recipe=GO_H2,
        ),
        _Entry(
            "node",
            "node",
            ("hello", "echo", "ws", *_H2),
            "Node.js http / http2 / net / the ws package",
            script="server.js",
            run_tools=("node",),
            ws_recipe=_NODE_WS,
            h2_script="h2_server.js",
        ),
        _compiled("java", _JAVA, "com.sun.net.httpserver on a thread pool, thread echo", "java"),
        _compiled("c", _C, "C, one thread, epoll"),
        _compiled("rust", _RUST, "Rust std, a thread per connection"),
        _Entry("nginx", "nginx", ("hello", *_H2), "nginx (Debian package), 1 worker"),
        _python(
            "starlette",
            "starlette_server.py",
            "Starlette on uvicorn: hello, and streams with set timings (/sse, /chunks)",
            "starlette",
            "uvicorn",
            echo=False,
        ),
        _Entry(
            "hypercorn",
            "python",
            _H2,
            "hypercorn (ASGI, HTTP/2 from the h2 library)",
            script="hypercorn_server.py",
            modules=("hypercorn",),
        ),
        _Entry(
            "grpcio",
            "python",
            ("grpc",),
            "grpcio (gRPC's C core), unary echo on raw bytes",
            script="grpcio_server.py",
            modules=("grpc",),
        ),
        # Proxies (seed 004): each serves HTTP by passing every request, reverse or forward
        # (absolute-form), to the one backend it is given.
        _Entry(
            "twisted_proxy",
            "python",
            ("hello",),
            "twisted.web.proxy, a new backend connection per request",
            script="twisted_proxy_server.py",
            modules=("twisted",),
            proxy=True,
        ),
        _Entry(
            "go_proxy",
            "compiled",
            ("hello",),
            "Go httputil.ReverseProxy, default transport",
            recipe=_GO,
            proxy=True,
        ),
        _Entry(
            "nginx_proxy",
            "nginx",
            ("hello",),
            "nginx proxy_pass, 64 kept-alive upstream connections",
            proxy=True,
        ),
    )
}

_JAVA_SERVER_OPTIONS = (
    # The JDK server closes idle keep-alive connections beyond 200 by default, which a
    # load with more connections sees as resets; lift that limit.
    "-Dsun.net.httpserver.maxIdleConnections=100000",
    # It writes headers and body separately: with Nagle on, the body waits for the
    # client's delayed ACK (about 40 ms a request).
    "-Dsun.net.httpserver.nodelay=true",
)
# How each kind of proxy is told its backend (a compiled one takes it as its last argument).
_BACKEND_ARGS: dict[Kind, tuple[str, ...]] = {
    "python": ("--backend",),
    "nginx": ("--proxy-to",),
    "compiled": (),
    "node": (),
}
_NGINX_PATHS = ("/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/local/nginx/sbin/nginx")
_DISTRIBUTIONS = {"twisted": "Twisted", "grpc": "grpcio"}
_CPYTHON_ONLY = {"uvloop"}  # built on CPython's C API internals; no PyPy build exists


def names(app: AppKind | None = "hello", *, proxies: bool = False) -> list[str]:
    """Every catalog server that has ``app`` (all of them with ``app=None``); the proxies,
    which need a backend, only with ``proxies=True``."""
    return [
        name
        for name, entry in _ENTRIES.items()
        if (app is None or app in entry.apps) and (proxies or not entry.proxy)
    ]


def proxy_names() -> list[str]:
    """The catalog's HTTP proxies (each needs ``backend=``)."""
    return [name for name, entry in _ENTRIES.items() if entry.proxy]


def get(
    name: str, app: AppKind = "hello", python: str | None = None, backend: str | None = None
) -> ServerSpec:
    """The spec of catalog server ``name`` running ``app``; builds compiled ones first.

    ``python`` picks the interpreter of a Python server (``"pypy3"`` or a path).
    ``backend`` (``"HOST:PORT"``) is where a proxy (``twisted_proxy``, ``go_proxy``,
    ``nginx_proxy``) passes its requests; only proxies take it, and they need it.
    Raises :class:`SpecError` for an unknown name or app, :class:`ToolchainMissing`
    when this machine cannot run it, :class:`BuildFailed` when a build fails.
    """
    entry = _entry(name, app)
    _check_backend(entry, backend)
    if python is not None and entry.kind != "python":
        raise SpecError(
            f"python={python!r} applies to the Python servers only; {name!r} is "
            f"{entry.description}; drop python= for it"
        )
    if entry.kind == "python":
        command = _python_command(entry, app, python)
    elif entry.kind == "compiled":
        command = _compiled_command(entry, "proxy" if entry.proxy else app)
    elif entry.kind == "node":
        node = _require_tool("node", "Debian: apt-get install nodejs")
        script = _APPS_DIR / "node" / entry.script
        if app == "ws" and entry.ws_recipe is not None:
            script = build.ensure_built(entry.ws_recipe).artifact
        elif app in _H2:
            script = _APPS_DIR / "node" / entry.h2_script
        command = (node, str(script), app, "{host}", "{port}")
    else:
        command = (
            "{python}",
            str(_APPS_DIR / "nginx" / "run_nginx.py"),
            "--host",
            "{host}",
            "--port",
            "{port}",
            "--nginx",
            _nginx_path(),
            *(("--http2", app) if app in _H2 else ()),
        )
    if backend is not None:
        command = (*command, *_BACKEND_ARGS[entry.kind], backend)
    return ServerSpec(
        name=name,
        app=app,
        command=command,
        protocol="tcp" if app in ("echo", "ws") else "http",
        port_pattern=PORT_PATTERN,
        python=python,
        startup_timeout_s=60.0 if entry.kind == "compiled" else 30.0,
        description=entry.description,
        # HTTP/2 apps are ready once they answer the preface with SETTINGS (gRPC too).
        ready_http2=app in (*_H2, "grpc"),
        tls=app == "h2",
    )


def availability(python: str | None = None) -> list[tuple[str, AppKind, bool, str]]:
    """``(name, app, available, reason)`` for every server and app, without building.

    For an available server the reason says what will run; otherwise why it cannot.
    ``python`` checks the Python servers under that interpreter instead of this one.
    """
    rows: list[tuple[str, AppKind, bool, str]] = []
    for entry in _ENTRIES.values():
        try:
            detail = _check(entry, python)
            ok = True
        except (ToolchainMissing, InterpreterNotFound) as exc:
            ok, detail = False, str(exc)
        rows.extend((entry.name, app, ok, detail) for app in entry.apps)
    return rows


def listing(app: AppKind | None = None) -> str:
    """The text of ``netbench servers``: what runs here, and why the rest does not.

    ``app`` limits it to the servers having that app; Python servers are also
    checked under every named interpreter (``NETBENCH_PYTHON``, the plugin's
    ``netbench_python``) and under ``pypy3`` when it is named or installed.
    """
    sections: list[tuple[str, str | None]] = [("this Python", None)]
    named = interpreter_names.known()
    for name, entry in named.items():
        sections.append((f"{name} = {entry.path} (python={name!r})", name))
    if "pypy3" not in named and shutil.which("pypy3") and sys.implementation.name != "pypy":
        sections.append(("pypy3 (python='pypy3')", "pypy3"))
    lines: list[str] = []
    for title, python in sections:
        rows = [row for row in availability(python) if app is None or row[1] == app]
        if python is not None:
            rows = [row for row in rows if _ENTRIES[row[0]].kind == "python"]
        lines.append(f"Catalog servers, Python ones on {title}:")
        by_name: dict[str, list[tuple[str, AppKind, bool, str]]] = {}
        for row in rows:
            by_name.setdefault(row[0], []).append(row)
        for name, entries in by_name.items():
            apps = "+".join(app for _, app, _, _ in entries)
            ok, reason = entries[0][2], entries[0][3]
            mark = "yes" if ok else "NO "
            lines.append(f"  {name:<16} {apps:<20} {mark}  {reason}")
        lines.append("")
    lines.append(
        "Use: Server.from_spec(catalog.get(name, app='hello'|'echo'|'ws'|'h2c'|'h2'|'grpc',"
        " python=None)), or the plugin's netbench_server(name, app=...)."
    )
    return "\n".join(lines)


# -- checks ----------------------------------------------------------------------------------


def _check_backend(entry: _Entry, backend: str | None) -> None:
    if entry.proxy and not backend:
        raise SpecError(
            f"{entry.name!r} is a proxy: give it a backend, e.g."
            f" netbench_server({entry.name!r}, backend=netbench_server('go')) or"
            " backend='127.0.0.1:8080'"
        )
    if backend is not None and not entry.proxy:
        proxies = ", ".join(n for n, e in _ENTRIES.items() if e.proxy)
        raise SpecError(f"{entry.name!r} is not a proxy and takes no backend (proxies: {proxies})")
    if backend is not None and (":" not in backend or not backend.rpartition(":")[2].isdigit()):
        raise SpecError(f"a backend is HOST:PORT, got {backend!r}")


def _entry(name: str, app: str) -> _Entry:
    entry = _ENTRIES.get(name)
    if entry is None:
        close = difflib.get_close_matches(str(name), list(_ENTRIES), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise SpecError(
            f"the catalog has no server {name!r}; {hint}known servers: {', '.join(_ENTRIES)}"
        )
    if app not in APPS:
        raise SpecError(
            "app must be 'hello' (HTTP), 'echo' (TCP), 'ws' (WebSocket echo), 'h2c' or 'h2'"
            f" (HTTP/2 over cleartext or TLS) or 'grpc' (gRPC unary echo), got {app!r}"
        )
    if app not in entry.apps:
        missing = _APP_WORDS[app]
        raise SpecError(
            f"catalog server {name!r} has no {app!r} app ({entry.description} does no"
            f" {missing} here); it has: {', '.join(entry.apps)}"
        )
    return entry


def _check(entry: _Entry, python: str | None) -> str:
    """Raise ToolchainMissing if ``entry`` cannot run here; else say what will run."""
    if entry.kind == "python":
        return _check_python(entry, python)
    if entry.kind == "node":
        return f"{entry.description}: {_require_tool('node', 'Debian: apt-get install nodejs')}"
    if entry.kind == "nginx":
        return f"{entry.description}: {_nginx_path()}"
    assert entry.recipe is not None
    built = build.is_built(entry.recipe)
    if not built:  # a finished build runs without its compiler
        build.require_tools(entry.recipe)
    for tool in entry.run_tools:
        _require_tool(tool, entry.recipe.install_hint)
    state = "built" if built else "built on first use"
    return f"{entry.description}: {', '.join(entry.recipe.tools)}; {state}"


def _check_python(entry: _Entry, python: str | None) -> str:
    try:
        info = interpreter_info(python, _ALL_MODULES)
    except InterpreterNotFound as exc:
        raise ToolchainMissing(str(exc)) from None
    path = info.path
    where = f"{info.implementation} {'.'.join(str(v) for v in info.version)}"
    if info.version[:2] < _MIN_PYTHON:
        raise ToolchainMissing(
            f"{entry.name!r} needs Python >= 3.9; {path} is {where}; pass a newer python="
        )
    missing = [m for m in entry.modules if m not in info.modules]
    if missing and info.implementation != "cpython" and set(missing) & _CPYTHON_ONLY:
        raise ToolchainMissing(
            f"{entry.name!r} needs {', '.join(missing)}, which supports CPython only; "
            f"{path} is {where}"
        )
    if missing:
        wheels = " ".join(_DISTRIBUTIONS.get(m, m) for m in missing)  # what pip installs
        raise ToolchainMissing(
            f"{entry.name!r} needs {', '.join(missing)}, not installed for {path} ({where}); "
            f"install it for that interpreter ({path} -m pip install {wheels}; "
            f"where pip refuses, make a virtualenv: {path} -m venv ENV, ENV/bin/pip install "
            f"{wheels}, and pass python='ENV/bin/{Path(path).name}' or name it "
            f"once in ini netbench_python or {interpreter_names.ENV_VAR})"
        )
    versions = [f"{m} {info.modules[m]}" for m in entry.modules]
    return f"{entry.description}; {where}" + (f", {', '.join(versions)}" if versions else "")


# Every module a catalog server needs -> its distribution name, asked of an interpreter once.
_ALL_MODULES = {m: _DISTRIBUTIONS.get(m, m) for e in _ENTRIES.values() for m in e.modules}


def _python_command(entry: _Entry, app: AppKind, python: str | None) -> tuple[str, ...]:
    _check_python(entry, python)
    script = str(_APPS_DIR / "python" / entry.script)
    return ("{python}", script, "--app", app, "--host", "{host}", "--port", "{port}")


def _compiled_command(entry: _Entry, app: str) -> tuple[str, ...]:
    recipe = entry.recipe
    if app == "ws" and entry.ws_recipe is not None:
        recipe = entry.ws_recipe
    elif app in _H2 and entry.h2_recipe is not None:
        recipe = entry.h2_recipe
    assert recipe is not None
    for tool in entry.run_tools:
        _require_tool(tool, recipe.install_hint)
    built = build.ensure_built(recipe)
    if entry.name == "java":
        java = _require_tool("java", recipe.install_hint)
        return (
            java,
            *_JAVA_SERVER_OPTIONS,
            "-cp",
            str(built.directory),
            "NetbenchServer",
            app,
            "{host}",
            "{port}",
        )
    return (str(built.artifact), app, "{host}", "{port}")


def _require_tool(tool: str, hint: str) -> str:
    path = shutil.which(tool)
    if path is None:
        raise ToolchainMissing(f"{tool!r} is not on PATH; install it ({hint})")
    return path


def _nginx_path() -> str:
    found = shutil.which("nginx") or next((p for p in _NGINX_PATHS if Path(p).is_file()), None)
    if found is None:
        raise ToolchainMissing(
            "nginx is not installed (not on PATH, nor in /usr/sbin); "
            "install it (Debian: apt-get install nginx-light)"
        )
    return found
