"""What rendering requests from templates costs, per request, off the socket.

A micro-benchmark of ``RequestSource.take`` (``_proto/source.py``) alone, no server and no
loop: the CPU one share spends to have its next requests ready, as ns per request, for a
fixed request (the bytes handed out again) and for templates filled from feeders. Issue 18's
budget is a whole load at most 1.10x the CPU per request of the same load with one fixed
request; at about 7 us per request on the fused path, rendering has about 0.7 us.

    python benchmarks/bench_render.py [--rows 100000] [--batch 256] [--repeat 5]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import timeit
from collections import deque
from pathlib import Path

from pytest_netbench import Request, feeders, http_spec
from pytest_netbench._model import LoadSpec
from pytest_netbench._proto.source import RequestSource

URL = "http://127.0.0.1:8080"


def write_rows(path: Path, rows: int) -> Path:
    with path.open("w") as file:
        file.write("id,category,name,email\n")
        file.writelines(
            f"{i},cat{i % 97},user number {i},user{i}@example.com\n" for i in range(rows)
        )
    return path


def cases(csv_path: Path) -> dict[str, LoadSpec]:
    json_body = '{"id": ${row.id}, "name": "${row.name}", "email": "${row.email}"}'
    two_and_json = {
        "method": "POST",
        "headers": {"Content-Type": "application/json"},
        "body": json_body,
    }
    return {
        "fixed request (no feeders)": http_spec(
            URL + "/items/cat1/1", headers={"Content-Type": "application/json"}
        ),
        "2-placeholder path + JSON body, CSV in file order": http_spec(
            URL + "/items/${row.category}/${row.id}",
            feeders={"row": feeders.csv(csv_path)},
            **two_and_json,  # type: ignore[arg-type]
        ),
        "the same, 2 workers (share 0 of 2)": http_spec(
            URL + "/items/${row.category}/${row.id}",
            feeders={"row": feeders.csv(csv_path)},
            workers=2,
            **two_and_json,  # type: ignore[arg-type]
        ),
        "the same, CSV shuffled": http_spec(
            URL + "/items/${row.category}/${row.id}",
            feeders={"row": feeders.csv(csv_path, order="shuffle")},
            **two_and_json,  # type: ignore[arg-type]
        ),
        "path from count() + randint(), no body": http_spec(
            URL + "/items/${n}?page=${p}",
            feeders={"n": feeders.count(), "p": feeders.randint(1, 100)},
        ),
        "uuid4() request-id header": http_spec(
            URL + "/", headers={"X-Request-Id": "${rid}"}, feeders={"rid": feeders.uuid4()}
        ),
        "mix of 3 kinds, CSV shared by 2": http_spec(
            URL,
            mix=[
                Request("GET", "/items/${row.category}/${row.id}", name="show", weight=3),
                Request("POST", "/orders", body=json_body, name="order"),
                Request("GET", "/health", name="health"),
            ],
            mix_order="weighted",
            feeders={"row": feeders.csv(csv_path)},
        ),
    }


def per_request_ns(spec: LoadSpec, batch: int, repeat: int) -> float:
    source = RequestSource(spec, 0, spec.workers)
    source.take(batch)  # opened, first chunk read
    rounds = max(1, 200_000 // batch)
    timer = timeit.Timer(lambda: source.take(batch), timer=time.process_time)
    best = min(timer.repeat(number=rounds, repeat=repeat))
    source.close()
    return best / (rounds * batch) * 1e9


def handout_ns(batch: int, repeat: int) -> float:
    """What the engine would pay per request to take ready bytes from a deque refilled a
    batch at a time (the proposal for the next step), beyond rendering them."""
    ready: deque[tuple[int, bytes]] = deque()
    items = [(0, b"x")] * batch

    def one_batch() -> None:
        ready.extend(items)
        pop = ready.popleft
        for _ in range(batch):
            pop()

    rounds = max(1, 200_000 // batch)
    timer = timeit.Timer(one_batch, timer=time.process_time)
    return min(timer.repeat(number=rounds, repeat=repeat)) / (rounds * batch) * 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        csv_path = write_rows(Path(tmp) / "rows.csv", args.rows)
        print(f"python {sys.version.split()[0]}, batches of {args.batch}, best of {args.repeat}")
        print(f"{'case':<52} {'ns/request':>10} {'of 7 us':>8}")
        for name, spec in cases(csv_path).items():
            ns = per_request_ns(spec, args.batch, args.repeat)
            print(f"{name:<52} {ns:>10.0f} {ns / 7000:>8.1%}")
        ns = handout_ns(args.batch, args.repeat)
        name = "engine hand-out: deque.extend + popleft (estimate)"
        print(f"{name:<52} {ns:>10.0f} {ns / 7000:>8.1%}")


if __name__ == "__main__":
    main()
