"""User flows: virtual users running an async function of an httpx client, whose requests
go through the engine's own connections and rules (docs/flows.md)."""
