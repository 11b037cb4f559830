"""What the asyncio engine's HTTP/2 steady state costs per response in Python, with no I/O
(issue 35): a real ``ClosedRun`` and ``H2Connection`` (10 streams) whose transport is a
stand-in, fed the reads the Go h2c server sends in the steady state of the ``h2`` row of
``bench_marginal_cpu.py`` as uvloop would hand them over.

    python benchmarks/bench_h2_python.py [--repeat 30] [--shape go|whole|real]

Go's net/http flushes each response's HEADERS as it is ready and the DATA frames of the
responses later, so its commonest reads (measured at 10 x 10: 0.68 reads a response) are a
lone HEADERS frame and a run of DATA frames ending several streams. ``--shape go`` feeds
each batch of 10 streams as 10 lone HEADERS reads then one read of their 10 DATA frames
(``--data-per-read N``: reads of N of them; in a busy end-to-end run a read ends 2-3);
``--shape whole`` one read of HEADERS + DATA for all 10 (a server that batches its writes);
``--shape real`` the mix of reads counted in an end-to-end run (see ``_REAL_HEADS``).
Each batch ends 10 streams; the run opens 10 more, written in one ``write``. Prints the
lowest of ``--repeat`` passes, in ns per response. Compare two versions of the engine by
running it with ``PYTHONPATH`` on each one's ``src/``, in alternating processes.
"""

from __future__ import annotations

import argparse
import asyncio
import time

import hpack

from pytest_netbench._engine.asyncio_io.engine import ClosedRun
from pytest_netbench._engine.asyncio_io.h2_connection import H2Connection
from pytest_netbench._engine.rules.exchange import build_exchange
from pytest_netbench._engine.rules.share import split_load
from pytest_netbench._input.spec import http_spec
from pytest_netbench._proto import h2_frames as f

STREAMS = 10
BATCHES = 100  # a pass: 1000 responses
BODY = b"Hello, World!"


class _Transport:
    """Takes what the client writes and drops it."""

    writes = 0

    def write(self, data: bytes) -> None:
        self.writes += 1

    def is_closing(self) -> bool:
        return False

    def get_extra_info(self, name: str) -> None:
        return None

    def abort(self) -> None:
        pass

    def close(self) -> None:
        pass


def response_block() -> tuple[bytes, bytes]:
    """Go's response header block: the first (its fields join the table), then the one it
    sends every time after (every field indexed)."""
    encoder = hpack.Encoder()
    fields = [
        (":status", "200"),
        ("content-type", "text/plain; charset=utf-8"),
        ("content-length", str(len(BODY))),
        ("date", "Sun, 29 Nov 2026 14:00:00 GMT"),
    ]
    return encoder.encode(fields), encoder.encode(fields)


# ``--shape real``: how many frames each read of a batch holds, as the engine's reads
# were counted in the ``h2`` row (30,700 responses, 0.75 reads a response: a lone HEADERS
# 51 % of reads, 2-3 HEADERS 12 %, 1-4 DATA frames 25 %, all 10 of both 3 %): two batches
# read as below, the third as one read of all 10 HEADERS and DATA frames.
_REAL_HEADS = (1, 1, 1, 1, 2, 1, 3)
_REAL_DATA = (3, 2, 3, 2)


def _cut(frames: list[bytes], sizes: tuple[int, ...]) -> list[bytes]:
    reads, at = [], 0
    for n in sizes:
        reads.append(b"".join(frames[at : at + n]))
        at += n
    assert at == len(frames)
    return reads


def batch_reads(first_id: int, block: bytes, shape: str, per_read: int) -> list[bytes]:
    ids = range(first_id, first_id + 2 * STREAMS, 2)
    heads = [f.frame(f.HEADERS, f.END_HEADERS, i, block) for i in ids]
    data = [f.frame(f.DATA, f.END_STREAM, i, BODY) for i in ids]
    bodies = [b"".join(data[i : i + per_read]) for i in range(0, STREAMS, per_read)]
    if shape == "real":
        if first_id // (2 * STREAMS) % 3 == 2:
            return [b"".join(heads) + b"".join(data)]
        return _cut(heads, _REAL_HEADS) + _cut(data, _REAL_DATA)
    if shape == "whole":
        return [
            b"".join(
                h + f.frame(f.DATA, f.END_STREAM, i, BODY) for h, i in zip(heads, ids, strict=True)
            )
        ]
    return [*heads, *bodies]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--shape", choices=("go", "whole", "real"), default="go")
    parser.add_argument(
        "--data-per-read", type=int, default=STREAMS, help="go: DATA frames in each read"
    )
    args = parser.parse_args()

    spec = http_spec(
        "http://127.0.0.1:9/", connections=1, protocol="h2", streams=STREAMS, duration=1000
    )
    loop = asyncio.new_event_loop()
    start = time.monotonic_ns() - 10**9  # the window opened a second ago: measured
    run = ClosedRun(loop, spec, build_exchange(spec), split_load(spec)[0], start, None)
    conn = H2Connection(run)
    assert type(conn) is H2Connection
    transport = _Transport()
    # The connection made: the preface written, then the run's first requests (as
    # ClosedRun.connected takes them), their streams open in the same write.
    conn.connection_made(transport)  # type: ignore[arg-type]
    assert len(conn.pending) == STREAMS, len(conn.pending)
    first_block, block = response_block()
    feed = conn.data_received
    feed(f.settings_frame([]) + f.SETTINGS_ACK)
    next_id = 1
    # The first batch: the block that fills the table, then the steady one.
    first = batch_reads(next_id, block, args.shape, args.data_per_read)
    first[0] = f.frame(f.HEADERS, f.END_HEADERS, next_id, first_block) + first[0][9 + len(block) :]
    for data in first:
        feed(data)
    next_id += 2 * STREAMS
    passes = []
    for _ in range(args.repeat + 1):  # the first pass warms up
        reads = []
        for _ in range(BATCHES):
            reads += batch_reads(next_id, block, args.shape, args.data_per_read)
            next_id += 2 * STREAMS
        passes.append(reads)
    best = float("inf")
    for i, reads in enumerate(passes):
        began = time.perf_counter_ns()
        for data in reads:
            feed(data)
        if i:
            best = min(best, time.perf_counter_ns() - began)
    responses = STREAMS * BATCHES
    assert not conn.broken and run.completed == responses * (args.repeat + 1) + STREAMS, (
        run.completed,
        conn.broken,
    )
    print(
        f"{best / responses:.0f} ns per response ({args.shape} reads; {transport.writes} writes;"
        f" lowest of {args.repeat} passes)"
    )
    loop.close()


if __name__ == "__main__":
    main()
