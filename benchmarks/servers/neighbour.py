"""A noisy neighbour, as a shared CI runner has: ``python neighbour.py SEED``.

Copies and hashes 16 MiB pieces of a 32 MiB buffer (CPU, memory bandwidth and cache) for
a random 0.05-2 s, then idles for another random 0.05-2 s, forever: about half a core on
average, in bursts no trial can predict. The seed makes the bursts the same from run to run.
"""

from __future__ import annotations

import hashlib
import random
import sys
import time

HALF = 16 << 20


def main(seed: int) -> None:
    rng = random.Random(seed)
    buffer = bytes(2 * HALF)
    while True:
        busy_until = time.monotonic() + rng.uniform(0.05, 2.0)
        while time.monotonic() < busy_until:
            # The slices copy on purpose: memory traffic is part of a neighbour's noise.
            hashlib.sha256(buffer[rng.randrange(0, HALF) :][:HALF]).digest()
        time.sleep(rng.uniform(0.05, 2.0))


if __name__ == "__main__":
    main(int(sys.argv[1]))
