"""The ``netbench`` command as a real subprocess: run to its end, or watched while it runs
(its output read as it comes, so a test can wait for a line and then send a signal)."""

from __future__ import annotations

import contextlib
import json
import re
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

PACED_SERVER = Path(__file__).parents[1] / "experiment" / "paced_server.py"
WARMING_SERVER = PACED_SERVER.with_name("warming_server.py")


@contextlib.contextmanager
def paced_server(rate: float) -> Iterator[str]:
    """The URL of a server answering at most ``rate`` requests a second, first in first
    out (tests/experiment/paced_server.py), killed on exit."""
    with _server_script(PACED_SERVER, rate) as url:
        yield url


@contextlib.contextmanager
def warming_server(slow_rate: float, fast_rate: float, slow_for_s: float) -> Iterator[str]:
    """The URL of a server at ``slow_rate`` req/s for its first ``slow_for_s`` seconds,
    then at ``fast_rate`` (tests/experiment/warming_server.py), killed on exit."""
    with _server_script(WARMING_SERVER, slow_rate, fast_rate, slow_for_s) as url:
        yield url


@contextlib.contextmanager
def _server_script(script: Path, *args: float) -> Iterator[str]:
    proc = subprocess.Popen(
        [sys.executable, str(script), *map(str, args)],
        stdout=subprocess.PIPE,
        cwd=script.parent,  # the warming server imports the paced one
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 15)
        match = re.search(
            rb"NETBENCH_LISTENING port=(\d+)", proc.stdout.readline() if ready else b""
        )
        if match is None:
            raise AssertionError(f"the test server {script.name} did not start")
        yield f"http://127.0.0.1:{int(match.group(1))}/"
    finally:
        proc.kill()
        proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()


def netbench_command(*args: str) -> list[str]:
    """The installed console script (or the module when the script is not on PATH)."""
    script = shutil.which("netbench")
    return [*([script] if script else [sys.executable, "-m", "pytest_netbench.cli"]), *args]


def netbench(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        netbench_command(*args), capture_output=True, text=True, timeout=timeout, check=False
    )


def load_json(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


class Watched:
    """A running ``netbench`` whose stdout and stderr are collected by two threads."""

    def __init__(self, *args: str, ignore_sigint: bool = False) -> None:
        # Set either way: the suite itself may run with SIGINT ignored (nohup, `cmd &`),
        # which the child would inherit, and a user at a terminal has it at the default.
        disposition = signal.SIG_IGN if ignore_sigint else signal.SIG_DFL

        def set_sigint() -> None:
            signal.signal(signal.SIGINT, disposition)

        self.process = subprocess.Popen(
            netbench_command(*args),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=set_sigint,
        )
        self._text = {"stdout": "", "stderr": ""}
        self._lock = threading.Lock()
        assert self.process.stdout is not None and self.process.stderr is not None
        self._readers = [
            threading.Thread(target=self._read, args=("stdout", self.process.stdout)),
            threading.Thread(target=self._read, args=("stderr", self.process.stderr)),
        ]
        for reader in self._readers:
            reader.start()

    def _read(self, name: str, stream: IO[bytes]) -> None:
        while chunk := stream.read1(4096):  # type: ignore[attr-defined]
            with self._lock:
                self._text[name] += chunk.decode(errors="replace")
        stream.close()

    @property
    def stdout(self) -> str:
        with self._lock:
            return self._text["stdout"]

    @property
    def stderr(self) -> str:
        with self._lock:
            return self._text["stderr"]

    def wait_for(self, name: str, text: str, timeout: float = 15.0) -> None:
        """Until ``text`` appears in the stream (or the process ends, or time runs out)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if text in self._text[name]:
                    return
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(
            f"{text!r} never appeared on {name}\nstdout: {self.stdout}\nstderr: {self.stderr}"
        )

    def interrupt(self) -> None:
        self.process.send_signal(signal.SIGINT)

    def finish(self, timeout: float = 15.0) -> int:
        try:
            code = self.process.wait(timeout)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            for reader in self._readers:
                reader.join(5)
        return code
