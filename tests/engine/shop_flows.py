"""Flows at the top of a module, so worker processes (``workers=N``) can import them by
reference: the shop's shopper of test_flows.py."""

from __future__ import annotations

from typing import Any


async def shopper(client: Any) -> None:
    r = await client.post(
        "/login", json={"user": "u1", "pw": "x"}, extensions={"netbench_step": "login"}
    )
    auth = {"Authorization": f"Bearer {r.json()['token']}"}
    (await client.get("/items", headers=auth)).raise_for_status()
    (await client.post("/orders", headers=auth, json={"item": 1})).raise_for_status()


async def browser(client: Any) -> None:
    await client.get("/items")


async def misreader(client: Any) -> None:
    """A flow with a bug of its own: it reads a field the login answer lacks."""
    r = await client.post(
        "/login", json={"user": "u1", "pw": "x"}, extensions={"netbench_step": "login"}
    )
    r.json()["tokn"]
