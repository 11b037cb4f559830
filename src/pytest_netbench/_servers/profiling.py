"""Sampling a managed server's process tree while a load runs: py-spy for CPython, Linux
``perf`` (the CPU clock) for native servers; folded stacks back (``_model.profile``).

:func:`start_profile` looks at the tree's root: a CPython interpreter gets py-spy (the
``profile`` extra) following every subprocess (gunicorn's workers) and thread; anything
else gets ``perf record -e cpu-clock -g`` on every process of the tree. Whatever stands
in the way (no profiler, ptrace or perf not permitted, PyPy, a stripped binary, a
profiler that fails) is one line in ``ServerProfile.problem``: the load runs all the same.
"""

from __future__ import annotations

import os
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from time import monotonic

import psutil

from pytest_netbench._model import ServerProfile
from pytest_netbench._model.profile import bounded

# Samples a second: per thread for py-spy (whose reads of the interpreter cost more), per
# CPU-second the tree spends for perf; both off round rates, so no timer beats with them.
RATE_HZ = 199
PERF_RATE_HZ = 997
_STOP_TIMEOUT_S = 30.0
_START_TIMEOUT_S = 15.0
_DWARF_STACK = 8192  # bytes of each sample's stack perf copies to unwind it
_PERF_OFFSET = re.compile(r"\+0x[0-9a-f]+$")


class RunningProfile:
    """A profiler attached to a process tree; :meth:`stop` ends it and reads its stacks."""

    def __init__(
        self, tool: str, argv: list[str], output: Path, processes: int, folder: Path
    ) -> None:
        self.tool = tool
        self.rate_hz = PERF_RATE_HZ if tool == "perf" else RATE_HZ
        self.output = output
        self.processes = processes
        self._folder = folder
        self._started = monotonic()
        self._pipes: tuple[int, ...] = ()
        if tool != "perf":
            self._proc = subprocess.Popen(
                argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
            )
            return
        # perf takes a while to attach (reading the tree's memory maps, on a busy machine
        # a good part of a second): it starts with its events off, and is told to turn them
        # on through a control pipe, which it acknowledges once it samples, so that the
        # profiled run starts only then.
        ctl_read, ctl_write = os.pipe()
        ack_read, ack_write = os.pipe()
        argv = [*argv, "--delay", "-1", "--control", f"fd:{ctl_read},{ack_write}"]
        try:
            self._proc = subprocess.Popen(
                argv,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                start_new_session=True,
                pass_fds=(ctl_read, ack_write),
            )
        finally:
            os.close(ctl_read)
            os.close(ack_write)
        # Both kept open until perf ends: the end of its control pipe would end it early.
        self._pipes = (ctl_write, ack_read)
        try:
            os.write(ctl_write, b"enable\n")
            deadline = monotonic() + _START_TIMEOUT_S
            while self._proc.poll() is None and monotonic() < deadline:
                if select.select([ack_read], [], [], 0.1)[0]:
                    os.read(ack_read, 64)  # "ack": sampling; or "" (it exited): see stop()
                    break
        except OSError:
            pass  # perf exited before reading its pipe: stop() says why
        self._started = monotonic()

    def stop(self) -> ServerProfile:
        duration = monotonic() - self._started
        try:
            if self._proc.poll() is None:
                self._proc.send_signal(signal.SIGINT)
            try:
                _, err = self._proc.communicate(timeout=_STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                _, err = self._proc.communicate()
                return _problem(f"{self.tool} did not stop within {_STOP_TIMEOUT_S:g} s")
            folded = self._read(err.decode(errors="replace"))
        finally:
            for fd in self._pipes:
                os.close(fd)
            self._pipes = ()
            shutil.rmtree(self._folder, ignore_errors=True)
        if isinstance(folded, str):
            return _problem(folded, tool=self.tool)
        samples = sum(folded.values())
        if not samples:
            return _problem(f"{self.tool} took no sample of the server (was it idle?)", self.tool)
        return ServerProfile(
            tool=self.tool,
            samples=samples,
            rate_hz=self.rate_hz,
            duration_s=duration,
            processes=self.processes,
            folded=bounded(folded),
        )

    def _read(self, err: str) -> dict[str, int] | str:
        if not self.output.exists() or not self.output.stat().st_size:
            return f"{self.tool} wrote no profile: {_last_line(err) or 'no message'}"
        if self.tool == "py-spy":
            return fold_py_spy(self.output.read_text(errors="replace"))
        script = subprocess.run(
            ["perf", "script", "-i", str(self.output), "-F", "comm,ip,sym,dso"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        if script.returncode != 0:
            return f"perf script failed: {_last_line(script.stderr)}"
        return fold_perf_script(script.stdout)


class NoProfile:
    """What :func:`start_profile` gives when it cannot profile: :meth:`stop` says why."""

    def __init__(self, profile: ServerProfile) -> None:
        self.profile = profile

    def stop(self) -> ServerProfile:
        return self.profile


def start_profile(pid: int) -> RunningProfile | NoProfile:
    """Start sampling the process tree rooted at ``pid`` (:meth:`RunningProfile.stop`
    ends it), or a :class:`NoProfile` saying why that cannot be done."""
    started = _start(pid)
    return NoProfile(started) if isinstance(started, ServerProfile) else started


def _start(pid: int) -> RunningProfile | ServerProfile:
    try:
        root = psutil.Process(pid)
        tree = [root, *root.children(recursive=True)]
        exe = root.exe()
    except psutil.Error as exc:
        return _problem(f"cannot read the server's process {pid}: {exc}")
    folder = Path(tempfile.mkdtemp(prefix="netbench-profile-"))
    name = Path(exe).name.lower()
    if "pypy" in name:
        return _problem(
            "py-spy cannot profile PyPy and perf sees only its JIT: no profile of this server"
        )
    if name.startswith("python"):
        py_spy = find_py_spy()
        if py_spy is None:
            return _problem(
                "py-spy is not installed: pip install 'pytest-netbench[profile]' to profile a"
                " Python server"
            )
        output = folder / "folded.txt"
        argv = [py_spy, "record", "--pid", str(pid), "--subprocesses", "--nolineno", "--gil"]
        argv += ["--rate", str(RATE_HZ), "--format", "raw", "--output", str(output)]
        argv.append("--nonblocking")  # never stops the server to read it
        return RunningProfile("py-spy", argv, output, len(tree), folder)
    problem = perf_problem()
    if problem:
        return _problem(problem)
    elf = elf_symbols(exe)
    if elf is not None and not elf.names_functions:
        return _problem(
            f"{Path(exe).name} is stripped (no symbol table): perf could name no function;"
            " profile a build with symbols"
        )
    output = folder / "perf.data"
    pids = ",".join(str(p.pid) for p in tree)
    argv = ["perf", "record", "-e", "cpu-clock", "-F", str(PERF_RATE_HZ), "-p", pids]
    # Go keeps frame pointers, so walking them gives its whole stacks, cheaply; C built
    # with -O2 (Debian's nginx) does not, so its stacks are unwound from a copy of each
    # sample's stack with the binary's .eh_frame (kept when stripped), which costs more.
    argv += ["-g"] if elf is not None and elf.go else ["--call-graph", f"dwarf,{_DWARF_STACK}"]
    argv += ["-o", str(output), "--quiet"]
    return RunningProfile("perf", argv, output, len(tree), folder)


def find_py_spy() -> str | None:
    """py-spy beside this interpreter (the extra installs it there), or on PATH."""
    beside = Path(sys.executable).parent / "py-spy"
    if beside.exists():
        return str(beside)
    return shutil.which("py-spy")


def perf_problem() -> str:
    """Why ``perf`` cannot sample here, or "" when it can."""
    if shutil.which("perf") is None:
        return "perf is not installed: apt-get install linux-perf to profile a native server"
    try:
        paranoid = int(Path("/proc/sys/kernel/perf_event_paranoid").read_text())
    except (OSError, ValueError):
        paranoid = 2
    if os.geteuid() != 0 and paranoid > 1:
        return (
            f"perf may not sample other processes here (perf_event_paranoid = {paranoid}):"
            " run as root, or sysctl kernel.perf_event_paranoid=1"
        )
    return ""


@dataclass(frozen=True, slots=True)
class ElfSymbols:
    """What an ELF binary tells perf to name its functions with."""

    symtab: bool  # a full symbol table (not stripped)
    exported_functions: int  # functions defined in .dynsym (kept when stripped)
    go: bool  # built by Go (which keeps frame pointers)

    @property
    def names_functions(self) -> bool:
        """perf can name some of its functions: from its symbol table, or, stripped, from
        the functions it exports (Debian's nginx exports its ngx_ ones for modules)."""
        return self.symtab or self.exported_functions > 0


def elf_symbols(exe: str) -> ElfSymbols | None:
    """The symbols of ELF file ``exe`` (None: not an ELF file we can read)."""
    try:
        data = Path(exe).read_bytes()
    except OSError:
        return None
    if data[:4] != b"\x7fELF" or data[4] not in (1, 2) or data[5] not in (1, 2):
        return None
    wide = data[4] == 2
    order = "<" if data[5] == 1 else ">"
    try:
        if wide:
            (shoff,) = struct.unpack_from(order + "Q", data, 0x28)
            entsize, count, names_at = struct.unpack_from(order + "HHH", data, 0x3A)
        else:
            (shoff,) = struct.unpack_from(order + "I", data, 0x20)
            entsize, count, names_at = struct.unpack_from(order + "HHH", data, 0x2E)
        header = order + ("IIQQQQIIQQ" if wide else "IIIIIIIIII")
        sections = [struct.unpack_from(header, data, shoff + i * entsize) for i in range(count)]
        strings_at = sections[names_at][4] if names_at < count else 0
    except struct.error:
        return None

    def name(section: tuple[int, ...]) -> bytes:
        start = strings_at + section[0]
        return data[start : data.find(b"\0", start)]

    names = {name(s) for s in sections}
    exported = 0
    for section in sections:
        if section[1] != 11:  # SHT_DYNSYM
            continue
        offset, size, step = section[4], section[5], section[9]
        for at in range(offset + step, offset + size, step or size or 1):  # 0: undefined
            # st_info and st_shndx: after st_name (and, 32-bit, st_value and st_size).
            info, shndx = struct.unpack_from(order + "BxH", data, at + (4 if wide else 12))
            exported += (info & 0xF) == 2 and shndx != 0  # STT_FUNC, defined here
    return ElfSymbols(
        symtab=b".symtab" in names,
        exported_functions=exported,
        go=b".go.buildinfo" in names or b".note.go.buildid" in names,
    )


_PY_SPY_PROCESS = re.compile(r'^process \d+:".*"$')


def fold_py_spy(text: str) -> dict[str, int]:
    """py-spy's raw output (``frame;frame count`` per line, root first) as a dict. The
    frames of the processes a stack ran in (``process 4242:"python -m gunicorn ..."``,
    the server's, then a worker's) become ``[server process]`` and ``[child process]``:
    two runs' (other pids, other ports on the command line) and two workers' stacks add
    up, and which process spent the time still shows."""
    folded: Counter[str] = Counter()
    for line in text.splitlines():
        stack, _, count = line.rpartition(" ")
        if stack and count.isdigit():
            folded[";".join(_py_spy_frames(stack.split(";")))] += int(count)
    return dict(folded)


def _py_spy_frames(frames: list[str]) -> list[str]:
    out: list[str] = []
    for frame in frames:
        if _PY_SPY_PROCESS.match(frame):
            frame = "[child process]" if out else "[server process]"
        out.append(frame)
    return out


def fold_perf_script(text: str) -> dict[str, int]:
    """``perf script -F comm,ip,sym,dso`` output folded: each sample a stack of function
    names from the root, under its process's name (``nginx;main;...;ngx_http_...``)."""
    folded: Counter[str] = Counter()
    for block in text.split("\n\n"):
        lines = [line for line in block.splitlines() if line.strip()]
        if not lines:
            continue
        comm = lines[0].strip().rstrip(":").strip() or "[unknown]"
        frames = [_perf_frame(line) for line in lines[1:]]
        frames.reverse()  # perf prints the leaf first
        folded[";".join([comm, *frames])] += 1
    return dict(folded)


def _perf_frame(line: str) -> str:
    parts = line.split(None, 1)
    rest = parts[1] if len(parts) > 1 else parts[0]
    symbol, _, dso = rest.rpartition(" (")
    symbol = _PERF_OFFSET.sub("", symbol.strip())
    if not symbol or symbol == "[unknown]":
        where = Path(dso.rstrip(")")).name.strip("[]")
        return f"[{where or 'unknown'}]"
    return symbol


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


def _problem(text: str, tool: str = "") -> ServerProfile:
    return ServerProfile(tool=tool, problem=text)
