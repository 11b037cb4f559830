"""``python -m cpu_hog CPU NICE SECONDS``: spin on CPU ``CPU`` at niceness ``NICE`` for at
most ``SECONDS``: a neighbour that takes a core from a test host's generator. It never
outlives its bound, and the test that starts it kills it sooner."""

from __future__ import annotations

import os
import sys
import time


def main(argv: list[str]) -> None:
    cpu, nice, seconds = int(argv[0]), int(argv[1]), float(argv[2])
    os.sched_setaffinity(0, {cpu})
    os.setpriority(os.PRIO_PROCESS, 0, nice)  # below 0 needs root, as the namespaces do
    print("spinning", flush=True)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


if __name__ == "__main__":
    main(sys.argv[1:])
