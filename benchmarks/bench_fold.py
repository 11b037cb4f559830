"""What the recorder's once-a-second fold costs per response (issue 35), with no I/O: a
real ``Recorder`` holding one second of the ``vary`` keep-alive load as the fused path
leaves it (latencies only, and the explicit phase samples of each connection's first
answer), folded by ``close_bucket`` into counters that already hold earlier seconds.

    python benchmarks/bench_fold.py [--responses 50000] [--connections 50] [--repeat 20]
                                    [--close]

The latencies are drawn around 0.9 ms with a tail and one outlier of 100 ms (a second of
the load measured on this machine held 28,661 responses over 3,522 distinct microsecond
values, up to 117 ms). Prints the lowest of ``--repeat`` folds, in ms per bucket and ns
per response; compare versions with ``PYTHONPATH`` on each one's ``src/``.

``--close``: a second of a new connection per request instead, as the raw path records
its known answers (``RawHttpConnection._answered``): a latency about 1.25 ms (50
connections at 40,000 a second), a connect about 30 us, a wait of the rest; counted in the
recorder's microsecond slots as recorded where it has them (``count_as_recorded``), else
appended (the engine before them).
"""

from __future__ import annotations

import argparse
import random
import time

from pytest_netbench._stats.recorder import Recorder


def second_of_load(
    recorder: Recorder, responses: int, connections: int, rng: random.Random
) -> None:
    latencies = recorder.latencies
    for _ in range(responses - 1):
        latencies.append(int(rng.lognormvariate(13.7, 0.35)))  # about 0.9 ms
    latencies.append(100_000_000)  # one outlier past 2 ms: the histogram's rounding runs
    phases = recorder.phases
    for value in latencies[:connections]:  # each connection's first answer, explicit
        phases.basis.append(value)
        phases.waits.append(value - 20_000)
        phases.receives.append(20_000)


def second_of_close(recorder: Recorder, responses: int, rng: random.Random) -> None:
    slots = getattr(recorder, "count_as_recorded", None)
    latency_slots, wait_slots, connect_slots = (None, None, None) if slots is None else slots()
    for _ in range(responses):
        connect = max(5_000, int(rng.gauss(30_000, 10_000)))
        latency = connect + max(20_000, int(rng.gauss(1_220_000, 300_000)))
        for value, counted, appended in (
            (connect, connect_slots, recorder.connects),
            (latency, latency_slots, recorder.latencies),
            (latency - connect, wait_slots, recorder.phases.waits),
        ):
            if counted is not None and value // 1000 < len(counted):
                counted[value // 1000] += 1
            else:
                appended.append(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--responses", type=int, default=50_000)
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--close", action="store_true", help="a connection per request")
    args = parser.parse_args()
    recorder = Recorder(time.monotonic_ns(), open_loop=False)
    rng = random.Random(35)

    def fill() -> None:
        if args.close:
            second_of_close(recorder, args.responses, rng)
        else:
            second_of_load(recorder, args.responses, args.connections, rng)

    fill()
    recorder.close_bucket()  # the run's counters hold a second already, as they do later
    best = float("inf")
    for _ in range(args.repeat):
        fill()
        began = time.perf_counter_ns()
        recorder.close_bucket()
        best = min(best, time.perf_counter_ns() - began)
    keys = len(recorder.outcome.latency_counts)
    print(
        f"{best / 1e6:.2f} ms per bucket, {best / args.responses:.0f} ns per response"
        f" ({args.responses} responses, {keys} distinct values so far; lowest of {args.repeat})"
    )


if __name__ == "__main__":
    main()
