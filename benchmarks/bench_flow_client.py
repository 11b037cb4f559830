"""What httpx itself costs per request of a user flow, before any I/O.

A flow's requests go through ``httpx.AsyncClient`` (cookies, headers, JSON, auth) and then
netbench's transport. This measures the client's own share: the same three-step flow
(a POST with a JSON body that sets a cookie, then two GETs with a bearer token) through an
``AsyncClient`` whose transport answers at once from memory, beside the same loop calling
that transport directly with prebuilt requests. The difference is httpx's per-request CPU,
to set beside the engine's own (about 14 us per request on this class of machine, see
docs/architecture.md's hot path budget).

    python benchmarks/bench_flow_client.py [--sessions 3000] [--trials 3]

Needs the ``flows`` extra (httpx).
"""

from __future__ import annotations

import argparse
import asyncio
import time

import httpx

_LOGIN = httpx.Response(
    200,
    headers={"content-type": "application/json", "set-cookie": "sid=abc; Path=/"},
    content=b'{"token": "t0k"}',
)


class MemoryTransport(httpx.AsyncBaseTransport):
    """Answers every request at once from memory: no sockets, no parsing."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200,
            headers=_LOGIN.headers,
            content=b'{"token": "t0k"}',
            request=request,
        )


async def through_client(sessions: int) -> float:
    """CPU seconds per request of the flow through httpx.AsyncClient."""
    async with httpx.AsyncClient(
        base_url="http://127.0.0.1:8080", transport=MemoryTransport()
    ) as client:
        start = time.thread_time()
        for _ in range(sessions):
            r = await client.post("/login", json={"user": "u1", "pw": "x"})
            token = r.json()["token"]
            auth = {"Authorization": f"Bearer {token}"}
            await client.get("/items", headers=auth)
            await client.get("/items/7", headers=auth)
        return (time.thread_time() - start) / (3 * sessions)


async def transport_only(sessions: int) -> float:
    """CPU seconds per request of the same loop calling the transport with ready requests."""
    transport = MemoryTransport()
    requests = [
        httpx.Request("POST", "http://127.0.0.1:8080/login", json={"user": "u1", "pw": "x"}),
        httpx.Request("GET", "http://127.0.0.1:8080/items"),
        httpx.Request("GET", "http://127.0.0.1:8080/items/7"),
    ]
    start = time.thread_time()
    for _ in range(sessions):
        for request in requests:
            await transport.handle_async_request(request)
    return (time.thread_time() - start) / (3 * sessions)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=3000)
    parser.add_argument("--trials", type=int, default=3)
    args = parser.parse_args()
    print(f"httpx {httpx.__version__}: CPU us per request, {args.sessions} sessions of 3 steps")
    print(f"{'trial':>5} {'client':>10} {'transport':>10} {'httpx adds':>11}")
    for trial in range(args.trials):
        client = asyncio.run(through_client(args.sessions)) * 1e6
        bare = asyncio.run(transport_only(args.sessions)) * 1e6
        print(f"{trial:>5} {client:>10.1f} {bare:>10.1f} {client - bare:>11.1f}")


if __name__ == "__main__":
    main()
