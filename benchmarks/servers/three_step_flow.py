"""The three-step flow of bench_vs_locust.py, as netbench runs it: a session logs in (POST
with a JSON body; the answer's text is the token), then makes two GETs with the token.

``python three_step_flow.py URL USERS SECONDS CLIENT`` (CLIENT: httpx or lean) runs it
(the benchmark pins it to the generator core) and prints one JSON line: ok responses,
errors, and the window's length.
"""

from __future__ import annotations

import json
import sys
from typing import Any


async def three_steps(client: Any) -> None:
    r = await client.post("/login", json={"user": "u1", "pw": "x"}, extensions=_LOGIN)
    auth = {"Authorization": f"Bearer {r.text}"}
    await client.get("/items", headers=auth)
    await client.get("/items/1", headers=auth, extensions=_ITEM)


_LOGIN = {"netbench_step": "login"}
_ITEM = {"netbench_step": "item"}


def main() -> None:
    from pytest_netbench import flow

    url, users, seconds, client = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
    r = flow(three_steps, url, users=users, duration=seconds, client=client)
    print(json.dumps({"ok": r.ok, "errors": r.errors_total, "window_s": r.duration_s}))


if __name__ == "__main__":
    main()
